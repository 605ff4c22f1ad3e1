import Synchronization

/// A single-producer, single-consumer ring of interleaved Float frames: the server's event
/// loop writes a stream's audio, the render thread reads it. Lock-free and wait-free; the
/// indices are running frame counts, so full and empty are never ambiguous.
public final class AudioRing: @unchecked Sendable {
    public let capacityFrames: Int
    public let channelCount: Int
    private let storage: UnsafeMutablePointer<Float>
    private let written = Atomic<Int>(0)
    private let read = Atomic<Int>(0)

    public init(capacityFrames: Int, channelCount: Int) {
        precondition(capacityFrames > 0 && channelCount > 0)
        self.capacityFrames = capacityFrames
        self.channelCount = channelCount
        storage = .allocate(capacity: capacityFrames * channelCount)
        storage.initialize(repeating: 0, count: capacityFrames * channelCount)
    }

    deinit { storage.deallocate() }

    /// Frames written so far (producer's count).
    public var framesWritten: Int { written.load(ordering: .acquiring) }
    /// Frames read so far (consumer's count).
    public var framesRead: Int { read.load(ordering: .acquiring) }
    public var availableFrames: Int { framesWritten - framesRead }
    public var freeFrames: Int { capacityFrames - availableFrames }

    /// Producer: appends up to `frames` interleaved frames; returns how many fitted.
    @discardableResult
    public func write(_ source: UnsafePointer<Float>, frames: Int) -> Int {
        let w = written.load(ordering: .relaxed)
        let r = read.load(ordering: .acquiring)
        let count = min(frames, capacityFrames - (w - r))
        guard count > 0 else { return 0 }
        let start = w % capacityFrames
        let first = min(count, capacityFrames - start)
        (storage + start * channelCount).update(from: source, count: first * channelCount)
        if first < count {
            storage.update(from: source + first * channelCount, count: (count - first) * channelCount)
        }
        written.store(w + count, ordering: .releasing)
        return count
    }

    /// Consumer: reads up to `frames` frames, de-interleaved into `channels` buffers
    /// (`channelCount` of them). Real-time safe.
    public func read(into channels: UnsafeMutablePointer<UnsafeMutablePointer<Float>>, frames: Int) -> Int {
        let r = read.load(ordering: .relaxed)
        let w = written.load(ordering: .acquiring)
        let count = min(frames, w - r)
        guard count > 0 else { return 0 }
        var index = r % capacityFrames
        for n in 0..<count {
            let frame = storage + index * channelCount
            for c in 0..<channelCount { channels[c][n] = frame[c] }
            index += 1
            if index == capacityFrames { index = 0 }
        }
        read.store(r + count, ordering: .releasing)
        return count
    }
}
