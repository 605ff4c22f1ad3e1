import SceneSoundEngine
import SceneSoundPipeWire

/// Where the rendered mix goes. A backend owns the thread that calls `Engine.render` (the
/// device's callback thread, or a clock-paced thread) and reports what it did.
public protocol OutputBackend: AnyObject, Sendable {
    /// Starts pulling blocks from the engine.
    func start(engine: Engine) throws
    /// Stops pulling and releases the device; idempotent. Finalises files.
    func stop() throws
    var status: OutputStatus { get }
    /// Resting: the backend stops asking the engine for audio (the stream corked, the node
    /// inactive, the clock thread parked), so that the sound card may sleep; not resting, it
    /// asks again at once. Called on the server's event loop when nothing has sounded for a
    /// while, and when new work arrives.
    func setResting(_ resting: Bool)
    /// The channels the output plays from now on: stereo, or a speaker layout's (5.1, 7.1)
    /// when the server renders for surround speakers. The backend reopens its stream with
    /// them if it must; until then `Engine.render(into:channelCount:)` fills what it has.
    /// Called on the server's event loop.
    func useChannels(_ layout: ChannelLayout)
}

extension OutputBackend {
    /// Stereo only (the null output, and any backend until it learns more).
    public func useChannels(_ layout: ChannelLayout) {}

    /// A file keeps its timeline: the wav output renders on, silence included.
    public func setResting(_ resting: Bool) {}
}

public struct OutputStatus: Sendable {
    public var kind: String
    public var target: String?
    public var connected: Bool
    /// Time from a sample leaving the engine to it being heard, as measured by the backend.
    public var latencySeconds: Double?
    /// The audio the backend keeps queued in its sound server (PulseAudio's target length).
    /// Steadier than `latencySeconds` through pipewire-pulse, whose reports wander between 15
    /// and 32 ms here while the queue itself stays put.
    public var queueTargetSeconds: Double?
    /// Blocks the listener missed: late for the sink (PipeWire: the graph's cycle played
    /// without us, or no buffer), the sound server's underflows (PulseAudio), or blocks
    /// finished after their time (the clocked null and wav outputs).
    public var underruns: Int
    /// The latest of them, newest first, where known (the PipeWire node: the graph's cycles).
    public var recentUnderruns: [PipeWireGraphNode.LateCycle]?
    /// When the latest underflow notices reached us, newest first (PulseAudio; CLOCK_MONOTONIC
    /// seconds).
    public var recentUnderflowsAtMonotonicSeconds: [Double]?
    /// Late blocks whose rendering itself overran the block (the rest: the thread could not run).
    public var overloadedBlocks: Int?
    /// The most CPU time one block took to render, and when since the output started (its
    /// first block).
    public var slowestBlock: (cpuSeconds: Double, atSeconds: Double)?
    public var reconnects: Int
    /// The rendering thread's scheduling (`SCHED_FIFO 20`, `nice -11`, `normal`); nil until it
    /// has rendered a block.
    public var renderThreadScheduling: String?
    /// The quantum a graph node asks of its graph now (PipeWire), in frames.
    public var graphQuantumFrames: Int?
    /// When the (near) miss behind each of its latest raises ended, newest first (CLOCK_MONOTONIC
    /// seconds).
    public var graphQuantumRaisesAtMonotonicSeconds: [Double]?
    /// The last error the backend met and survived, if any.
    public var lastError: String?

    public init(kind: String, target: String? = nil, connected: Bool = true, latencySeconds: Double? = nil,
                queueTargetSeconds: Double? = nil,
                underruns: Int = 0, overloadedBlocks: Int? = nil, slowestBlock: (cpuSeconds: Double, atSeconds: Double)? = nil,
                reconnects: Int = 0, renderThreadScheduling: String? = nil, lastError: String? = nil) {
        self.kind = kind
        self.target = target
        self.connected = connected
        self.latencySeconds = latencySeconds
        self.queueTargetSeconds = queueTargetSeconds
        self.underruns = underruns
        self.overloadedBlocks = overloadedBlocks
        self.slowestBlock = slowestBlock
        self.reconnects = reconnects
        self.renderThreadScheduling = renderThreadScheduling
        self.lastError = lastError
    }
}

public struct OutputError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// The `--output` value: `pipewire[:TARGET] | pulse[:SINK] | wav:PATH | null`.
public enum OutputSpecification: Equatable, Sendable, CustomStringConvertible {
    case pipewire(target: String?)
    case pulse(sink: String?)
    case wav(path: String)
    case null

    public static let accepted = "pipewire, pipewire:SINK, pulse, pulse:SINK, wav:PATH or null"

    public init?(_ text: String) {
        if text == "null" { self = .null }
        else if text == "pipewire" { self = .pipewire(target: nil) }
        else if text.hasPrefix("pipewire:"), text.count > 9 { self = .pipewire(target: String(text.dropFirst(9))) }
        else if text == "pulse" { self = .pulse(sink: nil) }
        else if text.hasPrefix("pulse:"), text.count > 6 { self = .pulse(sink: String(text.dropFirst(6))) }
        else if text.hasPrefix("wav:"), text.count > 4 { self = .wav(path: String(text.dropFirst(4))) }
        else { return nil }
    }

    public var description: String {
        switch self {
        case .pipewire(let target): return target.map { "pipewire:\($0)" } ?? "pipewire"
        case .pulse(let sink): return sink.map { "pulse:\($0)" } ?? "pulse"
        case .wav(let path): return "wav:\(path)"
        case .null: return "null"
        }
    }

    /// With no `--output`: PipeWire's own output when the session's server is PipeWire (its
    /// core socket answers, see `PipeWireSession.socketPath`), else the pulse output.
    public static func sessionDefault(pipeWireSocket: String?) -> OutputSpecification {
        pipeWireSocket != nil ? .pipewire(target: nil) : .pulse(sink: nil)
    }
}
