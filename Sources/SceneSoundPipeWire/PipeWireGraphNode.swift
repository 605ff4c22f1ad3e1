import CPipeWireGraph
import Glibc
import Synchronization

/// SceneSound as one real-time node of the PipeWire graph (issue 28; docs/CAPTURE.md, "The graph
/// path on PipeWire"): a `pw_filter` with eight outputs and a pool of input sets of 8 mono
/// ports (FL FR FC LFE RL RR SL SR), all made before it connects; apps' output ports linked into
/// a set by us, apps parked on a silent sink of ours through the `default` metadata. Built and
/// tested; not yet used by the daemon. No reconnection: a lost connection is reported once.
public final class PipeWireGraphNode: @unchecked Sendable {
    public static let channelsPerSet = Int(SS_PW_GRAPH_SET_CHANNELS)
    public static let maximumInputSets = Int(SS_PW_GRAPH_MAX_SETS)
    public static let outputChannels = Int(SS_PW_GRAPH_OUT_CHANNELS)
    /// PipeWire's own largest quantum (`clock.max-quantum`'s default).
    public static let largestQuantumFrames = 8192

    /// Who the node is, as pw-dump and pw-top show it (it has no `media.class`: no mixer lists it).
    public struct StreamIdentity: Sendable {
        public var applicationName: String, iconName: String, description: String, mediaRole: String
        public init(applicationName: String, iconName: String, description: String, mediaRole: String) {
            self.applicationName = applicationName; self.iconName = iconName
            self.description = description; self.mediaRole = mediaRole
        }
    }

    public struct Configuration: Sendable {
        /// PipeWire's core socket (absolute path); nil = libpipewire's lookup.
        public var remote: String?
        public var nodeName: String
        public var inputSetCount: Int
        /// The quantum asked of the graph (`node.latency`) at first; each cycle's own is in `Cycle`.
        public var quantumFrames: Int
        /// When the graph's driver misses a period (its thread kept off the CPU, as a virtual
        /// machine's host does), the quantum asked is doubled, up to this; it is halved again
        /// after `quantumRecoverySeconds` in which no cycle began late by the smaller quantum's
        /// length. Nil or `quantumFrames`: never raised.
        public var maximumQuantumFrames: Int?
        public var quantumRecoverySeconds: Double = 300
        public var rateHz: Int
        public var stream: StreamIdentity?
        /// Reconnection delays (the first, doubling up to the maximum); nil = none.
        public var retrySeconds: (initial: Double, maximum: Double)?
        public init(remote: String? = nil, nodeName: String = "scenesound", inputSetCount: Int = 32,
                    quantumFrames: Int = 256, maximumQuantumFrames: Int? = nil, rateHz: Int = 48_000, stream: StreamIdentity? = nil,
                    retrySeconds: (initial: Double, maximum: Double)? = nil) {
            self.remote = remote; self.nodeName = nodeName; self.inputSetCount = inputSetCount
            self.quantumFrames = quantumFrames; self.maximumQuantumFrames = maximumQuantumFrames; self.rateHz = rateHz; self.stream = stream; self.retrySeconds = retrySeconds
        }
    }

    /// Delivered on the node's loop thread; a handler may call the operations below (not `stop`).
    public enum Event: Sendable, Equatable {
        /// Our node and all its ports are in the registry.
        case nodeReady(nodeID: UInt32)
        /// A `Stream/Output/Audio` node (an app's playback) appeared: the moment to park it.
        case appAppeared(nodeID: UInt32, nodeName: String)
        /// That node went; its set, if any, is free again.
        case appGone(nodeID: UInt32)
        case linkAdded(linkID: UInt32)
        case linkRemoved(linkID: UInt32)
        case parkSinkReady(nodeID: UInt32)
        /// Lost or not reachable (once per outage); retried when the configuration asks.
        case disconnected(reason: String)
        case reconnecting(attempt: Int)
        /// Our outputs are linked to that sink (after a connection, a pin, new channels).
        case outputsLinked(sinkName: String)
        /// The sink asked for is not there (said once until linked): which, and the sinks there are.
        case failed(String)
        /// The server refused something of ours (a link, the park sink): the proxy's id, why.
        case refused(proxyID: UInt32, reason: String)
        /// The `default` metadata names another default sink ("" for none): the user's choice,
        /// or the session manager's, whether our outputs follow it or not.
        case defaultSinkChanged(sinkName: String)
        /// The quantum asked of the graph changed (raised after a missed period, or lowered
        /// again), and why.
        case quantumChanged(frames: Int, reason: String)
    }

    /// One cycle's buffers, valid during the render call only (on the data thread).
    public struct Cycle {
        let inputs: UnsafePointer<UnsafePointer<Float>?>
        let outputs: UnsafePointer<UnsafeMutablePointer<Float>?>
        public let inputSetCount: Int
        /// The cycle's quantum and rate, read from the graph's position this cycle.
        public let frames: Int
        public let rateHz: Int
        /// Our outputs that are linked to the sink this cycle, their links active (bit per
        /// speaker); 0: what is rendered now is heard by no one (resting, the links not made
        /// yet, or made but the sink not yet taking from them).
        public internal(set) var liveOutputs: UInt32 = 0xff
        /// A set's channel (0 FL … 7 SR): nil = silence (the set is free or that port unlinked).
        public func input(set: Int, channel: Int) -> UnsafePointer<Float>? {
            precondition(set < inputSetCount && channel < PipeWireGraphNode.channelsPerSet)
            return inputs[set * PipeWireGraphNode.channelsPerSet + channel]
        }
        /// The output of speaker number `channel` (0 FL … 7 SR), `frames` samples to fill; never nil.
        public func output(_ channel: Int) -> UnsafeMutablePointer<Float> { outputs[channel]! }
    }

    public struct Node: Sendable, Equatable {
        public let id: UInt32, serial: UInt64, processID: Int32, mediaClass: String, name: String
    }
    public struct Port: Sendable, Equatable {
        public let id: UInt32, nodeID: UInt32, isOutput: Bool, channel: String, name: String
    }
    public struct Link: Sendable, Equatable {
        public let id: UInt32, outputNodeID: UInt32, outputPortID: UInt32, inputNodeID: UInt32, inputPortID: UInt32
    }

    public let configuration: Configuration
    private let callbacks: Callbacks
    private var handle: OpaquePointer?
    private let lifecycle = Mutex<Bool>(false)  // started

    private final class Callbacks {
        let events: @Sendable (Event) -> Void
        var render: (Cycle) -> Void = { _ in }
        /// Set before the node starts, read on the data thread.
        var graph: OpaquePointer?
        let defaultSinkWatcher = Mutex<(@Sendable () -> Void)?>(nil)
        init(events: @escaping @Sendable (Event) -> Void) { self.events = events }
    }

    public init(configuration: Configuration, events: @escaping @Sendable (Event) -> Void = { _ in }) {
        self.configuration = configuration
        callbacks = Callbacks(events: events)
    }

    deinit { if let handle { ss_pw_graph_free(handle) } }

    /// Connects and makes the node with its whole port pool. `render` runs every cycle on the
    /// data thread under the real-time rules, and must fill both outputs.
    public func start(render: @escaping (Cycle) -> Void) throws(PipeWireOutputError) {
        guard (1 ... Self.maximumInputSets).contains(configuration.inputSetCount), configuration.quantumFrames > 0,
              configuration.rateHz > 0 else {
            throw .invalidConfiguration("\(configuration.inputSetCount) input sets, \(configuration.quantumFrames) frames at \(configuration.rateHz) Hz")
        }
        if let maximum = configuration.maximumQuantumFrames, maximum > configuration.quantumFrames {
            guard maximum <= Self.largestQuantumFrames, configuration.quantumRecoverySeconds > 0 else {
                throw .invalidConfiguration("maximum quantum \(maximum) frames (at most \(Self.largestQuantumFrames)), recovery after \(configuration.quantumRecoverySeconds) s (more than 0)")
            }
        }
        try lifecycle.withLock { started throws(PipeWireOutputError) in
            guard !started else { throw .alreadyStarted }
            callbacks.render = render
            let userdata = Unmanaged.passUnretained(callbacks).toOpaque()
            let stream = configuration.stream
            let made: OpaquePointer? = withOptionalCString(configuration.remote) { remote in
              withOptionalCString(stream?.applicationName) { application in
              withOptionalCString(stream?.iconName) { icon in
              withOptionalCString(stream?.description) { description in
              withOptionalCString(stream?.mediaRole) { role in
                configuration.nodeName.withCString { name in
                    var config = ss_pw_graph_config(remote: remote, node_name: name, input_sets: UInt32(configuration.inputSetCount),
                                                    quantum_frames: UInt32(configuration.quantumFrames),
                                                    maximum_quantum_frames: UInt32(configuration.maximumQuantumFrames ?? 0),
                                                    quantum_recovery_seconds: configuration.quantumRecoverySeconds, rate_hz: UInt32(configuration.rateHz),
                                                    application_name: application, icon_name: icon, description: description, media_role: role,
                                                    retry_initial_seconds: configuration.retrySeconds?.initial ?? 0,
                                                    retry_maximum_seconds: configuration.retrySeconds?.maximum ?? 0)
                    return ss_pw_graph_new(&config, { userdata, inputs, sets, outputs, frames, rate in
                        let callbacks = Unmanaged<Callbacks>.fromOpaque(userdata!).takeUnretainedValue()
                        callbacks.render(Cycle(inputs: inputs!, outputs: outputs!, inputSetCount: Int(sets), frames: Int(frames), rateHz: Int(rate),
                                               liveOutputs: callbacks.graph.map { ss_pw_graph_live_outputs($0) } ?? 0))
                    }, { userdata, event, id, detail in
                        let callbacks = Unmanaged<Callbacks>.fromOpaque(userdata!).takeUnretainedValue()
                        let text = detail.map { String(cString: $0) } ?? ""
                        switch Int(event) {
                        case Int(SS_PW_GRAPH_NODE_READY.rawValue): callbacks.events(.nodeReady(nodeID: id))
                        case Int(SS_PW_GRAPH_APP_APPEARED.rawValue): callbacks.events(.appAppeared(nodeID: id, nodeName: text))
                        case Int(SS_PW_GRAPH_APP_GONE.rawValue): callbacks.events(.appGone(nodeID: id))
                        case Int(SS_PW_GRAPH_LINK_ADDED.rawValue): callbacks.events(.linkAdded(linkID: id))
                        case Int(SS_PW_GRAPH_LINK_REMOVED.rawValue): callbacks.events(.linkRemoved(linkID: id))
                        case Int(SS_PW_GRAPH_PARK_SINK_READY.rawValue): callbacks.events(.parkSinkReady(nodeID: id))
                        case Int(SS_PW_GRAPH_ERROR.rawValue): callbacks.events(.refused(proxyID: id, reason: text))
                        case Int(SS_PW_GRAPH_OUTPUTS_LINKED.rawValue): callbacks.events(.outputsLinked(sinkName: text))
                        case Int(SS_PW_GRAPH_RECONNECTING.rawValue): callbacks.events(.reconnecting(attempt: Int(text) ?? 0))
                        case Int(SS_PW_GRAPH_FAILED.rawValue): callbacks.events(.failed(text))
                        case Int(SS_PW_GRAPH_QUANTUM.rawValue): callbacks.events(.quantumChanged(frames: Int(id), reason: text))
                        case Int(SS_PW_GRAPH_DEFAULT_SINK.rawValue):
                            callbacks.events(.defaultSinkChanged(sinkName: text))
                            callbacks.defaultSinkWatcher.withLock { $0 }?()
                        default: callbacks.events(.disconnected(reason: text))
                        }
                    }, userdata)
                }
              }
              }
              }
              }
            }
            guard let made else { throw .unavailable("libpipewire could not make the graph node's loop and context") }
            callbacks.graph = made
            let result = ss_pw_graph_start(made)
            guard result == 0 else {
                ss_pw_graph_free(made)
                throw .unavailable("cannot connect the graph node (error \(-result))")
            }
            handle = made
            started = true
        }
    }

    /// Clears the metadata targets we wrote (waiting for the server), destroys our links, park
    /// sink and node, disconnects. `render` is not called afterwards. Idempotent; not from a handler.
    public func stop() {
        lifecycle.withLock { started in
            guard started, let handle else { return }
            ss_pw_graph_stop(handle)
            started = false
        }
    }

    private var live: OpaquePointer? { lifecycle.withLock { $0 ? handle : nil } }

    // MARK: Operations (on the loop thread, under its lock)

    /// Links the app node's output ports into `set` by channel (MONO to FL and FR), only the
    /// channels in `channels` (indices 0 FL … 7 SR; nil = every one the app has), once the
    /// session manager has linked the app (to the park sink); ports it adds later are linked as
    /// they come. Errno-style failure: EBUSY (another app's set), ENOENT.
    @discardableResult
    public func link(set: Int, toApp appNodeID: UInt32, channels: [Int]? = nil) -> Int32 {
        guard let handle = live else { return -1 }
        let mask = channels.map { $0.reduce(UInt32(0)) { $0 | (1 << UInt32($1)) } } ?? 0
        return -ss_pw_graph_link_set(handle, UInt32(set), appNodeID, mask)
    }
    public func unlink(set: Int) { if let handle = live { ss_pw_graph_unlink_set(handle, UInt32(set)) } }
    /// Asks the server to destroy a link of the registry (anyone's). False when the view has none of that id.
    @discardableResult
    public func destroyLink(_ linkID: UInt32) -> Bool { live.map { ss_pw_graph_destroy_link($0, linkID) == 0 } ?? false }
    /// The app node a set is linked to, nil when free.
    public func app(inSet set: Int) -> UInt32? { live.flatMap { let id = ss_pw_graph_set_app($0, UInt32(set)); return id == 0 ? nil : id } }
    /// Our outputs to the sink of that `node.name`; nil = the default sink, followed.
    public func linkOutputs(toSink sinkName: String?) {
        guard let handle = live else { return }
        withOptionalCString(sinkName) { ss_pw_graph_link_outputs(handle, $0) }
    }
    public func unlinkOutputs() { if let handle = live { ss_pw_graph_unlink_outputs(handle) } }
    /// Which outputs are linked, by speaker number (0 FL … 7 SR); relinked at once if changed.
    public func linkOutputChannels(_ speakers: [Int]) {
        guard let handle = live else { return }
        ss_pw_graph_set_output_mask(handle, speakers.reduce(UInt32(0)) { $0 | (1 << UInt32($1)) })
    }
    /// Resting: our outputs unlinked (still wanted) so the sink may suspend; not: linked again.
    public func setResting(_ resting: Bool) { if let handle = live { ss_pw_graph_set_resting(handle, resting ? 1 : 0) } }
    /// The sink our outputs are linked to, nil when none.
    public var linkedSinkName: String? { copiedName(ss_pw_graph_linked_sink) }
    /// The default sink as the `default` metadata last named it, nil while none. Read again a
    /// moment after every new client of the server: a choice made while one connects reaches
    /// no older reader of the metadata (pipewire-pulse's copy for each of its clients included)
    /// but this one.
    public var defaultSinkName: String? { copiedName(ss_pw_graph_default_sink) }
    /// `changed` runs on the node's loop thread (it must not block, nor take a lock held while
    /// calling into the node) whenever `defaultSinkName` changes; one watcher, the last set.
    public func watchDefaultSink(_ changed: (@Sendable () -> Void)?) { callbacks.defaultSinkWatcher.withLock { $0 = changed } }
    /// A name the C side copies out under the loop's lock; nil when empty or not running.
    private func copiedName(_ read: (OpaquePointer?, UnsafeMutablePointer<CChar>?, UInt32) -> Void) -> String? {
        guard let handle = live else { return nil }
        var buffer = [CChar](repeating: 0, count: Int(SS_PW_GRAPH_TEXT))
        read(handle, &buffer, UInt32(buffer.count))
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? nil : name
    }
    /// Our silent 7.1 park sink, made by our connection (it goes with it; made again after a
    /// reconnection until destroyed), with `properties` beside its own. It never runs: an app
    /// linked to it alone is held until a link into the node starts it. 0 or an errno
    /// (`EALREADY`: one is made; `ENOTCONN`: not connected now; `EINVAL`: a key or value holds
    /// a quote, a backslash or a control character, which are not passed on).
    @discardableResult
    public func createParkSink(named name: String, properties: [String: String] = [:]) -> Int32 {
        guard let handle = live else { return ENOTCONN }
        let plain = { (text: String) in !text.unicodeScalars.contains { $0 == "\"" || $0 == "\\" || $0.value < 0x20 } }
        guard properties.allSatisfy({ plain($0.key) && plain($0.value) }) else { return EINVAL }
        let object = "{ " + properties.sorted { $0.key < $1.key }.map { "\"\($0.key)\": \"\($0.value)\"" }
            .joined(separator: ", ") + " }"
        return -name.withCString { name in object.withCString { ss_pw_graph_create_park_sink(handle, name, $0) } }
    }
    public func destroyParkSink() { if let handle = live { ss_pw_graph_destroy_park_sink(handle) } }
    public var parkSinkNodeID: UInt32? { live.flatMap { let id = ss_pw_graph_park_sink_id($0); return id == 0 ? nil : id } }
    /// `default` metadata `target.object`/`target.node` of the app's node: the target node
    /// (e.g. the park sink), nil = cleared (WirePlumber puts it back on the default at once).
    @discardableResult
    public func setTarget(ofApp appNodeID: UInt32, to targetNodeID: UInt32?) -> Int32 {
        guard let handle = live else { return -1 }
        return -ss_pw_graph_set_target(handle, appNodeID, targetNodeID ?? 0)
    }

    /// Deletes the `default` metadata targets that name no node there is, or one of our park
    /// sinks (name starting with `parkSinkPrefix`): what a SceneSound that crashed left behind
    /// (at start; the guard's sweep). How many went; nil without the metadata. Not from a handler.
    public func sweepStaleTargets(parkSinkPrefix: String) -> Int? {
        guard let handle = live else { return nil }
        let swept = parkSinkPrefix.withCString { ss_pw_graph_sweep_targets(handle, $0) }
        return swept < 0 ? nil : Int(swept)
    }

    // MARK: State and the registry view

    public var nodeID: UInt32? { handle.flatMap { let id = ss_pw_graph_node_id($0); return id == 0 ? nil : id } }
    /// From the last cycle: the driver's delay to the device plus the quantum; nil while unlinked.
    public var outputLatencySeconds: Double? {
        guard let handle else { return nil }
        let seconds = ss_pw_graph_output_latency_seconds(handle)
        return seconds >= 0 ? seconds : nil
    }
    public var underrunCount: Int { handle.map { Int(ss_pw_graph_underruns($0)) } ?? 0 }
    /// Cycles the sink played without us: our process call outlasted the quantum, or a cycle
    /// between two of ours was lost.
    public var lateCycleCount: Int { handle.map { Int(ss_pw_graph_late_cycles($0)) } ?? 0 }
    /// The quantum asked of the graph now, in frames, and how often it was raised.
    public var askedQuantumFrames: Int { handle.map { Int(ss_pw_graph_asked_quantum_frames($0)) } ?? configuration.quantumFrames }
    public var quantumRaiseCount: Int { handle.map { Int(ss_pw_graph_quantum_raises($0)) } ?? 0 }
    /// When the (near) miss behind each of the latest raises ended (CLOCK_MONOTONIC), newest first.
    public var recentQuantumRaisesCausedAtMonotonicSeconds: [Double] {
        guard let handle else { return [] }
        var seconds = [Double](repeating: 0, count: Int(SS_PW_GRAPH_RAISE_RECORD))
        let count = ss_pw_graph_recent_quantum_raises(handle, &seconds, UInt32(seconds.count))
        return Array(seconds.prefix(Int(count)))
    }
    /// Cycles whose process call took more CPU time than the quantum lasts.
    public var overloadedCycleCount: Int { handle.map { Int(ss_pw_graph_overloaded_cycles($0)) } ?? 0 }
    /// A late cycle: when our process call ended (CLOCK_MONOTONIC), how long it took and how
    /// much CPU time, how long after the call before it began, and the quantum; how far the
    /// driver's position moved since the call before, and how long after the driver's cycle
    /// was due this call and the one before began; how often the thread gave its CPU up during
    /// the call (waited) and had it taken (was preempted), and how long since the call before
    /// began it was runnable but waiting for a CPU (nil where the kernel keeps no such record).
    public struct LateCycle: Sendable {
        public var endedMonotonicSeconds, processSeconds, processCPUSeconds, sincePreviousSeconds, quantumSeconds: Double
        public var driverStepSeconds, behindDriverSeconds, previousBehindDriverSeconds: Double
        public var waits, preemptions: Int
        public var waitedForCPUSeconds: Double?
    }
    /// The latest late cycles, newest first.
    public var recentLateCycles: [LateCycle] {
        guard let handle else { return [] }
        var cycles = [ss_pw_graph_late_cycle](repeating: ss_pw_graph_late_cycle(), count: Int(SS_PW_GRAPH_LATE_RECORD))
        let count = ss_pw_graph_recent_late_cycles(handle, &cycles, UInt32(cycles.count))
        return cycles.prefix(Int(count)).map {
            LateCycle(endedMonotonicSeconds: $0.ended_seconds, processSeconds: $0.process_seconds,
                      processCPUSeconds: $0.process_cpu_seconds, sincePreviousSeconds: $0.since_previous_seconds,
                      quantumSeconds: $0.quantum_seconds, driverStepSeconds: $0.driver_step_seconds,
                      behindDriverSeconds: $0.behind_driver_seconds, previousBehindDriverSeconds: $0.previous_behind_driver_seconds,
                      waits: Int($0.waits), preemptions: Int($0.preemptions),
                      waitedForCPUSeconds: $0.waited_for_cpu_seconds >= 0 ? $0.waited_for_cpu_seconds : nil)
        }
    }
    /// The process call that took the most CPU time, and when it ended (CLOCK_MONOTONIC seconds).
    public var slowestProcess: (cpuSeconds: Double, endedAtMonotonicSeconds: Double)? {
        guard let handle else { return nil }
        var seconds = 0.0, endedAt = 0.0
        ss_pw_graph_slowest_process(handle, &seconds, &endedAt)
        return endedAt > 0 ? (seconds, endedAt) : nil
    }
    public var reconnectCount: Int { handle.map { Int(ss_pw_graph_reconnects($0)) } ?? 0 }
    public var isConnected: Bool { live.map { ss_pw_graph_is_connected($0) != 0 } ?? false }
    public var cycleCount: Int { handle.map { Int(ss_pw_graph_cycles($0)) } ?? 0 }
    public var quantumFrames: Int? { handle.flatMap { let n = Int(ss_pw_graph_quantum_frames($0)); return n > 0 ? n : nil } }
    public var rateHz: Int? { handle.flatMap { let n = Int(ss_pw_graph_rate_hz($0)); return n > 0 ? n : nil } }
    /// Whether the data thread ran SCHED_FIFO or SCHED_RR at its first cycle (nil before).
    public var dataThreadIsRealTime: Bool? {
        guard let handle else { return nil }
        let policy = ss_pw_graph_data_thread_policy(handle)
        return policy < 0 ? nil : policy == 1 || policy == 2
    }

    public func node(id: UInt32) -> Node? {
        guard let handle = live else { return nil }
        var info = ss_pw_node_info()
        return ss_pw_graph_node(handle, id, &info) == 0 ? Node(info) : nil
    }
    public func nodeID(named name: String) -> UInt32? {
        guard let handle = live else { return nil }
        let id = name.withCString { ss_pw_graph_find_node(handle, $0) }
        return id == 0 ? nil : id
    }
    public func nodes(mediaClass: String? = nil) -> [Node] {
        guard let handle = live else { return [] }
        return copyOut(ss_pw_node_info()) { out, capacity in
            withOptionalCString(mediaClass) { ss_pw_graph_nodes(handle, $0, out, capacity) }
        }.map(Node.init)
    }
    /// A node's ports (nil: every port).
    public func ports(ofNode nodeID: UInt32? = nil) -> [Port] {
        guard let handle = live else { return [] }
        return copyOut(ss_pw_port_info()) { ss_pw_graph_ports(handle, nodeID ?? 0, $0, $1) }.map(Port.init)
    }
    /// Links from or to a node (nil: every link).
    public func links(ofNode nodeID: UInt32? = nil) -> [Link] {
        guard let handle = live else { return [] }
        return copyOut(ss_pw_link_info()) { ss_pw_graph_links(handle, nodeID ?? 0, $0, $1) }.map {
            Link(id: $0.id, outputNodeID: $0.output_node, outputPortID: $0.output_port, inputNodeID: $0.input_node, inputPortID: $0.input_port)
        }
    }

    /// Asks for the count, then copies (the graph may grow between: asked again).
    private func copyOut<T>(_ empty: T, _ fill: (UnsafeMutablePointer<T>?, UInt32) -> UInt32) -> [T] {
        var capacity = max(Int(fill(nil, 0)), 16)
        while true {
            var items = [T](repeating: empty, count: capacity)
            let count = Int(items.withUnsafeMutableBufferPointer { fill($0.baseAddress, UInt32(capacity)) })
            if count <= capacity { return Array(items.prefix(count)) }
            capacity = count * 2
        }
    }
}

private func text<T>(_ tuple: T) -> String {
    withUnsafeBytes(of: tuple) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
}

extension PipeWireGraphNode.Node {
    init(_ info: ss_pw_node_info) {
        self.init(id: info.id, serial: info.serial, processID: info.process_id, mediaClass: text(info.media_class), name: text(info.name))
    }
}

extension PipeWireGraphNode.Port {
    init(_ info: ss_pw_port_info) {
        self.init(id: info.id, nodeID: info.node, isOutput: info.is_output != 0, channel: text(info.channel), name: text(info.name))
    }
}
