import Foundation
import SceneSoundDSP
import SceneSoundEngine
import SceneSoundPlatform
import SceneSoundProtocol

/// Where a head pose came from.
public enum HeadPoseSource: String, Sendable {
    /// `HEAD_POSE` over the socket (`scenesound head set`, apps, libscenesound).
    case protocolMessage = "protocol"
    case opentrack
    case osc
}

/// How much of the tracked head the renderer follows (`--head-tracking`).
public enum HeadTrackingMode: String, CaseIterable, Sendable {
    /// Every rotation and the position.
    case full
    /// Only the turn about the vertical axis; pitch, roll and position are ignored.
    case yawOnly = "yaw-only"
    /// Trackers (opentrack, OSC) are ignored and the head stays straight ahead; a pose set
    /// over the protocol (`scenesound head set`) still applies.
    case off
}

/// Which tracker input's poses are followed (`scenesound head tracker`, HEAD_TRACKER_USE).
public enum HeadTrackerChoice: String, CaseIterable, Sendable {
    /// opentrack and OSC both: the newest pose from either wins.
    case any
    /// opentrack only: OSC datagrams are dropped unread and counted as ignored.
    case opentrack
    /// OSC only: opentrack datagrams are dropped unread and counted as ignored.
    case osc
}

/// The daemon's head-tracking choices (`--head-tracking`, `--head-prediction`,
/// `--head-recenter-seconds`).
public struct HeadTrackingSettings: Sendable {
    public var mode = HeadTrackingMode.full
    /// Extrapolate the pose over the output's latency (`HeadPosePredictor`).
    public var prediction = true
    /// Once a tracked head has rested within `restDegrees` for this long, straight ahead glides
    /// (in yaw) to where it rests: a tracker's yaw drift is taken out. Nil: off.
    public var recenterAfterSeconds: Double?
    public var restDegrees = 4.0
    /// The glide's time constant.
    public var recenterGlideSeconds = 1.0
    /// Which tracker input is followed.
    public var tracker = HeadTrackerChoice.any
    /// Poses a second taken from each tracker input, more dropped unread; nil: each input's
    /// own limit (`ServerConfiguration.maximumOpenTrackPacketsPerSecond`, `…OSC…`).
    public var trackerPosesPerSecond: Int?

    public init() {}
}

/// The listener's head as the server knows it: the latest pose from any source (protocol
/// HEAD_POSE, opentrack, OSC), the recenter reference, the prediction, and when poses arrived —
/// for `status` and the motion-to-sound latency. Event-loop confined.
final class HeadTracking {
    private let engine: Engine
    private let commands: EngineCommandQueue
    private(set) var settings: HeadTrackingSettings
    /// From a pose's arrival to its being heard, besides the render itself: the output's
    /// latency and the limiter's look-ahead.
    private let latencySeconds: () -> Double
    private let nowNanoseconds: () -> Int
    private var raw = SceneSoundDSP.HeadPose.neutral
    private var reference = SceneSoundDSP.Quaternion.identity
    private var predictor = HeadPosePredictor()
    /// The pose last handed to the renderer (prediction included).
    private(set) var rendered = SceneSoundDSP.HeadPose.neutral
    private var latestSource: HeadPoseSource?
    /// Arrival times (seconds) of the last second's poses from `latestSource`: its rate.
    private var recentArrivals: [Double] = []
    /// Where a tracked head came to rest, and since when (automatic recentering).
    private var rest: (orientation: SceneSoundDSP.Quaternion, sinceSeconds: Double)?
    private var lastGlideSeconds: Double?
    /// Monotonic time and engine output frame when the newest pose arrived.
    private(set) var lastArrival: (monotonicNanoseconds: Int, outputFrame: Int)?
    /// When the render thread first used it (later pushes, a fading prediction or a recentering
    /// glide, move the engine's own record on).
    private var firstApplied: (outputFrame: Int, monotonicNanoseconds: Int)?
    private(set) var poseCount = 0
    private(set) var automaticRecenters = 0
    var openTrackAccepted = 0
    var openTrackRejected = 0
    /// Datagrams over the opentrack rate, dropped unread.
    var openTrackRateLimited = 0
    var oscAccepted = 0
    var oscRejected = 0
    var oscRateLimited = 0
    /// Datagrams from the input not chosen (`settings.tracker`), dropped unread.
    var openTrackIgnored = 0
    var oscIgnored = 0
    /// Each listening input's own rate limit, as it started (`trackerPosesPerSecond` nil).
    var defaultPosesPerSecond: [HeadPoseSource: Int] = [:]

    /// `engine` is read for its output clock and when a pose took effect; commands go through
    /// `commands`. `latencySeconds` is asked at each pose (the prediction's horizon).
    init(engine: Engine, commands: EngineCommandQueue, settings: HeadTrackingSettings = .init(),
         latencySeconds: @escaping () -> Double = { 0 },
         nowNanoseconds: @escaping () -> Int = { MonotonicClock.nowNanoseconds() }) {
        self.engine = engine
        self.commands = commands
        self.settings = settings
        self.latencySeconds = latencySeconds
        self.nowNanoseconds = nowNanoseconds
    }

    private var nowSeconds: Double { Double(nowNanoseconds()) * 1e-9 }

    /// The pose as tracked: the raw pose seen from the recentered reference, reduced to what
    /// the mode follows.
    var effective: SceneSoundDSP.HeadPose { followed(raw.orientation, position: raw.positionMetres) }

    private func followed(_ orientation: SceneSoundDSP.Quaternion, position: Vector3) -> SceneSoundDSP.HeadPose {
        let seen = (reference.conjugate * orientation).normalized
        switch settings.mode {
        case .full, .off: return SceneSoundDSP.HeadPose(orientation: seen, positionMetres: position)
        case .yawOnly: return SceneSoundDSP.HeadPose(orientation: yawPart(seen), positionMetres: .zero)
        }
    }

    func update(_ pose: SceneSoundDSP.HeadPose, from source: HeadPoseSource = .protocolMessage) {
        if settings.mode == .off, source != .protocolMessage { return }
        let now = nowNanoseconds(), seconds = Double(now) * 1e-9
        raw = SceneSoundDSP.HeadPose(orientation: pose.orientation.normalized, positionMetres: pose.positionMetres)
        lastArrival = (now, engine.renderedFrames)
        firstApplied = nil
        poseCount += 1
        if source != latestSource {
            predictor.reset()
            recentArrivals.removeAll()
            rest = nil
        }
        latestSource = source
        recentArrivals.append(seconds)
        recentArrivals.removeFirst(recentArrivals.prefix { $0 < seconds - 1 }.count)
        if settings.prediction { predictor.add(raw.orientation, atSeconds: seconds) }
        if source != .protocolMessage { followRest(at: seconds) }
        pushRendered(at: seconds)
    }

    /// A pose from the protocol (HEAD_POSE).
    func update(_ pose: SceneSoundProtocol.HeadPose) {
        let q = pose.orientation
        let position = pose.position.map { Vector3(x: Double($0.x), y: Double($0.y), z: Double($0.z)) } ?? .zero
        update(SceneSoundDSP.HeadPose(orientation: SceneSoundDSP.Quaternion(w: Double(q.w), x: Double(q.x), y: Double(q.y), z: Double(q.z)),
                        positionMetres: position))
    }

    /// An opentrack datagram that passed the rate limit: a pose, or counted as rejected.
    func receiveOpenTrack(_ bytes: UnsafeRawBufferPointer) {
        guard let pose = OpenTrackPacket.decode(bytes) else {
            openTrackRejected += 1
            return
        }
        openTrackAccepted += 1
        update(pose, from: .opentrack)
    }

    /// What the renderer follows, and automatic recentering (nil: off), from now on
    /// (`HEAD_TRACKING_SET`). Turned off, a tracker's pose no longer holds: the head goes back
    /// straight ahead (a pose set over the protocol stays, as `update` keeps those).
    func setTracking(mode: HeadTrackingMode, recenterAfterSeconds: Double?) {
        settings.mode = mode
        settings.recenterAfterSeconds = recenterAfterSeconds
        rest = nil
        lastGlideSeconds = nil
        if mode == .off, let source = latestSource, source != .protocolMessage {
            raw = .neutral
            predictor.reset()
        }
        pushRendered(at: nowSeconds)
    }

    /// Which tracker input is followed, and the poses a second taken from each (nil: each
    /// input's own limit), from now on (`HEAD_TRACKER_USE`). A pose the other input sent
    /// stays until the chosen one sends.
    func useTracker(_ tracker: HeadTrackerChoice, posesPerSecond: Int?) {
        settings.tracker = tracker
        settings.trackerPosesPerSecond = posesPerSecond
    }

    /// Whether datagrams from `source` are followed (the tracker choice); counts those that are not.
    func follows(_ source: HeadPoseSource) -> Bool {
        switch (settings.tracker, source) {
        case (.any, _), (_, .protocolMessage), (.opentrack, .opentrack), (.osc, .osc):
            return true
        case (.opentrack, .osc):
            oscIgnored += 1
        case (.osc, .opentrack):
            openTrackIgnored += 1
        }
        return false
    }

    /// The poses a second a tracker input's rate limiter lets through now, given its own limit.
    func posesPerSecondLimit(default own: Int) -> Int {
        settings.trackerPosesPerSecond ?? own
    }

    /// The limit `status` reports: the one set, else the chosen input's own (the larger of the
    /// two for `any`); nil with no tracker input listening.
    var reportedPosesPerSecondLimit: Int? {
        if let set = settings.trackerPosesPerSecond { return set }
        switch settings.tracker {
        case .any: return defaultPosesPerSecond.values.max()
        case .opentrack: return defaultPosesPerSecond[.opentrack]
        case .osc: return defaultPosesPerSecond[.osc]
        }
    }

    /// The current orientation becomes straight ahead.
    func recenter() {
        reference = raw.orientation
        rest = nil
        pushRendered(at: nowSeconds)
    }

    /// On the server's tick: a prediction fading after the poses stopped, and a recentering
    /// glide, move on.
    func tick() {
        guard latestSource != nil else { return }
        noteApplied()
        let seconds = nowSeconds
        var changed = predictor.isFading(nowSeconds: seconds) && settings.prediction
        if latestSource != .protocolMessage, glideReference(at: seconds) { changed = true }
        if changed { pushRendered(at: seconds) }
    }

    /// The renderer's pose: the newest one extrapolated over the latency, recentered and
    /// reduced to what the mode follows.
    private func pushRendered(at seconds: Double) {
        var orientation = raw.orientation
        if settings.prediction, let predicted = predictor.predicted(horizonSeconds: latencySeconds(), nowSeconds: seconds) {
            orientation = predicted
        }
        rendered = followed(orientation, position: raw.positionMetres)
        commands.push(.setHeadPose(rendered, glide: true))
    }

    /// The prediction's horizon now: the latency plus the half interval a pose waits for the
    /// next, bounded; nil when prediction is off.
    var predictionHorizonSeconds: Double? {
        guard settings.prediction else { return nil }
        let p = predictor.parameters
        return min(max(0, latencySeconds()) + predictor.intervalSeconds / 2, p.maximumHorizonSeconds)
    }

    /// Keeps when the newest pose was first rendered, before anything pushed later can be.
    private func noteApplied() {
        guard firstApplied == nil, let arrival = lastArrival else { return }
        let applied = engine.headPoseApplied
        if applied.outputFrame >= arrival.outputFrame, applied.monotonicNanoseconds >= arrival.monotonicNanoseconds {
            firstApplied = applied
        }
    }

    // MARK: Automatic recentering

    /// Notes whether a tracked head is still where it came to rest.
    private func followRest(at seconds: Double) {
        guard settings.recenterAfterSeconds != nil else { return }
        if let rest, angleDegrees(rest.orientation, raw.orientation) <= settings.restDegrees { return }
        rest = (raw.orientation, seconds)
        lastGlideSeconds = nil
    }

    /// Once the head has rested long enough, the reference's yaw glides towards the resting
    /// head's yaw (pitch and roll, which gravity keeps true on a tracker, are left alone).
    /// Returns whether the reference moved.
    private func glideReference(at seconds: Double) -> Bool {
        guard let after = settings.recenterAfterSeconds, let rest, let arrival = lastArrival,
              seconds - rest.sinceSeconds >= after,
              // The tracker still sends: a silent one is not a resting head.
              seconds - Double(arrival.monotonicNanoseconds) * 1e-9 < 0.5 else { return false }
        let currentYaw = yawPart(reference)
        let target = yawPart(raw.orientation) * (currentYaw.conjugate * reference)
        let remaining = angleDegrees(reference, target)
        guard remaining > 0.05 else {
            lastGlideSeconds = seconds
            return false
        }
        if lastGlideSeconds == nil { automaticRecenters += 1 }
        let dt = min(max(0, seconds - (lastGlideSeconds ?? seconds)), 0.1)
        lastGlideSeconds = seconds
        guard dt > 0 else { return false }
        reference = SceneSoundDSP.Quaternion.slerp(reference, target, min(1, dt / settings.recenterGlideSeconds)).normalized
        return true
    }

    // MARK: Status

    var status: StatusDocument.Head {
        let pose = effective
        let orientation = pose.orientation
        let (pitch, roll) = pitchAndRollDegrees(orientation)
        let p = pose.positionMetres
        var head = StatusDocument.Head(
            yawDegrees: orientation.yawDegrees, pitchDegrees: pitch, rollDegrees: roll,
            quaternion: [orientation.w, orientation.x, orientation.y, orientation.z], positionMetres: [p.x, p.y, p.z],
            posesReceived: poseCount, opentrackPackets: openTrackAccepted, opentrackRejectedPackets: openTrackRejected,
            opentrackRateLimitedPackets: openTrackRateLimited)
        head.tracking = settings.mode.rawValue
        head.oscPackets = oscAccepted
        head.oscRejectedPackets = oscRejected
        head.oscRateLimitedPackets = oscRateLimited
        head.opentrackIgnoredPackets = openTrackIgnored
        head.oscIgnoredPackets = oscIgnored
        head.trackerChoice = settings.tracker.rawValue
        head.trackerRateLimitPosesPerSecond = reportedPosesPerSecondLimit
        head.renderedYawDegrees = rendered.orientation.yawDegrees
        head.predictionSeconds = predictionHorizonSeconds
        head.recenterAfterSeconds = settings.recenterAfterSeconds
        head.automaticRecenters = settings.recenterAfterSeconds == nil ? nil : automaticRecenters
        guard let arrival = lastArrival else { return head }
        let now = nowNanoseconds()
        let seconds = Double(now) * 1e-9
        if let source = latestSource, seconds - Double(arrival.monotonicNanoseconds) * 1e-9 < 1 {
            head.tracker = source.rawValue
            head.trackerPosesPerSecond = Double(recentArrivals.filter { $0 >= seconds - 1 }.count)
        }
        head.poseAgeSeconds = Double(now - arrival.monotonicNanoseconds) * 1e-9
        head.poseReceivedOutputFrame = arrival.outputFrame
        noteApplied()
        if let applied = firstApplied {
            head.poseAppliedOutputFrame = applied.outputFrame
            // From arrival to the render thread using it; the sound leaves after the output's latency.
            head.motionToRenderSeconds = Double(applied.monotonicNanoseconds - arrival.monotonicNanoseconds) * 1e-9
        }
        return head
    }
}

/// Pitch (+ up) and roll (+ tilted right) of an orientation, in degrees, for display.
func pitchAndRollDegrees(_ orientation: SceneSoundDSP.Quaternion) -> (pitch: Double, roll: Double) {
    let forward = orientation.rotate(Vector3(x: 0, y: 0, z: -1))
    let up = orientation.rotate(Vector3(x: 0, y: 1, z: 0))
    let pitch = asin(max(-1, min(1, forward.y))) * 180 / .pi
    let roll = atan2(-up.x * forward.z + up.z * forward.x, up.y) * 180 / .pi
    return (pitch, roll)
}

/// The turn about the vertical axis alone: the heading of the head's forward direction (the
/// yaw `status` shows), with pitch and roll taken out.
func yawPart(_ q: SceneSoundDSP.Quaternion) -> SceneSoundDSP.Quaternion {
    SceneSoundDSP.Quaternion(yawDegrees: q.yawDegrees)
}

/// The angle between two orientations, in degrees.
func angleDegrees(_ a: SceneSoundDSP.Quaternion, _ b: SceneSoundDSP.Quaternion) -> Double {
    rotationVectorDegrees(b * a.conjugate).length
}
