import Foundation
import SceneSoundClient
import SceneSoundProtocol

/// Runs blocking client code on a thread of its own and lets the test wait for its outcome.
final class BackgroundCall<Value: Sendable>: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var outcome: Result<Value, ClientError>?

    init(_ body: @escaping @Sendable () throws(ClientError) -> Value) {
        Thread.detachNewThread { [self] in
            let result = Result(catching: body)
            lock.lock()
            outcome = result
            lock.unlock()
            done.signal()
        }
    }

    /// The outcome, or nil if the call is still blocked after `seconds`.
    func result(waitingSeconds seconds: Double) -> Result<Value, ClientError>? {
        guard done.wait(timeout: .now() + seconds) == .success else { return nil }
        done.signal()  // later calls see the outcome at once
        lock.lock()
        defer { lock.unlock() }
        return outcome
    }
}

/// Collects what arrives on callbacks, for checking afterwards.
final class Recorder<Element: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var elements: [Element] = []
    private let arrivals = DispatchSemaphore(value: 0)

    func record(_ element: Element) {
        lock.lock()
        elements.append(element)
        lock.unlock()
        arrivals.signal()
    }

    /// Waits until `count` elements have arrived (false on timeout).
    func wait(for count: Int, seconds: Double = 5) -> Bool {
        let deadline = DispatchTime.now() + seconds
        while self.all.count < count {
            if arrivals.wait(timeout: deadline) == .timedOut { return false }
        }
        return true
    }

    var all: [Element] {
        lock.lock()
        defer { lock.unlock() }
        return elements
    }
}

let monoS16 = AudioFormat(sampleFormat: .s16le, rateHz: 48000, channels: 1)
let stereoS16 = AudioFormat(sampleFormat: .s16le, rateHz: 48000, channels: 2)

func playbackOptions(_ format: AudioFormat, loop: Bool = false) -> StreamOpen {
    StreamOpen(kind: .playback, format: format, loop: loop, sceneID: "music")
}

/// Distinct bytes, so that reordering or loss shows.
func pattern(_ count: Int) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 8) }
}
