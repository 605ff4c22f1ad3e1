import SceneSoundProtocol

/// What the page draws, taken from the server's status document and nothing else: the
/// listener's head, the monitors, every scene as a mark with its streams' level, the captured
/// apps, the HRTF set and EQ in use, the output device playing and its rendering. Rounded to what a person can see (1 mm, 0.1°, 1 dB), so
/// that an unchanged scene is an equal model and nothing is pushed for it.
public struct SceneModel: Codable, Equatable, Sendable {
    public struct Monitor: Codable, Equatable, Sendable {
        public var name: String
        public var primary: Bool
        public var leftMetres: Double, rightMetres: Double, zMetres: Double
    }

    public struct Mark: Codable, Equatable, Sendable {
        /// The scene id.
        public var id: String
        public var label: String
        /// `none`, `window`, `fixed` or `program`, as the status says.
        public var kind: String
        /// `visible`, `minimized`, `onOtherDesktop`, `unmapped`, `gone`; nil: not a window.
        public var state: String?
        public var xMetres: Double, zMetres: Double
        public var azimuthDegrees: Double, distanceMetres: Double
        public var widthMetres: Double
        /// The loudest of what plays there — clients' streams, captured apps, system and alert
        /// sounds — in dB re full scale; nil when none plays there (or the server reports no level).
        public var levelDecibels: Double?
        /// An alert plays there now.
        public var alert: Bool
        public var streams: Int
        /// Captured apps playing there.
        public var apps: [String]
        /// Sounds at it that the status counts but does not list (from a server before `plays`
        /// was reported), so with no level and no kind.
        public var unlistedSounds: Int
        /// Placed by hand (`scene place`): the page lets it be dragged.
        public var placed: Bool
    }

    public struct App: Codable, Equatable, Sendable {
        /// The name `apps exclude` takes: the application name (what the app calls itself,
        /// as pavucontrol shows it), else the binary.
        public var name: String
        public var application: String?
        public var scene: String
        public var kind: String
        public var azimuthDegrees: Double
        /// `anchored`, `head-locked` or `off` (`apps spatial`); nil from a server before it.
        public var spatial: String?
    }

    public var headYawDegrees: Double
    public var headPitchDegrees: Double
    public var headRollDegrees: Double
    public var tracker: String?
    public var trackerPosesPerSecond: Double?
    public var tracking: String?
    /// Which tracker input is followed (`any`, `opentrack`, `osc`) and the poses a second taken
    /// from each at most (`head tracker`); nil from a server before them.
    public var trackerChoice: String?
    public var trackerRateLimitPosesPerSecond: Int?
    /// Automatic recentering's rest; nil when off.
    public var recenterAfterSeconds: Double?
    public var hrtfPath: String
    public var headphoneEQPath: String?
    public var outputKind: String
    public var metresAcross: Double
    public var monitors: [Monitor]
    public var marks: [Mark]
    /// nil: the daemon runs without `--capture-apps`.
    public var captureState: String?
    public var apps: [App]
    public var excludedApps: [String]
    /// The sink the mix plays on (description, form factor, port, …); nil with no device known
    /// (a `wav:` or `null` output, a server before issue 29).
    public var outputDevice: StatusDocument.OutputDevice?
    /// Its rendering (binaural or speakers and their layout), spatial mode, reason and `--render`
    /// preference; nil from a server before issue 29.
    public var rendering: StatusDocument.Rendering?

    public init(status: StatusDocument) {
        func r(_ value: Double, _ step: Double) -> Double { (value / step).rounded() * step }
        headYawDegrees = r(status.head.yawDegrees, 0.1)
        headPitchDegrees = r(status.head.pitchDegrees, 0.1)
        headRollDegrees = r(status.head.rollDegrees, 0.1)
        tracker = status.head.tracker
        trackerPosesPerSecond = status.head.trackerPosesPerSecond.map { r($0, 1) }
        tracking = status.head.tracking
        trackerChoice = status.head.trackerChoice
        trackerRateLimitPosesPerSecond = status.head.trackerRateLimitPosesPerSecond
        recenterAfterSeconds = status.head.recenterAfterSeconds
        hrtfPath = status.hrtf.path
        headphoneEQPath = status.headphoneEQ?.path
        outputKind = status.output.kind
        metresAcross = r(SceneGeometry.metresAcross(status: status), 0.01)
        monitors = status.monitors.map {
            Monitor(name: $0.name, primary: $0.primary, leftMetres: r($0.leftMetres, 0.001), rightMetres: r($0.rightMetres, 0.001),
                    zMetres: r($0.zMetres, 0.001))
        }
        let appStreams = status.apps?.streams ?? []
        marks = status.scenes.compactMap { scene in
            guard scene.positionMetres.count == 3 else { return nil }
            let streams = status.streams.filter { $0.scene == scene.id }
            let apps = appStreams.filter { $0.scene == scene.id }
            let plays = (status.plays ?? []).filter { $0.scene == scene.id }
            let playing = streams.filter { $0.state == "playing" }
            let levels = streams.map(\.levelDecibels) + apps.compactMap(\.levelDecibels) + plays.map(\.levelDecibels)
            return Mark(id: scene.id, label: scene.label, kind: scene.kind, state: scene.state,
                        xMetres: r(scene.positionMetres[0], 0.001), zMetres: r(scene.positionMetres[2], 0.001),
                        azimuthDegrees: r(scene.azimuthDegrees, 0.1), distanceMetres: r(scene.distanceMetres, 0.001),
                        widthMetres: r(scene.widthMetres ?? 0, 0.001),
                        levelDecibels: levels.max().map { r(max($0, -120), 1) },
                        alert: playing.contains { $0.kind == "alert" } || apps.contains { $0.kind == "alert" }
                            || plays.contains { $0.kind == "alert" },
                        streams: scene.streams ?? streams.count,
                        apps: apps.map { $0.application ?? $0.binary ?? "?" },
                        unlistedSounds: max(0, (scene.streams ?? 0) - streams.count - apps.count - plays.count),
                        placed: scene.kind == "fixed")
        }
        captureState = status.apps?.state
        apps = appStreams.map {
            App(name: $0.application ?? $0.binary ?? "?", application: $0.application, scene: $0.scene, kind: $0.kind,
                azimuthDegrees: r($0.azimuthDegrees, 0.1), spatial: $0.spatial)
        }
        excludedApps = status.apps?.excluded ?? []
        outputDevice = status.outputDevice
        rendering = status.rendering
    }

    enum CodingKeys: String, CodingKey {
        case headYawDegrees = "head_yaw_degrees", headPitchDegrees = "head_pitch_degrees", headRollDegrees = "head_roll_degrees"
        case tracker, trackerPosesPerSecond = "tracker_poses_per_second", tracking
        case trackerChoice = "tracker_choice", trackerRateLimitPosesPerSecond = "tracker_rate_limit_poses_per_second"
        case recenterAfterSeconds = "recenter_after_seconds"
        case hrtfPath = "hrtf_path", headphoneEQPath = "headphone_eq_path", outputKind = "output_kind"
        case metresAcross = "metres_across", monitors, marks, captureState = "capture_state", apps
        case excludedApps = "excluded_apps", outputDevice = "output_device", rendering
    }
}

extension SceneModel.Monitor {
    enum CodingKeys: String, CodingKey {
        case name, primary, leftMetres = "left_metres", rightMetres = "right_metres", zMetres = "z_metres"
    }
}

extension SceneModel.Mark {
    enum CodingKeys: String, CodingKey {
        case id, label, kind, state, xMetres = "x_metres", zMetres = "z_metres", azimuthDegrees = "azimuth_degrees"
        case distanceMetres = "distance_metres", widthMetres = "width_metres", levelDecibels = "level_db", alert, streams
        case apps, unlistedSounds = "unlisted_sounds", placed
    }
}

extension SceneModel.App {
    enum CodingKeys: String, CodingKey {
        case name, application, scene, kind, azimuthDegrees = "azimuth_degrees", spatial
    }
}

/// The geometry the `status --plot` map and the live page share: how many metres the view
/// spans, and a mark's radius from its level. The page gets both from the model (metres) and
/// from `SceneGeometry.radiusPixels` written into its script.
public enum SceneGeometry {
    /// Metres shown: the screen plane and a margin either side of the listener.
    public static func metresAcross(status: StatusDocument) -> Double {
        let extents = status.monitors.flatMap { [abs($0.leftMetres), abs($0.rightMetres)] }
            + status.scenes.map { abs($0.positionMetres.first ?? 0) * 1.1 }
        return max(1.2, 2.4 * (extents.max() ?? 0.5))
    }

    /// Radius on a 640-pixel map from the level: 4 px for a scene with nothing playing, 6 px
    /// (−60 dB and below) to 22 px (0 dB) for one with streams.
    public static func radiusPixels(levelDecibels: Double?) -> Double {
        guard let level = levelDecibels else { return 4 }
        return 6 + 16 * max(0, min(1, (level + 60) / 60))
    }

    /// The map's width in its own pixels, and where the listener sits (fractions of it).
    public static let mapSizePixels = 640.0
    public static let listenerYFraction = 0.72

    /// The palette both draw with: Okabe and Ito's, which holds for the common colour-vision
    /// deficiencies (listener blue, windows orange, sounding marks vermilion, silent grey).
    public enum Colour {
        public static let listener = "#0072b2"
        public static let window = "#e69f00"
        public static let sounding = "#d55e00"
        public static let muffled = "#999999"
        public static let silent = "#c8c8c8"
        public static let monitor = "#555555"
        public static let background = "#fbfaf7"
    }
}
