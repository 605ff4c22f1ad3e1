import SceneSoundPlatform
import Synchronization

/// Plays through PipeWire itself as SceneSound's graph node (`PipeWireGraphNode`, a real-time
/// `pw_filter`; no `media.class`, so a mixer does not list it — the sink's volume is the
/// user's) asking the graph for a quantum of
/// one block (`node.latency`), rendered in the node's process callback on libpipewire's data
/// thread, through a block adapter when the graph's quantum is not the block. Its 8 outputs (by
/// speaker number) are made up front; those of the channels in use are linked by us to the
/// sink's ports of their channels — the default sink, followed, unless a target or pin names
/// one. Reconnects by itself when PipeWire goes away, with growing delays, forever; whatever
/// feeds `render` goes on.
public final class PipeWireOutput: @unchecked Sendable {
    public struct Configuration: Sendable {
        /// PipeWire's core socket (absolute path); nil = libpipewire's lookup.
        public var remote: String?
        /// A sink's `node.name` (or `object.serial`); nil = the default sink, followed.
        public var target: String?
        public var rateHz: Int
        /// Frames per `render` call, and the quantum asked of the graph.
        public var blockFrames: Int
        /// How far the quantum asked may be raised when the graph's driver misses periods
        /// (`PipeWireGraphNode.Configuration`); nil: never.
        public var maximumQuantumFrames: Int?
        public var applicationName: String
        public var iconName: String
        public var nodeName: String
        public var description: String
        /// `media.role`: what a mixer and the session manager's policies see.
        public var mediaRole: String
        /// The node's pool of input sets (8 ports each, made before it connects): 1 for the
        /// output alone; the app capture links apps into them (`graph`, `beforeRender`).
        public var inputSetCount: Int = 1

        public init(remote: String? = nil, target: String? = nil, rateHz: Int = 48_000, blockFrames: Int = 256,
                    applicationName: String = "SceneSound", iconName: String = "audio-headphones",
                    nodeName: String = "scenesound", description: String = "SceneSound spatial mix",
                    mediaRole: String = "Production") {
            self.remote = remote
            self.target = target
            self.rateHz = rateHz
            self.blockFrames = blockFrames
            self.applicationName = applicationName
            self.iconName = iconName
            self.nodeName = nodeName
            self.description = description
            self.mediaRole = mediaRole
        }
    }

    /// Delivered on the output's loop thread: quick, never blocking, never stopping the output.
    public enum Event: Sendable, Equatable {
        /// The stream is linked (first connection, after a reconnect, or a new pin); the sink's
        /// name when already known, else "".
        case connected(sinkName: String)
        /// PipeWire went away or could not be reached; retries follow until `stop()`. Once per outage.
        case disconnected(reason: String)
        case reconnecting(attempt: Int)
        /// Something a retry alone will not fix (an unknown sink); retries go on. Once per outage.
        case failed(String)
        /// The default sink as the node reads it ("" for none), whether it follows it or not:
        /// read anew after every client that comes or goes, so fresher than what a client of
        /// pipewire-pulse may be told (PipeWireGraphNode, graph_metadata.c).
        case defaultSinkChanged(sinkName: String)
        /// The quantum asked of the graph changed (`PipeWireGraphNode.Event.quantumChanged`).
        case quantumChanged(frames: Int, reason: String)
    }

    public let configuration: Configuration
    private let node: PipeWireGraphNode
    private let adapter: BlockAdapter
    private let lifecycle = Mutex<Bool>(false)  // started

    public init(configuration: Configuration, events: @escaping @Sendable (Event) -> Void = { _ in }) {
        self.configuration = configuration
        adapter = BlockAdapter(blockFrames: configuration.blockFrames)
        node = PipeWireGraphNode(configuration: .init(
            remote: configuration.remote, nodeName: configuration.nodeName, inputSetCount: configuration.inputSetCount,
            quantumFrames: configuration.blockFrames, maximumQuantumFrames: configuration.maximumQuantumFrames,
            rateHz: configuration.rateHz,
            stream: .init(applicationName: configuration.applicationName, iconName: configuration.iconName,
                          description: configuration.description, mediaRole: configuration.mediaRole),
            retrySeconds: (0.050, 1.0))) { event in
            switch event {
            case .outputsLinked(let sink): events(.connected(sinkName: sink))
            case .disconnected(let reason): events(.disconnected(reason: reason))
            case .reconnecting(let attempt): events(.reconnecting(attempt: attempt))
            case .failed(let what): events(.failed(what))
            case .defaultSinkChanged(let sink): events(.defaultSinkChanged(sinkName: sink))
            case .quantumChanged(let frames, let reason): events(.quantumChanged(frames: frames, reason: reason))
            default: break
            }
        }
    }

    /// Connects and keeps connecting; throws only for what cannot work at all (a second start,
    /// libpipewire unable to make its loop). `render` fills `blockFrames` interleaved stereo
    /// Float32 frames on PipeWire's data thread, under the real-time rules.
    public func start(render: @escaping (UnsafeMutablePointer<Float>, Int) -> Void) throws(PipeWireOutputError) {
        try start(renderChannels: { buffer, frames, _ in render(buffer, frames) })
    }

    /// As `start(render:)`, with the channel count passed to `render` (2 until `useChannels`
    /// changes it): it fills `frames` interleaved frames of that many channels.
    ///
    /// `beforeRender`, when given, runs first in every cycle on the data thread, with the
    /// cycle's input sets (under the same rules): the app capture hands them to the engine
    /// there, so a captured app is rendered in the cycle it played. It returns whether it
    /// handed on sound. Sound is rendered only into live outputs (`Cycle.liveOutputs`: linked,
    /// and the sink taking from them): in a cycle without, sound waits in its queue for up to
    /// `holdSeconds`, the engine not rendering, until the wake has linked them again and the
    /// sink takes from them. Rendered into an unlinked output, or one whose link the server
    /// had not yet made active (the app's parking sink still drove the cycle), a short sound's
    /// start was lost: 185 frames in one play of 10–25 after a rest.
    public func start(renderChannels render: @escaping (UnsafeMutablePointer<Float>, _ frames: Int, _ channels: Int) -> Void,
                      beforeRender: ((PipeWireGraphNode.Cycle) -> Bool)? = nil)
        throws(PipeWireOutputError) {
        guard configuration.rateHz > 0, configuration.blockFrames > 0, configuration.blockFrames <= configuration.rateHz else {
            throw .invalidConfiguration("rate \(configuration.rateHz) Hz and block \(configuration.blockFrames) frames")
        }
        if let target = configuration.target, target.isEmpty { throw .invalidConfiguration("target is empty (use nil for the default sink)") }
        try lifecycle.withLock { started throws(PipeWireOutputError) in
            guard !started else { throw .alreadyStarted }
            adapter.render = render
            let holdFrames = Int(Self.holdSeconds * Double(configuration.rateHz))
            var heldFrames = 0  // data thread only
            try node.start { [adapter] cycle in
                // Without the capture, whatever the engine would render may be sound.
                let sounding = beforeRender?(cycle) ?? true
                if cycle.liveOutputs != 0 || (!sounding && heldFrames == 0) || heldFrames >= holdFrames {
                    if cycle.liveOutputs != 0 { heldFrames = 0 }
                    adapter.fill(cycle)
                } else {
                    heldFrames += cycle.frames
                    for speaker in 0 ..< PipeWireGraphNode.outputChannels { cycle.output(speaker).update(repeating: 0, count: cycle.frames) }
                }
            }
            node.linkOutputs(toSink: configuration.target)
            started = true
        }
    }

    /// Disconnects and joins the loop thread; `render` is not called afterwards. Idempotent;
    /// not from an event handler.
    public func stop() {
        lifecycle.withLock { started in
            guard started else { return }
            node.stop()
            started = false
        }
    }

    private var running: Bool { lifecycle.withLock { $0 } }

    /// How long sound arriving while our outputs are unlinked waits for them (see `start`).
    static let holdSeconds = 0.25

    /// The graph node itself: for the app capture, which links apps into its input sets.
    public var graph: PipeWireGraphNode { node }

    /// Plays on `sinkName` and stays there whatever becomes the default sink (our links name
    /// it); nil goes back to the configured target (or to following the default). For the app
    /// capture, which makes its own sink the default. Relinks our outputs when it changes.
    public func pin(toSink sinkName: String?) {
        guard running else { return }
        node.linkOutputs(toSink: sinkName ?? configuration.target)
    }

    /// Plays these loudspeakers (numbered in the WAVE / SMPTE order: 0 FL, 1 FR, 2 FC, 3 LFE,
    /// 4 RL, 5 RR, 6 SL, 7 SR), in the order `render` fills them, from its next block on: the outputs of
    /// those speakers are linked (the 8 ports exist from the start; none is added while
    /// running); kept across reconnections and pins.
    public func useChannels(speakerNumbers: [Int]) throws(PipeWireOutputError) {
        guard (1...PipeWireGraphNode.outputChannels).contains(speakerNumbers.count),
              speakerNumbers.allSatisfy({ (0..<PipeWireGraphNode.outputChannels).contains($0) }),
              Set(speakerNumbers).count == speakerNumbers.count else {
            throw .invalidConfiguration("channels \(speakerNumbers): 1 to \(PipeWireGraphNode.outputChannels) distinct speakers numbered 0 to 7")
        }
        adapter.use(speakers: speakerNumbers)
        guard running else { return }
        node.linkOutputChannels(speakerNumbers)
    }

    /// Inactive: our outputs unlinked, so the sink may suspend; active again, linked again.
    public func setActive(_ active: Bool) {
        guard running else { return }
        node.setResting(!active)
    }

    /// The driver's delay to the device, the quantum, and what the block adapter holds
    /// rendered but not handed over, from the last cycle; nil while not linked.
    public var measuredLatencySeconds: Double? {
        guard let seconds = node.outputLatencySeconds else { return nil }
        return seconds + Double(adapter.pendingFrames) / Double(configuration.rateHz)
    }
    public var underrunCount: Int { node.underrunCount }
    public var lateCycleCount: Int { node.lateCycleCount }
    public var overloadedCycleCount: Int { node.overloadedCycleCount }
    public var recentLateCycles: [PipeWireGraphNode.LateCycle] { node.recentLateCycles }
    public var slowestProcess: (cpuSeconds: Double, endedAtMonotonicSeconds: Double)? { node.slowestProcess }
    public var reconnectCount: Int { node.reconnectCount }
    public var isConnected: Bool { node.isConnected }
    public var isStreaming: Bool { node.linkedSinkName != nil && node.outputLatencySeconds != nil }
    /// The graph's quantum at the last cycle, in frames.
    public var quantumFrames: Int? { node.quantumFrames }
    /// The quantum asked of the graph now (raised after missed periods), and how often raised.
    public var askedQuantumFrames: Int { node.askedQuantumFrames }
    public var quantumRaiseCount: Int { node.quantumRaiseCount }
    public var recentQuantumRaisesCausedAtMonotonicSeconds: [Double] { node.recentQuantumRaisesCausedAtMonotonicSeconds }
    /// The sink our outputs are linked to, as the registry shows it.
    public var sinkName: String? { running ? node.linkedSinkName : nil }
    /// The data thread ran real-time at its first cycle (nil before).
    public var dataThreadIsRealTime: Bool? { node.dataThreadIsRealTime }
}

/// From the engine's blocks to the graph's cycles: renders a block of `blockFrames` interleaved
/// frames when the last is used up, and hands its frames out per speaker to the cycle's outputs
/// (a cycle of another length than the block takes a part, or several). On the data thread;
/// `use(speakers:)` from anywhere, taken when the block in hand is used up: its rest still
/// plays on the speakers it was rendered for, so a change of speakers skips no frame (with a
/// quantum other than the block, dropping it jumped up to a block ahead mid-crossfade).
final class BlockAdapter: @unchecked Sendable {
    let blockFrames: Int
    var render: (UnsafeMutablePointer<Float>, Int, Int) -> Void = { buffer, frames, channels in
        buffer.update(repeating: 0, count: frames * channels)
    }
    private let block: UnsafeMutablePointer<Float>
    private var pendingStart: Int
    /// The speakers of the block in hand, in the order `render` filled them (capacity 8;
    /// `channels` of them).
    private let speakers: UnsafeMutablePointer<Int>
    private var channels = 2
    private var packedInUse: UInt64 = BlockAdapter.pack([0, 1])
    private let packedWanted = Atomic<UInt64>(BlockAdapter.pack([0, 1]))
    private let pending = Atomic<Int>(0)

    init(blockFrames: Int) {
        self.blockFrames = blockFrames
        block = .allocate(capacity: blockFrames * PipeWireGraphNode.outputChannels)
        block.initialize(repeating: 0, count: blockFrames * PipeWireGraphNode.outputChannels)
        pendingStart = blockFrames
        speakers = .allocate(capacity: PipeWireGraphNode.outputChannels)
        speakers.initialize(repeating: 0, count: PipeWireGraphNode.outputChannels)
        speakers[1] = 1
    }
    deinit { block.deallocate(); speakers.deallocate() }

    /// Count in the low 4 bits, then 4 bits per speaker.
    static func pack(_ speakers: [Int]) -> UInt64 {
        speakers.enumerated().reduce(UInt64(speakers.count)) { $0 | UInt64($1.element) << (4 + 4 * UInt64($1.offset)) }
    }
    func use(speakers: [Int]) { packedWanted.store(Self.pack(speakers), ordering: .releasing) }
    /// Rendered and not yet handed to the graph.
    var pendingFrames: Int { pending.load(ordering: .relaxed) }

    func fill(_ cycle: PipeWireGraphNode.Cycle) {
        var written = 0
        while written < cycle.frames {
            if pendingStart == blockFrames {
                takeWantedSpeakers()
                render(block, blockFrames, channels)
                pendingStart = 0
            }
            let count = min(blockFrames - pendingStart, cycle.frames - written)
            var used = 0
            for index in 0..<channels {
                used |= 1 << speakers[index]
                let output = cycle.output(speakers[index]) + written
                var source = block + pendingStart * channels + index
                for frame in 0..<count {
                    output[frame] = source.pointee
                    source += channels
                }
            }
            for speaker in 0..<PipeWireGraphNode.outputChannels where used & (1 << speaker) == 0 {
                (cycle.output(speaker) + written).update(repeating: 0, count: count)
            }
            pendingStart += count
            written += count
        }
        pending.store(blockFrames - pendingStart, ordering: .relaxed)
    }

    private func takeWantedSpeakers() {
        let wanted = packedWanted.load(ordering: .acquiring)
        guard wanted != packedInUse else { return }
        packedInUse = wanted
        channels = Int(wanted & 0xf)
        for index in 0..<channels { speakers[index] = Int((wanted >> (4 + 4 * UInt64(index))) & 0xf) }
    }
}

public enum PipeWireOutputError: Error, Equatable, CustomStringConvertible {
    case invalidConfiguration(String)
    case alreadyStarted
    case unavailable(String)

    public var description: String {
        switch self {
        case .invalidConfiguration(let why): "invalid PipeWire output configuration: \(why)"
        case .alreadyStarted: "the PipeWire output is already started; call stop() first"
        case .unavailable(let why): "PipeWire output: \(why)"
        }
    }
}

func withOptionalCString<R>(_ text: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
    guard let text else { return body(nil) }
    return text.withCString { body($0) }
}
