import CPulse
import Foundation
import SceneSoundCapture
import SceneSoundCaptureGraph
import SceneSoundProtocol
import SceneSoundPulse
import SceneSoundTestSupport
import Synchronization

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
    /// How long it takes to take a new stream, as a daemon whose log line waited would.
    var startDelaySeconds = 0.0
    func captureDidStart(_ stream: CapturedStreamIdentity) {
        if startDelaySeconds > 0 { Thread.sleep(forTimeInterval: startDelaySeconds) }
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

extension PrivateSoundServer {
    /// Sinks carrying the capture's mark.
    func captureSinks() throws -> [[String: Any]] {
        try sinks(carrying: CaptureSinkProperties.sessionKey)
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
}

/// The daemon's `scenesound status --json`, decoded.
func daemonStatus(socket: String, environment: [String: String]) throws -> StatusDocument {
    try StatusSchema.decode(runTool(BuiltProducts.directory.appendingPathComponent("scenesound").path,
                                    ["status", "--json", "--socket", socket], display: nil, environment: environment))
}

/// Waits until the daemon's captured streams have settled: each queues at most 100 ms, and none
/// has dropped anything for a second (slips, the clocks' steady drift, go on all along). A stream
/// that starts as the daemon's output first wakes queues meanwhile — the tests' real sink, a null
/// sink that sat idle, renders up to 2 s ahead and takes a new stream only then (a real device
/// rewinds) — and the backlog is then trimmed. The seconds it took; nil when they did not settle within `timeoutSeconds`.
func waitForCapturedStreamsToSettle(timeoutSeconds: Double = 15, status: () -> StatusDocument?) -> Double? {
    let started = monotonicSeconds()
    var lastChange = started
    var last: [String: Double] = [:]
    let settled = waitUntil(timeoutSeconds: timeoutSeconds, pollSeconds: 0.1) {
        guard let streams = status()?.apps?.streams, !streams.isEmpty else { return false }
        let now = Dictionary(streams.map { ("\($0.application ?? "?") \($0.pid ?? 0) \($0.scene)", $0.droppedSeconds) }) { first, _ in first }
        if now != last { lastChange = monotonicSeconds() }
        last = now
        return streams.allSatisfy { $0.addedLatencySeconds <= 0.1 } && monotonicSeconds() - lastChange >= 1
    }
    return settled ? monotonicSeconds() - started : nil
}

struct CapturedStreamsUnsettled: Error, CustomStringConvertible { let description: String }

/// Waits for the captured streams to settle (`waitForCapturedStreamsToSettle`). Streams still
/// dropping late audio or queueing long after 15 s are a failure (thrown), unless the machine
/// disturbed the wait (`watch.disturbance`): then that is said, with each stream's queue and
/// drops, and the caller measures from there, its bars judging what is heard. The seconds it
/// took; nil when the machine kept the streams from settling.
func settleCapturedStreams(_ label: String, watch: MachineStallWatch, status: () -> StatusDocument?) throws -> Double? {
    if let seconds = waitForCapturedStreamsToSettle(status: status) { return seconds }
    let unsettled = (status()?.apps?.streams ?? []).map { stream in
        "\(stream.application ?? "?") \(stream.pid ?? 0): \(Int(stream.addedLatencySeconds * 1000)) ms queued, \(Int(stream.droppedSeconds * 1000)) ms dropped"
    }.sorted()
    let machine = watch.summary(from: 0, to: MachineStallWatch.nowSeconds())
    guard let why = watch.disturbance() else {
        throw CapturedStreamsUnsettled(description: "\(label): the captured streams did not settle in 15 s: \(unsettled); \(machine)")
    }
    print("\(label): the captured streams did not settle in 15 s while \(why) (\(machine)); measured from now: \(unsettled)")
    return nil
}

/// Every dry spell of each captured stream during the recording: `status` keeps a stream's
/// latest 16, so it is read every few seconds (by pid).
final class DrySpellCollector: Sendable {
    private let spellsByPID = Mutex<[Int: [StatusDocument.DrySpell]]>([:])
    private let stopped = Atomic<Bool>(false)
    private let wake = DispatchSemaphore(value: 0), finished = DispatchSemaphore(value: 0)

    init(status: @escaping @Sendable () -> StatusDocument?) {
        Thread { [self] in
            repeat {
                for stream in status()?.apps?.streams ?? [] {
                    guard let pid = stream.pid else { continue }
                    spellsByPID.withLock { byPID in
                        for spell in stream.recentDrySpells ?? [] where !(byPID[pid] ?? []).contains(spell) {
                            byPID[pid, default: []].append(spell)
                        }
                    }
                }
                if stopped.load(ordering: .relaxed) { break }
                _ = wake.wait(timeout: .now() + 3)
            } while true
            finished.signal()
        }.start()
    }

    /// Reads once more and stops (once).
    func stop() {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        wake.signal()
        finished.wait()
    }

    func seen(pid: Int) -> [StatusDocument.DrySpell] {
        spellsByPID.withLock { $0[pid] ?? [] }.sorted { $0.startedMonotonicSeconds < $1.startedMonotonicSeconds }
    }
}
