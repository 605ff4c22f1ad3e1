import CPulse
import Foundation
import SceneSoundCapture
import SceneSoundCaptureGraph
import SceneSoundPulse
import SceneSoundTestSupport

/// A linked app's audio from the graph's node to the consumer, as a recording would bring it (a
/// mono app recorded in stereo: both channels the same). Test-only: it allocates and locks on
/// the node's data thread.
final class GraphAudio: CapturedAudioWriter {
    let streamIndex: UInt32
    weak var consumer: RecordingConsumer?
    let monoAsStereo: Bool

    init(streamIndex: UInt32, consumer: RecordingConsumer, monoAsStereo: Bool) {
        self.streamIndex = streamIndex
        self.consumer = consumer
        self.monoAsStereo = monoAsStereo
    }

    func write(interleaved samples: UnsafeBufferPointer<Float>) {
        guard monoAsStereo else { return consumer?.captureDidReceive(streamIndex: streamIndex, interleaved: samples) ?? () }
        let stereo = samples.flatMap { [$0, $0] }
        stereo.withUnsafeBufferPointer { consumer?.captureDidReceive(streamIndex: streamIndex, interleaved: $0) }
    }
}

/// Collects what the capture delivers, per stream, and lets a test wait for it.
final class RecordingConsumer: AppCaptureConsumer, @unchecked Sendable {
    private let condition = NSCondition()
    private(set) var started: [CapturedStreamIdentity] = []
    private(set) var ended: [UInt32] = []
    private(set) var states: [AppCapture.State] = []
    private var audio: [UInt32: [Float]] = [:]

    /// Per stream, how many channels its audio interleaves.
    private var channelCounts: [UInt32: Int] = [:]
    /// On PipeWire, the graph the apps are linked into: it hands their audio to this consumer.
    var graph: GraphCapture?
    func captureDidStart(_ stream: CapturedStreamIdentity) {
        locked {
            started.append(stream)
            channelCounts[stream.streamIndex] = stream.channels.channelCount
        }
        graph?.feedDidStart(streamIndex: stream.streamIndex, feed: GraphAudio(
            streamIndex: stream.streamIndex, consumer: self, monoAsStereo: stream.isMono && stream.channels.channelCount == 2),
            isMono: stream.isMono)
    }
    func captureDidUpdate(_ stream: CapturedStreamIdentity) {}
    func captureDidReceive(streamIndex: UInt32, interleaved samples: UnsafeBufferPointer<Float>) {
        locked { audio[streamIndex, default: []].append(contentsOf: samples) }
    }
    func captureDidEnd(streamIndex: UInt32) {
        graph?.feedDidEnd(streamIndex: streamIndex)
        locked { ended.append(streamIndex) }
    }
    private(set) var left: [(stream: CapturedStreamIdentity, reason: String)] = []
    func captureDidLeave(_ stream: CapturedStreamIdentity, reason: String) { locked { left.append((stream, reason)) } }
    func captureStateDidChange(_ state: AppCapture.State) { locked { states.append(state) } }
    private(set) var realSinks: [String] = []
    /// Called before the capture sink becomes the default: a test's own output pins itself here.
    var onRealSink: ((String) -> Void)?
    func captureDidChooseRealSink(_ sinkName: String) {
        locked { realSinks.append(sinkName) }
        onRealSink?(sinkName)
    }

    /// What the capture put right (crossed or stray PipeWire links), as it said it.
    private(set) var repairsWhileLocked: [String] = []
    var repairs: [String] { locked { repairsWhileLocked } }
    func captureDidRepair(_ message: String) { locked { repairsWhileLocked.append(message) } }

    /// Each time the capture went to rest (true) or woke (false).
    private(set) var restChanges: [Bool] = []
    func captureDidRest(_ isResting: Bool) { locked { restChanges.append(isResting) } }
    var restsWhileLocked: Int { restChanges.filter { $0 }.count }
    var rests: Int { locked { restsWhileLocked } }
    var wakes: Int { locked { restChanges.filter { !$0 }.count } }

    private func locked<T>(_ body: () -> T) -> T {
        condition.lock()
        defer {
            condition.broadcast()
            condition.unlock()
        }
        return body()
    }

    func audio(of index: UInt32) -> [Float] { locked { audio[index] ?? [] } }
    var startedStreams: [CapturedStreamIdentity] { locked { started } }
    var statesWhileLockedCopy: [AppCapture.State] { locked { states } }
    var endedStreams: [UInt32] { locked { ended } }
    var leftStreams: [(stream: CapturedStreamIdentity, reason: String)] { locked { left } }

    /// Waits until `predicate` holds, woken by every delivery; false on timeout.
    func wait(timeoutSeconds: Double, until predicate: (RecordingConsumer) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        condition.lock()
        defer { condition.unlock() }
        while !predicate(self) {
            if !condition.wait(until: deadline) { return predicate(self) }
        }
        return true
    }

    /// Unlocked views for use inside `wait`'s predicate (which runs under the lock).
    var startedWhileLocked: [CapturedStreamIdentity] { started }
    var statesWhileLocked: [AppCapture.State] { states }
    func framesWhileLocked(_ index: UInt32) -> Int { (audio[index]?.count ?? 0) / (channelCounts[index] ?? 2) }
}

extension AppCapture.State {
    var isCapturing: Bool { if case .capturing = self { true } else { false } }
}

/// Test signals: seeded noise, a different sequence on each channel so swapped channels show.
enum TestSignal {
    /// Interleaved stereo, s16 values, `seconds` long.
    static func stereoNoise(seconds: Double, rateHz: Int = 48_000, seed: UInt64) -> [Int16] {
        var state = seed
        return (0 ..< Int(seconds * Double(rateHz)) * 2).map { _ in
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int16(truncatingIfNeeded: Int64(state >> 33) % 16384 - 8192)  // about -12 dBFS peak
        }
    }

    /// A 16-bit PCM WAV file.
    static func writeWAV(_ samples: [Int16], channels: Int = 2, rateHz: Int = 48_000, to url: URL) throws {
        var data = Data()
        func append<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) } }
        let byteCount = samples.count * 2
        data.append(contentsOf: Array("RIFF".utf8)); append(UInt32(36 + byteCount))
        data.append(contentsOf: Array("WAVEfmt ".utf8)); append(UInt32(16)); append(UInt16(1)); append(UInt16(channels))
        append(UInt32(rateHz)); append(UInt32(rateHz * channels * 2)); append(UInt16(channels * 2)); append(UInt16(16))
        data.append(contentsOf: Array("data".utf8)); append(UInt32(byteCount))
        samples.forEach { append($0) }
        try data.write(to: url)
    }

    /// Where `captured` (interleaved stereo float) lines up with `source` (interleaved s16),
    /// and the residual after aligning, in dB relative to the captured signal. nil if no
    /// stretch of 64 frames of the capture is found in the source.
    /// `mismatch`: for a failure's message, where the capture differs from the file (by more
    /// than the tolerance) — its first and last differing captured frame, how many, of how many,
    /// and where after the first the capture follows the file again. `break`: when it differs,
    /// whether that is one break in an otherwise exact copy — frames of the file skipped
    /// (`jumpFrames` > 0) or played again or held up (< 0) — and from which captured frame it
    /// is exact again to the end.
    typealias Match = (sourceFrame: Int, capturedFrame: Int, residualDecibels: Double, mismatch: String, break: CopyBreak?)

    static func match(captured: [Float], source: [Int16]) -> Match? {
        let reference = source.map { Float($0) / 32768 }
        let frames = captured.count / 2, sourceFrames = reference.count / 2
        // Start in the middle of the capture, clear of where it began and ended.
        let anchor = frames / 2
        guard anchor + 64 < frames else { return nil }
        let tolerance: Float = 2e-3
        candidates: for start in 0 ..< sourceFrames - 64 {
            for frame in 0 ..< 64 {
                for channel in 0 ..< 2 {
                    let difference = reference[2 * (start + frame) + channel] - captured[2 * (anchor + frame) + channel]
                    if abs(difference) > tolerance { continue candidates }
                }
            }
            let offset = start - anchor  // source frame = captured frame + offset
            var signal = 0.0, error = 0.0
            var differing: [Int] = []
            let compared = max(0, -offset) ..< min(frames, sourceFrames - offset)
            for frame in compared {
                for channel in 0 ..< 2 {
                    let c = Double(captured[2 * frame + channel])
                    let r = Double(reference[2 * (frame + offset) + channel])
                    if c == 0 && error == 0 && signal == 0 { continue }  // leading silence before the stream was taken
                    signal += c * c
                    error += (c - r) * (c - r)
                    if abs(c - r) > Double(tolerance), differing.last != frame { differing.append(frame) }
                }
            }
            // The break after the anchor, or before it (the copy exact from its start with
            // another offset).
            let copyBreak = differing.first.flatMap {
                CopyBreak.after($0, captured: captured, reference: reference, offset: offset, tolerance: tolerance)
                    ?? CopyBreak.before(differing: $0 ... differing.last!, captured: captured, reference: reference,
                                        offset: offset, tolerance: tolerance)
            }
            let mismatch = differing.isEmpty ? "none" : "captured frames \(differing.first!)...\(differing.last!) of \(compared): "
                + "\(differing.count) differ (the match anchored at captured frame \(anchor), source frame \(start)); "
                + (copyBreak.map(\.description) ?? "the capture does not follow the file again after the first; "
                    + whereInFile(capturedFrame: differing.first!, captured: captured, reference: reference,
                                  matchedOffset: offset, tolerance: tolerance))
            return (start, anchor, 10 * log10(max(error, 1e-30) / max(signal, 1e-30)), mismatch, copyBreak)
        }
        return nil
    }

    /// Where the 64 captured frames from `capturedFrame` are in the file, for a failure's
    /// message: a quantum lost, played twice or taken from elsewhere reads differently.
    static func whereInFile(capturedFrame: Int, captured: [Float], reference: [Float], matchedOffset: Int, tolerance: Float) -> String {
        let frames = min(64, captured.count / 2 - capturedFrame), sourceFrames = reference.count / 2
        let stretch = captured[(2 * capturedFrame) ..< (2 * (capturedFrame + frames))]
        if stretch.allSatisfy({ $0 == 0 }) { return "its first differing frames are silent" }
        candidates: for start in 0 ... max(0, sourceFrames - frames) {
            for index in 0 ..< 2 * frames where abs(reference[2 * start + index] - stretch[stretch.startIndex + index]) > tolerance {
                continue candidates
            }
            return "its first differing frames are the file's from frame \(start) (\(start - capturedFrame - matchedOffset) "
                + "frames from where the match puts them)"
        }
        return "its first differing frames are nowhere in the file"
    }

    /// One break in a copy: the capture differs from the file at `firstDifferingFrame`, then
    /// follows it again, exactly to its end, from `exactFromFrame`, `jumpFrames` further on in
    /// the file (negative: back, or held up by silence put in).
    struct CopyBreak: CustomStringConvertible {
        var firstDifferingFrame: Int
        var exactFromFrame: Int
        var jumpFrames: Int
        /// Whether the frames between were silence.
        var silentBetween: Bool

        var description: String {
            let how = jumpFrames > 0 ? "\(jumpFrames) frames of the file skipped" : "\(-jumpFrames) frames played again or put in"
            return "one break at captured frame \(firstDifferingFrame): \(how), the frames between \(silentBetween ? "silent" : "not silent"), "
                + "exact again from frame \(exactFromFrame) to the end"
        }

        /// When every frame from the first differing one to the last is off: whether up to
        /// some frame among them the capture is the file exactly at another offset (a break
        /// before the anchor, which the match's offset describes after it).
        static func before(differing: ClosedRange<Int>, captured: [Float], reference: [Float], offset: Int, tolerance: Float) -> CopyBreak? {
            let first = differing.lowerBound
            guard first + 64 <= captured.count / 2 else { return nil }
            func matches(_ capturedFrame: Int, _ candidateOffset: Int) -> Bool {
                follows(capturedFrame, offset: candidateOffset, captured: captured, reference: reference, tolerance: tolerance)
            }
            for jump in -48_000 ... 48_000 where jump != 0 {
                let earlierOffset = offset + jump
                guard (first ..< first + 64).allSatisfy({ matches($0, earlierOffset) }) else { continue }
                var brokeAt = first + 64
                while brokeAt <= differing.upperBound, matches(brokeAt, earlierOffset) { brokeAt += 1 }
                let silent = captured[(2 * brokeAt) ..< (2 * (differing.upperBound + 1))].allSatisfy { $0 == 0 }
                return CopyBreak(firstDifferingFrame: brokeAt, exactFromFrame: differing.upperBound + 1, jumpFrames: -jump, silentBetween: silent)
            }
            return nil
        }

        /// Whether the captured frame is the file's frame `offset` further on, both channels.
        static func follows(_ capturedFrame: Int, offset: Int, captured: [Float], reference: [Float], tolerance: Float) -> Bool {
            let sourceFrame = capturedFrame + offset
            guard sourceFrame >= 0, sourceFrame < reference.count / 2 else { return false }
            return (0 ..< 2).allSatisfy { abs(reference[2 * sourceFrame + $0] - captured[2 * capturedFrame + $0]) <= tolerance }
        }

        /// Looks for where, after `frame`, 64 frames of the capture are found again in the file
        /// within a second either way, and whether the capture is exact from there on.
        static func after(_ frame: Int, captured: [Float], reference: [Float], offset: Int, tolerance: Float) -> CopyBreak? {
            let frames = captured.count / 2
            func differs(at capturedFrame: Int, _ newOffset: Int) -> Bool {
                !follows(capturedFrame, offset: newOffset, captured: captured, reference: reference, tolerance: tolerance)
            }
            for resume in stride(from: frame + 1, to: min(frames - 64, frame + 2_400), by: 64) {
                for jump in -48_000 ... 48_000 where jump != 0 {
                    let newOffset = offset + jump
                    guard !(0 ..< 64).contains(where: { differs(at: resume + $0, newOffset) }) else { continue }
                    guard !(resume ..< frames).contains(where: { differs(at: $0, newOffset) }) else { return nil }
                    var exactFrom = resume
                    while exactFrom > frame, !differs(at: exactFrom - 1, newOffset) { exactFrom -= 1 }
                    let silent = captured[(2 * frame) ..< (2 * exactFrom)].allSatisfy { $0 == 0 }
                    return CopyBreak(firstDifferingFrame: frame, exactFromFrame: exactFrom, jumpFrames: jump, silentBetween: silent)
                }
            }
            return nil
        }
    }

    static func rmsDecibels(_ samples: ArraySlice<Float>) -> Double {
        guard !samples.isEmpty else { return -.infinity }
        let power = samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(samples.count)
        return 10 * log10(max(power, 1e-30))
    }
}

/// Records a sink's monitor with parec into a raw float file. Kept on that sink: a recording
/// linked while its sink is the default follows the default on PipeWire (WirePlumber, as
/// PulseAudio does), and the capture makes its own sink the default.
final class MonitorRecording {
    private let child: ChildProcess
    private let file: URL

    init(server: PrivateSoundServer, sink: String = PrivateSoundServer.sinkName, file: URL) throws {
        self.file = file
        child = try server.startClient("/usr/bin/parec", [
            "--device=\(sink).monitor", "--property=node.dont-reconnect=true", "--format=float32le", "--channels=2", "--rate=48000", "--raw",
            "--latency-msec=20", file.path,
        ])
    }

    var frameCount: Int {
        var status = stat()
        return stat(file.path, &status) == 0 ? Int(status.st_size) / 8 : 0
    }

    /// Waits for `frames` frames, stops parec, returns all it recorded.
    func finish(afterFrames frames: Int, timeoutSeconds: Double) -> [Float] {
        _ = waitUntil(timeoutSeconds: timeoutSeconds) { frameCount >= frames }
        child.kill()
        defer { try? FileManager.default.removeItem(at: file) }
        guard let data = try? Data(contentsOf: file) else { return [] }
        return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }
}

/// The built executables (the test bundle sits next to them).
enum BuiltProducts {
    static var directory: URL { URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent() }
    static var guardExecutable: String { directory.appendingPathComponent("scenesound-capture-guard").path }
    static var testHost: String { directory.appendingPathComponent("scenesound-capture-test-host").path }
}

extension PrivateSoundServer {
    /// Sink inputs as (index, sink index, application name).
    func sinkInputs() throws -> [(index: Int, sink: Int, application: String)] {
        try list("sink-inputs").compactMap { input in
            guard let index = input["index"] as? Int, let sink = input["sink"] as? Int else { return nil }
            let properties = input["properties"] as? [String: Any] ?? [:]
            return (index, sink, properties["application.name"] as? String ?? "")
        }
    }

    /// Sinks carrying the capture's mark.
    func captureSinks() throws -> [[String: Any]] {
        try list("sinks").filter { ($0["properties"] as? [String: Any])?[CaptureSinkProperties.sessionKey] != nil }
    }

    /// Indices of the loaded module-null-sink modules whose arguments name the capture sink
    /// (`pactl list short modules`: pactl's JSON leaves the index out).
    func captureModules() throws -> [Int] {
        try pactl(["list", "short", "modules"]).split(separator: "\n").compactMap { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count >= 3, fields[1] == "module-null-sink",
                  fields[2].contains("sink_name=\(CaptureSinkProperties.sinkName)") else { return nil }
            return Int(fields[0])
        }
    }

    /// Ends a recording as a mixer app can (libpulse's kill call: pactl has none), blocking;
    /// true once the server said it did.
    func killSourceOutput(_ index: Int) -> Bool {
        guard let mainloop = pa_mainloop_new() else { return false }
        defer { pa_mainloop_free(mainloop) }
        guard let context = pa_context_new(pa_mainloop_get_api(mainloop), "scenesound-test") else { return false }
        defer {
            pa_context_disconnect(context)
            pa_context_unref(context)
        }
        guard pulseConnect(context, serverAddress: serverAddress) == 0 else { return false }
        let deadline = Date().addingTimeInterval(5)
        while pa_context_get_state(context) != PA_CONTEXT_READY {
            guard PA_CONTEXT_IS_GOOD(pa_context_get_state(context)) != 0, Date() < deadline else { return false }
            pa_mainloop_iterate(mainloop, 1, nil)
        }
        final class Answer { var succeeded: Bool? }
        let answer = Answer()
        guard let operation = pa_context_kill_source_output(context, UInt32(index), { _, success, userdata in
            Unmanaged<Answer>.fromOpaque(userdata!).takeUnretainedValue().succeeded = success != 0
        }, Unmanaged.passUnretained(answer).toOpaque()) else { return false }
        defer { pa_operation_unref(operation) }
        while answer.succeeded == nil, Date() < deadline { pa_mainloop_iterate(mainloop, 1, nil) }
        return answer.succeeded ?? false
    }

    func sinkOf(application: String) throws -> Int? {
        try sinkInputs().first { $0.application == application }?.sink
    }

    /// The channel map an application's stream plays with (pactl's `front-left,front-right,…`).
    func channelMapOf(application: String) throws -> String? {
        try list("sink-inputs").first {
            (($0["properties"] as? [String: Any])?["application.name"] as? String) == application
        }?["channel_map"] as? String
    }
}

func temporaryFile(_ name: String) -> URL {
    URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("capture-\(getpid())-\(UInt32.random(in: 0 ... .max))-\(name)")
}
