/// The JSON document of `STATUS_REPLY` (SPEC.md §6.8): what the server writes, what
/// `scenesound status`, its map and libscenesound's `scenesound_status_json` read. One type, so
/// the server and its readers cannot disagree on a field. Units are in the keys; absent values
/// (no pose yet, no window) are left out. `version` grows when a field changes meaning or goes
/// away; new fields are added without a new version, and readers ignore keys they do not know.
public struct StatusDocument: Codable, Equatable, Sendable {
    public static let currentVersion = 1
    /// How a number that is not finite is written (never expected; JSON has no such numbers).
    public static let nonFiniteNames = (positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")

    public var version: Int
    public var server: Server
    public var output: Output
    public var hrtf: HRTF
    public var head: Head
    public var display: Display
    public var monitors: [Monitor]
    public var clients: [Client]
    public var scenes: [Scene]
    public var streams: [Stream]
    public var render: Render
    public var health: Health
    /// `scenesoundd --capture-apps`: other programs' streams taken over; absent when it is off.
    public var apps: Apps?
    /// The engine's scene slots: in use, freed, refused (absent from servers before it).
    public var sceneSlots: SceneSlots?
    /// The headphone equalization in use; absent when none.
    public var headphoneEQ: HeadphoneEQ?
    /// System and alert sounds playing now from the server's sample cache (absent from servers
    /// before it).
    public var plays: [Play]?
    /// The sink the mix plays on; absent when the server does not know it (a wav or null
    /// output, no sink, no connection).
    public var outputDevice: OutputDevice?
    /// The rendering chosen for it (absent from servers before it).
    public var rendering: Rendering?
    /// The output devices seen, with what each remembers (absent from servers before it).
    public var devices: [Device]?

    public init(version: Int = StatusDocument.currentVersion, server: Server, output: Output, hrtf: HRTF, head: Head,
                display: Display, monitors: [Monitor], clients: [Client], scenes: [Scene], streams: [Stream],
                render: Render, health: Health, apps: Apps? = nil, sceneSlots: SceneSlots? = nil,
                headphoneEQ: HeadphoneEQ? = nil) {
        self.version = version
        self.server = server
        self.output = output
        self.hrtf = hrtf
        self.head = head
        self.display = display
        self.monitors = monitors
        self.clients = clients
        self.scenes = scenes
        self.streams = streams
        self.render = render
        self.health = health
        self.apps = apps
        self.sceneSlots = sceneSlots
        self.headphoneEQ = headphoneEQ
    }

    enum CodingKeys: String, CodingKey {
        case version, server, output, hrtf, head, display, monitors, clients, scenes, streams, render, health, apps
        case sceneSlots = "scene_slots"
        case headphoneEQ = "headphone_eq"
        case plays
        case outputDevice = "output_device", rendering, devices
    }

    /// An AutoEQ ParametricEQ.txt applied to the whole mix, after the binaural stage.
    public struct HeadphoneEQ: Codable, Equatable, Sendable {
        public var path: String
        public var preampDecibels: Double
        /// Filters switched on in the file.
        public var filters: Int

        public init(path: String, preampDecibels: Double, filters: Int) {
            self.path = path
            self.preampDecibels = preampDecibels
            self.filters = filters
        }

        enum CodingKeys: String, CodingKey {
            case path, preampDecibels = "preamp_db", filters
        }
    }

    /// A scene holds one of the engine's slots while anything plays at it or keeps it (a hand
    /// placement, a binding, its open window); then the slot is freed for another scene.
    public struct SceneSlots: Codable, Equatable, Sendable {
        /// Slots for scenes (the default, straight ahead, has its own besides).
        public var capacity: Int
        /// Scenes that hold a slot now (every entry of `scenes`).
        public var inUse: Int
        /// Since start: scenes made, scenes freed, and scenes wanted while every slot was taken
        /// (a named scene refused with `limit_exceeded`; a sound naming none, or a captured
        /// app's, played straight ahead instead).
        public var created: Int
        public var freed: Int
        public var refused: Int

        public init(capacity: Int, inUse: Int, created: Int, freed: Int, refused: Int) {
            self.capacity = capacity
            self.inUse = inUse
            self.created = created
            self.freed = freed
            self.refused = refused
        }

        enum CodingKeys: String, CodingKey {
            case capacity, inUse = "in_use", created, freed, refused
        }
    }

    public struct Server: Codable, Equatable, Sendable {
        /// The server program and its version ("scenesoundd 1.0").
        public var software: String
        public var pid: Int
        public var uptimeSeconds: Double
        public var socket: String

        public init(software: String, pid: Int, uptimeSeconds: Double, socket: String) {
            self.software = software
            self.pid = pid
            self.uptimeSeconds = uptimeSeconds
            self.socket = socket
        }

        enum CodingKeys: String, CodingKey {
            case software, pid, uptimeSeconds = "uptime_seconds", socket
        }
    }

    public struct Output: Codable, Equatable, Sendable {
        /// `pulse`, `wav` or `null`.
        public var kind: String
        /// The sink or file played to, when there is one.
        public var target: String?
        public var rateHz: Double
        public var blockFrames: Int
        /// From a client's write to its being played: the output's delay to the device, plus
        /// the wait for the render that takes the write (half a block, on average) and the
        /// limiter's look-ahead. Absent until the output reports its delay.
        public var latencySeconds: Double?
        public var connected: Bool
        /// Blocks the listener missed (the sink played without us, or the sound server's
        /// underflows); `recent_underruns`: the latest, where known (PipeWire), newest first.
        public var underruns: Int
        public var recentUnderruns: [Underrun]?
        /// PulseAudio: when the latest of its underflow notices reached us, newest first
        /// (CLOCK_MONOTONIC seconds); what was missed lies just before each.
        public var recentUnderflowsAtMonotonicSeconds: [Double]?
        public var overloadedBlocks: Int?
        public var slowestBlockCPUSeconds: Double?
        public var slowestBlockAtSeconds: Double?
        public var reconnects: Int
        /// How the thread that renders runs, e.g. "SCHED_FIFO 20" or "SCHED_OTHER"; absent
        /// before the first block.
        public var renderThreadScheduling: String?
        /// PipeWire's graph node: the quantum it asks of the graph now, in frames — the block,
        /// or more after the graph's driver missed periods (raised until such misses stop).
        public var graphQuantumFrames: Int?
        /// When the (near) miss behind each of the latest raises of that quantum ended, newest
        /// first (CLOCK_MONOTONIC seconds).
        public var graphQuantumRaisesAtMonotonicSeconds: [Double]?
        public var lastError: String?
        public var renderedSeconds: Double

        public init(kind: String, target: String?, rateHz: Double, blockFrames: Int, latencySeconds: Double?,
                    connected: Bool, underruns: Int, overloadedBlocks: Int?, slowestBlockCPUSeconds: Double?,
                    slowestBlockAtSeconds: Double?, reconnects: Int, renderThreadScheduling: String? = nil,
                    lastError: String?, renderedSeconds: Double) {
            self.kind = kind
            self.target = target
            self.rateHz = rateHz
            self.blockFrames = blockFrames
            self.latencySeconds = latencySeconds
            self.connected = connected
            self.underruns = underruns
            self.overloadedBlocks = overloadedBlocks
            self.slowestBlockCPUSeconds = slowestBlockCPUSeconds
            self.slowestBlockAtSeconds = slowestBlockAtSeconds
            self.reconnects = reconnects
            self.renderThreadScheduling = renderThreadScheduling
            self.lastError = lastError
            self.renderedSeconds = renderedSeconds
        }

        enum CodingKeys: String, CodingKey {
            case kind, target, rateHz = "rate_hz", blockFrames = "block_frames", latencySeconds = "latency_seconds"
            case connected, underruns, recentUnderruns = "recent_underruns"
            case overloadedBlocks = "overloaded_blocks"
            case slowestBlockCPUSeconds = "slowest_block_cpu_seconds", slowestBlockAtSeconds = "slowest_block_at_seconds"
            case reconnects, renderThreadScheduling = "render_thread_scheduling", lastError = "last_error"
            case graphQuantumFrames = "graph_quantum_frames"
            case graphQuantumRaisesAtMonotonicSeconds = "graph_quantum_raises_at_monotonic_seconds"
            case recentUnderflowsAtMonotonicSeconds = "recent_underflows_at_monotonic_seconds"
            case renderedSeconds = "rendered_seconds"
        }
    }

    /// A block the listener missed, and what the thread that renders did around it: whether
    /// its call outlasted the block (its CPU time says whether rendering took that long or the
    /// thread could not run) or began too long after the call before (it was not called).
    public struct Underrun: Codable, Equatable, Sendable {
        /// When the call that missed ended (CLOCK_MONOTONIC).
        public var atMonotonicSeconds: Double
        public var callSeconds: Double
        public var callCPUSeconds: Double
        /// From the call before's start to this one's (0 for the first call).
        public var sincePreviousCallSeconds: Double
        public var blockSeconds: Double
        /// How far the driver's clock moved since the call before (more than a block: a cycle
        /// went by without us); how long after the driver's cycle was due this call and the one
        /// before began (PipeWire; nil from a server that does not send them).
        public var driverStepSeconds: Double?
        public var behindDriverSeconds: Double?
        public var previousBehindDriverSeconds: Double?
        /// How often the thread gave its CPU up during the call (it waited: a sleep, a lock, a
        /// page read from disk) and had it taken by another thread (PipeWire; nil elsewhere).
        public var callWaits: Int?
        public var callPreemptions: Int?
        /// How long, since the call before began, the thread was runnable but waiting for a CPU
        /// (PipeWire, where the kernel keeps it; nil elsewhere). A thread woken for the cycle it
        /// missed waited most of a block; one that was never woken for it (the driver itself a
        /// cycle late, its catch-up cycle following at once) only as long as its wake-ups took.
        public var waitedForCPUSeconds: Double?

        public init(atMonotonicSeconds: Double, callSeconds: Double, callCPUSeconds: Double,
                    sincePreviousCallSeconds: Double, blockSeconds: Double, driverStepSeconds: Double? = nil,
                    behindDriverSeconds: Double? = nil, previousBehindDriverSeconds: Double? = nil,
                    callWaits: Int? = nil, callPreemptions: Int? = nil, waitedForCPUSeconds: Double? = nil) {
            self.atMonotonicSeconds = atMonotonicSeconds
            self.callSeconds = callSeconds
            self.callCPUSeconds = callCPUSeconds
            self.sincePreviousCallSeconds = sincePreviousCallSeconds
            self.blockSeconds = blockSeconds
            self.driverStepSeconds = driverStepSeconds
            self.behindDriverSeconds = behindDriverSeconds
            self.previousBehindDriverSeconds = previousBehindDriverSeconds
            self.callWaits = callWaits
            self.callPreemptions = callPreemptions
            self.waitedForCPUSeconds = waitedForCPUSeconds
        }

        enum CodingKeys: String, CodingKey {
            case atMonotonicSeconds = "at_monotonic_seconds", callSeconds = "call_seconds", callCPUSeconds = "call_cpu_seconds"
            case sincePreviousCallSeconds = "since_previous_call_seconds", blockSeconds = "block_seconds"
            case driverStepSeconds = "driver_step_seconds", behindDriverSeconds = "behind_driver_seconds"
            case previousBehindDriverSeconds = "previous_behind_driver_seconds"
            case callWaits = "call_waits", callPreemptions = "call_preemptions"
            case waitedForCPUSeconds = "waited_for_cpu_seconds"
        }
    }

    public struct HRTF: Codable, Equatable, Sendable {
        public var path: String
        public var measurements: Int
        public var filterTaps: Int
        public var rateHz: Double
        /// The set's measurement distance (SOFA SourcePosition's radius), when it has one.
        public var measurementDistanceMetres: Double?

        public init(path: String, measurements: Int, filterTaps: Int, rateHz: Double,
                    measurementDistanceMetres: Double? = nil) {
            self.path = path
            self.measurements = measurements
            self.filterTaps = filterTaps
            self.rateHz = rateHz
            self.measurementDistanceMetres = measurementDistanceMetres
        }

        enum CodingKeys: String, CodingKey {
            case path, measurements, filterTaps = "filter_taps", rateHz = "rate_hz"
            case measurementDistanceMetres = "measurement_distance_metres"
        }
    }

    public struct Head: Codable, Equatable, Sendable {
        /// + = turned left, + = looking up, + = tilted right.
        public var yawDegrees: Double
        public var pitchDegrees: Double
        public var rollDegrees: Double
        /// w, x, y, z.
        public var quaternion: [Double]
        /// x (right), y (up), z (back).
        public var positionMetres: [Double]
        public var posesReceived: Int
        public var opentrackPackets: Int
        public var opentrackRejectedPackets: Int
        /// Datagrams over the opentrack rate, dropped unread.
        public var opentrackRateLimitedPackets: Int
        /// Absent until a pose arrives.
        public var poseAgeSeconds: Double?
        public var poseReceivedOutputFrame: Int?
        public var poseAppliedOutputFrame: Int?
        /// From the latest pose's arrival to the render thread using it.
        public var motionToRenderSeconds: Double?
        /// Plus the limiter's look-ahead and the output's delay to the device.
        public var motionToSoundSeconds: Double?
        /// What the renderer follows (`full`, `yaw-only`, `off`: scenesoundd --head-tracking).
        public var tracking: String?
        /// The source of the newest pose (`opentrack`, `osc`, `protocol`), while poses arrive
        /// (absent a second after the last), and how many it sent in the last second.
        public var tracker: String?
        public var trackerPosesPerSecond: Double?
        /// The prediction's horizon in use (latency + half a pose interval, bounded); absent
        /// when prediction is off.
        public var predictionSeconds: Double?
        /// The yaw handed to the renderer, prediction included.
        public var renderedYawDegrees: Double?
        public var oscPackets: Int?
        public var oscRejectedPackets: Int?
        /// Datagrams over the OSC rate, dropped unread.
        public var oscRateLimitedPackets: Int?
        /// Datagrams from the tracker input not chosen, dropped unread.
        public var opentrackIgnoredPackets: Int?
        public var oscIgnoredPackets: Int?
        /// Which tracker input is followed (`any`, `opentrack`, `osc`: scenesound head tracker).
        public var trackerChoice: String?
        /// Poses a second taken from each tracker input at most (scenesound head tracker
        /// --rate, else the input's own limit); absent with no tracker input listening.
        public var trackerRateLimitPosesPerSecond: Int?
        /// Automatic recentering (scenesoundd --head-recenter-seconds): the rest it waits for, and
        /// how many times it has begun; absent when off.
        public var recenterAfterSeconds: Double?
        public var automaticRecenters: Int?

        public init(yawDegrees: Double, pitchDegrees: Double, rollDegrees: Double, quaternion: [Double],
                    positionMetres: [Double], posesReceived: Int, opentrackPackets: Int, opentrackRejectedPackets: Int,
                    opentrackRateLimitedPackets: Int = 0, poseAgeSeconds: Double? = nil, poseReceivedOutputFrame: Int? = nil, poseAppliedOutputFrame: Int? = nil,
                    motionToRenderSeconds: Double? = nil, motionToSoundSeconds: Double? = nil) {
            self.yawDegrees = yawDegrees
            self.pitchDegrees = pitchDegrees
            self.rollDegrees = rollDegrees
            self.quaternion = quaternion
            self.positionMetres = positionMetres
            self.posesReceived = posesReceived
            self.opentrackPackets = opentrackPackets
            self.opentrackRejectedPackets = opentrackRejectedPackets
            self.opentrackRateLimitedPackets = opentrackRateLimitedPackets
            self.poseAgeSeconds = poseAgeSeconds
            self.poseReceivedOutputFrame = poseReceivedOutputFrame
            self.poseAppliedOutputFrame = poseAppliedOutputFrame
            self.motionToRenderSeconds = motionToRenderSeconds
            self.motionToSoundSeconds = motionToSoundSeconds
        }

        enum CodingKeys: String, CodingKey {
            case yawDegrees = "yaw_degrees", pitchDegrees = "pitch_degrees", rollDegrees = "roll_degrees", quaternion
            case positionMetres = "position_metres", posesReceived = "poses_received", opentrackPackets = "opentrack_packets"
            case opentrackRejectedPackets = "opentrack_rejected_packets"
            case opentrackRateLimitedPackets = "opentrack_rate_limited_packets", poseAgeSeconds = "pose_age_seconds"
            case poseReceivedOutputFrame = "pose_received_output_frame", poseAppliedOutputFrame = "pose_applied_output_frame"
            case motionToRenderSeconds = "motion_to_render_seconds", motionToSoundSeconds = "motion_to_sound_seconds"
            case tracking, tracker, trackerPosesPerSecond = "tracker_poses_per_second", predictionSeconds = "prediction_seconds"
            case renderedYawDegrees = "rendered_yaw_degrees", oscPackets = "osc_packets", oscRejectedPackets = "osc_rejected_packets"
            case oscRateLimitedPackets = "osc_rate_limited_packets", recenterAfterSeconds = "recenter_after_seconds"
            case automaticRecenters = "automatic_recenters"
            case opentrackIgnoredPackets = "opentrack_ignored_packets", oscIgnoredPackets = "osc_ignored_packets"
            case trackerChoice = "tracker_choice", trackerRateLimitPosesPerSecond = "tracker_rate_limit_poses_per_second"
        }
    }

    /// A connected client.
    public struct Client: Codable, Equatable, Sendable {
        /// The server's number for the connection; streams name their client by it.
        public var id: Int
        /// The `client_name` of its HELLO (may be empty).
        public var name: String
        /// The peer's process (SO_PEERCRED), else the pid its HELLO gave; absent when neither is known.
        public var pid: Int?
        /// Streams it has open.
        public var streams: Int

        public init(id: Int, name: String, pid: Int?, streams: Int) {
            self.id = id
            self.name = name
            self.pid = pid
            self.streams = streams
        }

        /// The name, or "client N" for one that gave none.
        public var displayName: String { name.isEmpty ? "client \(id)" : name }
    }

    public struct Render: Codable, Equatable, Sendable {
        /// Render CPU time per block over the block's duration.
        public var load: Double
        /// The highest since the previous status request.
        public var peakLoad: Double
        public var blockDeadlineSeconds: Double
        public var hrtfVoices: Int
        public var busVoices: Int
        /// `avx512`, `avx2` or `portable`.
        public var kernels: String

        public init(load: Double, peakLoad: Double, blockDeadlineSeconds: Double, hrtfVoices: Int, busVoices: Int,
                    kernels: String) {
            self.load = load
            self.peakLoad = peakLoad
            self.blockDeadlineSeconds = blockDeadlineSeconds
            self.hrtfVoices = hrtfVoices
            self.busVoices = busVoices
            self.kernels = kernels
        }

        enum CodingKeys: String, CodingKey {
            case load, peakLoad = "peak_load", blockDeadlineSeconds = "block_deadline_seconds"
            case hrtfVoices = "hrtf_voices", busVoices = "bus_voices", kernels
        }
    }

    /// Counters since the server started.
    public struct Health: Codable, Equatable, Sendable {
        public var connections: Int
        public var refusedConnections: Int
        public var stalledClientsDropped: Int
        public var rateLimitedMessages: Int
        public var governorMovesToBus: Int
        public var governorMovesToHRTF: Int
        public var rejectedFrames: Int
        public var droppedEngineEvents: Int
        /// Engine commands that found the render thread's queue full and waited for room.
        public var engineCommandsDeferred: Int
        /// Of those, how many wait now.
        public var engineCommandsWaiting: Int
        /// New streams and plays refused while many commands waited.
        public var requestsRefusedEngineBehind: Int

        public init(connections: Int, refusedConnections: Int, stalledClientsDropped: Int, rateLimitedMessages: Int,
                    governorMovesToBus: Int, governorMovesToHRTF: Int, rejectedFrames: Int, droppedEngineEvents: Int,
                    engineCommandsDeferred: Int = 0, engineCommandsWaiting: Int = 0, requestsRefusedEngineBehind: Int = 0) {
            self.connections = connections
            self.refusedConnections = refusedConnections
            self.stalledClientsDropped = stalledClientsDropped
            self.rateLimitedMessages = rateLimitedMessages
            self.governorMovesToBus = governorMovesToBus
            self.governorMovesToHRTF = governorMovesToHRTF
            self.rejectedFrames = rejectedFrames
            self.droppedEngineEvents = droppedEngineEvents
            self.engineCommandsDeferred = engineCommandsDeferred
            self.engineCommandsWaiting = engineCommandsWaiting
            self.requestsRefusedEngineBehind = requestsRefusedEngineBehind
        }

        enum CodingKeys: String, CodingKey {
            case connections, refusedConnections = "refused_connections", stalledClientsDropped = "stalled_clients_dropped"
            case rateLimitedMessages = "rate_limited_messages", governorMovesToBus = "governor_moves_to_bus"
            case governorMovesToHRTF = "governor_moves_to_hrtf", rejectedFrames = "rejected_frames"
            case droppedEngineEvents = "dropped_engine_events", engineCommandsDeferred = "engine_commands_deferred"
            case engineCommandsWaiting = "engine_commands_waiting", requestsRefusedEngineBehind = "requests_refused_engine_behind"
        }
    }
}
