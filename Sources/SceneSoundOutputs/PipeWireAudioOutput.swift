import SceneSoundEngine
import SceneSoundPipeWire
import SceneSoundPlatform
import Synchronization

/// `--output pipewire[:TARGET]`: PipeWire itself, SceneSound's graph node asking for a quantum
/// of one block; the engine renders in the node's process callback on PipeWire's data thread
/// (real-time), the node's outputs linked by us to the sink. Reconnects by itself when PipeWire
/// goes away; the engine, and so every client's stream, goes on.
public final class PipeWireAudioOutput: OutputBackend, @unchecked Sendable {
    public let target: String?
    public let remote: String?
    private var pipewire: PipeWireOutput?
    private let lastEvent = Mutex<String?>(nil)
    private let onEvent: @Sendable (PipeWireOutput.Event) -> Void
    /// libpipewire's data thread renders: real-time already (the node raises it), or asked for
    /// it on its first block; what it runs with is reported.
    private let scheduling = RealtimeSchedulingRequest()
    private var startedMonotonicSeconds = 0.0

    private let inputSetCount: Int
    private let beforeRender: ((PipeWireGraphNode.Cycle) -> Bool)?

    /// `remote`: PipeWire's core socket (`PipeWireSession.socketPath`), nil = libpipewire's lookup.
    /// `inputSetCount` and `beforeRender`: the app capture's input sets on the node, and what
    /// hands them on in each cycle before the engine renders (`PipeWireOutput.start`).
    public init(target: String?, remote: String?, inputSetCount: Int = 1, beforeRender: ((PipeWireGraphNode.Cycle) -> Bool)? = nil,
                onEvent: @escaping @Sendable (PipeWireOutput.Event) -> Void = { _ in }) {
        self.target = target
        self.remote = remote
        self.inputSetCount = inputSetCount
        self.beforeRender = beforeRender
        self.onEvent = onEvent
    }

    /// How far the quantum asked of the graph may grow when its driver misses periods: 4 blocks
    /// (21 ms at 256 frames) outlast the stalls a busy virtual machine's host makes here, as
    /// PulseAudio's buffer grows after underruns (docs/CAPTURE.md, "Scale").
    static let quantumRaiseFactor = 4

    /// The graph node, once started: where the app capture links apps.
    public var graph: PipeWireGraphNode? { pipewire?.graph }

    public func start(engine: Engine) throws {
        var configuration = PipeWireOutput.Configuration(
            remote: remote, target: target, rateHz: Int(engine.configuration.sampleRateHz),
            blockFrames: engine.configuration.blockFrames)
        configuration.inputSetCount = inputSetCount
        configuration.maximumQuantumFrames = min(Self.quantumRaiseFactor * engine.configuration.blockFrames,
                                                 PipeWireGraphNode.largestQuantumFrames)
        let pipewire = PipeWireOutput(configuration: configuration) { [weak self] event in
            self?.record(event)
        }
        do {
            try pipewire.start(renderChannels: { [scheduling] buffer, _, channels in
                scheduling.ensureRealtimeOnCurrentThread()
                engine.render(into: buffer, channelCount: channels)
                engine.markDelivered(throughFrame: engine.renderedFrames)
            }, beforeRender: beforeRender)
        } catch {
            throw OutputError("\(error)")
        }
        self.pipewire = pipewire
        startedMonotonicSeconds = Double(MonotonicClock.nowNanoseconds()) * 1e-9
    }

    private func record(_ event: PipeWireOutput.Event) {
        switch event {
        case .connected: lastEvent.withLock { $0 = nil }
        case .disconnected(let reason): lastEvent.withLock { $0 = reason }
        case .failed(let reason): lastEvent.withLock { $0 = reason }
        case .reconnecting, .quantumChanged: break
        case .defaultSinkChanged(let sink): defaultSinkWatcher.withLock { $0 }?(sink.isEmpty ? nil : sink)
        }
        onEvent(event)
    }

    private let defaultSinkWatcher = Mutex<(@Sendable (String?) -> Void)?>(nil)

    /// Calls `changed` (on PipeWire's loop thread: quick, never calling into the output) with
    /// each default sink the node reads, nil when none; set before `start` to miss none.
    public func watchDefaultSink(_ changed: @escaping @Sendable (String?) -> Void) {
        defaultSinkWatcher.withLock { $0 = changed }
    }

    public func stop() throws { pipewire?.stop() }

    public func setResting(_ resting: Bool) { pipewire?.setActive(!resting) }

    /// Links the outputs of the layout's speakers (the node has all 8 from the start).
    public func useChannels(_ layout: ChannelLayout) {
        do {
            try pipewire?.useChannels(speakerNumbers: layout.speakers.map(\.rawValue))
        } catch {
            lastEvent.withLock { $0 = "cannot play \(layout): \(error)" }
        }
    }

    /// Plays on `sinkName` whatever the default sink becomes; nil: back to `target` as
    /// configured (or to the default). See `PipeWireOutput.pin(toSink:)`.
    public func pin(toSink sinkName: String?) { pipewire?.pin(toSink: sinkName) }

    public var status: OutputStatus {
        let connected = pipewire?.isConnected ?? false
        var status = OutputStatus(
            kind: "pipewire", target: (connected ? pipewire?.sinkName : nil) ?? target, connected: connected,
            latencySeconds: pipewire?.measuredLatencySeconds,
            queueTargetSeconds: pipewire?.quantumFrames.map { Double($0) / Double(pipewire!.configuration.rateHz) },
            underruns: (pipewire?.underrunCount ?? 0) + (pipewire?.lateCycleCount ?? 0),
            overloadedBlocks: pipewire?.overloadedCycleCount,
            slowestBlock: pipewire?.slowestProcess.map { ($0.cpuSeconds, $0.endedAtMonotonicSeconds - startedMonotonicSeconds) },
            reconnects: pipewire?.reconnectCount ?? 0, renderThreadScheduling: scheduling.obtained?.description,
            lastError: lastEvent.withLock { $0 })
        status.recentUnderruns = pipewire?.recentLateCycles
        status.graphQuantumFrames = pipewire?.askedQuantumFrames
        status.graphQuantumRaisesAtMonotonicSeconds = pipewire?.recentQuantumRaisesCausedAtMonotonicSeconds
        return status
    }
}
