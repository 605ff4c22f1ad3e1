// What plays: clients' streams, the sample cache's plays, the captured apps. Part of the status document (StatusDocument.swift).

extension StatusDocument {
    public struct Stream: Codable, Equatable, Sendable {
        /// Unique within its client.
        public var id: Int
        public var clientID: Int
        /// `playback`, `system` or `alert`.
        public var kind: String
        public var scene: String
        /// `playing`, `idle`, `draining` or `failed`.
        public var state: String
        /// `anchored`, `head-locked` or `off`.
        public var spatial: String
        public var volumeDecibels: Double
        /// RMS of what the renderer took from the stream over about the last quarter second,
        /// after its volume, in dB re full scale; −120 for silence.
        public var levelDecibels: Double
        /// "s16le 2ch 48000Hz".
        public var format: String
        public var bufferedSeconds: Double
        public var starvedSeconds: Double
        public var loop: Bool

        public init(id: Int, clientID: Int, kind: String, scene: String, state: String, spatial: String,
                    volumeDecibels: Double, levelDecibels: Double, format: String, bufferedSeconds: Double,
                    starvedSeconds: Double, loop: Bool) {
            self.id = id
            self.clientID = clientID
            self.kind = kind
            self.scene = scene
            self.state = state
            self.spatial = spatial
            self.volumeDecibels = volumeDecibels
            self.levelDecibels = levelDecibels
            self.format = format
            self.bufferedSeconds = bufferedSeconds
            self.starvedSeconds = starvedSeconds
            self.loop = loop
        }

        enum CodingKeys: String, CodingKey {
            case id, clientID = "client_id", kind, scene, state, spatial, volumeDecibels = "volume_db"
            case levelDecibels = "level_db", format, bufferedSeconds = "buffered_seconds"
            case starvedSeconds = "starved_seconds", loop
        }
    }

    /// A system or alert sound playing from the sample cache (`SAMPLE_PLAY`).
    public struct Play: Codable, Equatable, Sendable {
        public var id: Int
        /// `system` or `alert`.
        public var kind: String
        /// The scene it plays at.
        public var scene: String
        /// Its level over the last blocks, after its volume (dB re full scale; −120: silent).
        public var levelDecibels: Double

        public init(id: Int, kind: String, scene: String, levelDecibels: Double) {
            self.id = id
            self.kind = kind
            self.scene = scene
            self.levelDecibels = levelDecibels
        }

        enum CodingKeys: String, CodingKey {
            case id, kind, scene, levelDecibels = "level_db"
        }
    }

    /// The app capture (`--capture-apps`).
    public struct Apps: Codable, Equatable, Sendable {
        /// `capturing`, `connecting`, `interrupted: <why>`, `stopped`.
        public var state: String
        /// Streams taken and let go since start.
        public var started: Int
        public var ended: Int
        /// Binaries or application names left alone.
        public var excluded: [String]
        public var streams: [AppStream]

        public init(state: String, started: Int, ended: Int, excluded: [String], streams: [AppStream]) {
            self.state = state
            self.started = started
            self.ended = ended
            self.excluded = excluded
            self.streams = streams
        }
    }

    /// One captured stream of another program.
    public struct AppStream: Codable, Equatable, Sendable {
        public var application: String?
        public var binary: String?
        public var pid: Int?
        /// `playback`, `system` (event sounds) or `alert` (`dialog-warning`, `dialog-error`).
        public var kind: String
        public var eventID: String?
        /// `"0x…"`: the window it plays from.
        public var window: String?
        /// The rule that found the window: `xid` (the stream names it), `pid` (`_NET_WM_PID` of
        /// its process or a parent), `recently_active` (its app's most recently active window),
        /// `none` (straight ahead).
        public var windowFoundBy: String
        public var title: String?
        public var scene: String
        public var azimuthDegrees: Double
        /// How much later the app is heard than straight from its sink: its queued audio plus
        /// what the output keeps queued in the sound server.
        public var addedLatencySeconds: Double
        public var starvedSeconds: Double
        public var droppedSeconds: Double
        /// Audio gained (+) or lost (−) one frame at a time to follow the clock of the sink the
        /// app plays on where it runs apart from the output's (absent from servers before it).
        public var slippedSeconds: Double?
        /// Audio made up as a stretch of the app's own continuation when the output's buffer grew
        /// and took that much at once (PulseAudio, after an underflow), rather than taken from its
        /// queue (absent from servers before it).
        public var stretchedSeconds: Double?
        /// The latest times the render found its queue empty while it played (at most 16,
        /// newest first): what `starved_seconds` adds up, one spell at a time (absent from
        /// servers before it).
        public var recentDrySpells: [DrySpell]?
        /// Its level over the last blocks, as a client stream's `level_db` (absent from servers
        /// before it).
        public var levelDecibels: Double?
        /// `anchored`, `head-locked` or `off`, as the user chose for the app (`apps spatial`).
        public var spatial: String?

        public init(application: String?, binary: String?, pid: Int?, kind: String, eventID: String?, window: String?,
                    windowFoundBy: String, title: String?, scene: String, azimuthDegrees: Double, addedLatencySeconds: Double,
                    starvedSeconds: Double, droppedSeconds: Double, slippedSeconds: Double? = nil, stretchedSeconds: Double? = nil,
                    recentDrySpells: [DrySpell]? = nil, levelDecibels: Double? = nil, spatial: String? = nil) {
            self.application = application
            self.binary = binary
            self.pid = pid
            self.kind = kind
            self.eventID = eventID
            self.window = window
            self.windowFoundBy = windowFoundBy
            self.title = title
            self.scene = scene
            self.azimuthDegrees = azimuthDegrees
            self.addedLatencySeconds = addedLatencySeconds
            self.starvedSeconds = starvedSeconds
            self.droppedSeconds = droppedSeconds
            self.slippedSeconds = slippedSeconds
            self.stretchedSeconds = stretchedSeconds
            self.recentDrySpells = recentDrySpells
            self.levelDecibels = levelDecibels
            self.spatial = spatial
        }

        enum CodingKeys: String, CodingKey {
            case application, binary, pid, kind, eventID = "event_id", window, windowFoundBy = "window_found_by", title, scene
            case azimuthDegrees = "azimuth_degrees", addedLatencySeconds = "added_latency_seconds"
            case starvedSeconds = "starved_seconds", droppedSeconds = "dropped_seconds", slippedSeconds = "slipped_seconds"
            case stretchedSeconds = "stretched_seconds"
            case recentDrySpells = "recent_dry_spells", levelDecibels = "level_db", spatial
        }
    }

    /// A run of blocks in which the render found a stream's queue short: when the first was
    /// rendered (CLOCK_MONOTONIC) and how much audio was missing in all.
    public struct DrySpell: Codable, Equatable, Sendable {
        public var startedMonotonicSeconds: Double
        public var seconds: Double

        public init(startedMonotonicSeconds: Double, seconds: Double) {
            self.startedMonotonicSeconds = startedMonotonicSeconds
            self.seconds = seconds
        }

        enum CodingKeys: String, CodingKey {
            case startedMonotonicSeconds = "started_monotonic_seconds", seconds
        }
    }
}
