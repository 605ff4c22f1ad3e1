import Foundation
import SceneSoundDSP
import SceneSoundEngine
import SceneSoundPlatform
import SceneSoundProtocol

/// The listener's head as the server knows it: the latest pose from any source (protocol
/// HEAD_POSE, opentrack), the recenter reference, and when poses arrived — for `status` and
/// the motion-to-sound latency. Event-loop confined.
final class HeadTracking {
    private let engine: Engine
    private let commands: EngineCommandQueue
    private var raw = SceneSoundDSP.HeadPose.neutral
    private var reference = SceneSoundDSP.Quaternion.identity
    /// Monotonic time and engine output frame when the newest pose arrived.
    private(set) var lastArrival: (monotonicNanoseconds: Int, outputFrame: Int)?
    private(set) var poseCount = 0
    var openTrackAccepted = 0
    var openTrackRejected = 0
    /// Datagrams over the opentrack rate, dropped unread.
    var openTrackRateLimited = 0

    /// `engine` is read for its output clock and when a pose took effect; commands go through `commands`.
    init(engine: Engine, commands: EngineCommandQueue) {
        self.engine = engine
        self.commands = commands
    }

    /// The pose rendered: the raw pose seen from the recentered reference.
    var effective: SceneSoundDSP.HeadPose {
        SceneSoundDSP.HeadPose(orientation: (reference.conjugate * raw.orientation).normalized, positionMetres: raw.positionMetres)
    }

    func update(_ pose: SceneSoundDSP.HeadPose) {
        raw = SceneSoundDSP.HeadPose(orientation: pose.orientation.normalized, positionMetres: pose.positionMetres)
        lastArrival = (MonotonicClock.nowNanoseconds(), engine.renderedFrames)
        poseCount += 1
        commands.push(.setHeadPose(effective, glide: true))
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
        update(pose)
    }

    /// The current orientation becomes straight ahead.
    func recenter() {
        reference = raw.orientation
        commands.push(.setHeadPose(effective, glide: true))
    }

    var status: StatusDocument.Head {
        let pose = effective
        let orientation = pose.orientation
        let forward = orientation.rotate(Vector3(x: 0, y: 0, z: -1))
        let up = orientation.rotate(Vector3(x: 0, y: 1, z: 0))
        let pitch = asin(max(-1, min(1, forward.y))) * 180 / .pi
        let roll = atan2(-up.x * forward.z + up.z * forward.x, up.y) * 180 / .pi
        let p = pose.positionMetres
        var head = StatusDocument.Head(
            yawDegrees: orientation.yawDegrees, pitchDegrees: pitch, rollDegrees: roll,
            quaternion: [orientation.w, orientation.x, orientation.y, orientation.z], positionMetres: [p.x, p.y, p.z],
            posesReceived: poseCount, opentrackPackets: openTrackAccepted, opentrackRejectedPackets: openTrackRejected,
            opentrackRateLimitedPackets: openTrackRateLimited)
        guard let arrival = lastArrival else { return head }
        let now = MonotonicClock.nowNanoseconds()
        head.poseAgeSeconds = Double(now - arrival.monotonicNanoseconds) * 1e-9
        head.poseReceivedOutputFrame = arrival.outputFrame
        let applied = engine.headPoseApplied
        if applied.outputFrame >= arrival.outputFrame, applied.monotonicNanoseconds >= arrival.monotonicNanoseconds {
            head.poseAppliedOutputFrame = applied.outputFrame
            // From arrival to the render thread using it; the sound leaves after the output's latency.
            head.motionToRenderSeconds = Double(applied.monotonicNanoseconds - arrival.monotonicNanoseconds) * 1e-9
        }
        return head
    }
}
