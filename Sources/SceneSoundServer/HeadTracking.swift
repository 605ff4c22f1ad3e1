import Foundation
import SceneSoundDSP
import SceneSoundEngine
import struct SceneSoundProtocol.StatusDocument
import SceneSoundPlatform

/// The listener's head as the server knows it: the latest pose from any source (protocol
/// HEAD_POSE, opentrack), the recenter reference, and when poses arrived — for `status` and
/// the motion-to-sound latency. Event-loop confined.
final class HeadTracking {
    private let engine: Engine
    private var raw = HeadPose.neutral
    private var reference = Quaternion.identity
    /// Monotonic time and engine output frame when the newest pose arrived.
    private(set) var lastArrival: (monotonicNanoseconds: Int, outputFrame: Int)?
    private(set) var poseCount = 0
    var openTrackAccepted = 0
    var openTrackRejected = 0

    init(engine: Engine) { self.engine = engine }

    /// The pose rendered: the raw pose seen from the recentered reference.
    var effective: HeadPose {
        HeadPose(orientation: (reference.conjugate * raw.orientation).normalized, positionMetres: raw.positionMetres)
    }

    func update(_ pose: HeadPose) {
        raw = HeadPose(orientation: pose.orientation.normalized, positionMetres: pose.positionMetres)
        lastArrival = (MonotonicClock.nowNanoseconds(), engine.renderedFrames)
        poseCount += 1
        engine.commands.push(.setHeadPose(effective, glide: true))
    }

    /// The current orientation becomes straight ahead.
    func recenter() {
        reference = raw.orientation
        engine.commands.push(.setHeadPose(effective, glide: true))
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
            posesReceived: poseCount, opentrackPackets: openTrackAccepted, opentrackRejectedPackets: openTrackRejected)
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

/// opentrack's "UDP over network" output: 48-byte datagrams of six little-endian doubles —
/// x, y, z in centimetres, yaw, pitch, roll in degrees.
///
/// Axes, as opentrack's own X-Plane output interprets them: yaw positive = head turned left,
/// pitch positive = looking up, roll positive = tilted left, x positive = moved left,
/// y positive = up, z positive = moved back (away from the screen). SceneSound's conventions
/// (docs/ARCHITECTURE.md "Conventions") are yaw + left, pitch + up, roll + right, +x right, +y up, +z back, so:
///
///   yaw = yaw, pitch = pitch, roll = −roll, x = −x/100, y = y/100, z = z/100 (metres).
///
/// A tracker whose axes differ is corrected in opentrack's Output options (Invert).
enum OpenTrackPacket {
    static let byteCount = 48

    static func decode(_ bytes: UnsafeRawBufferPointer) -> HeadPose? {
        guard bytes.count == byteCount else { return nil }
        var values = [Double](repeating: 0, count: 6)
        for i in 0..<6 {
            values[i] = Double(bitPattern: UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self)))
        }
        guard values.allSatisfy({ $0.isFinite }),
              values[0...2].allSatisfy({ abs($0) <= 1000 }),        // within 10 m
              values[3...5].allSatisfy({ abs($0) <= 360 }) else { return nil }
        let (x, y, z, yaw, pitch, roll) = (values[0], values[1], values[2], values[3], values[4], values[5])
        return HeadPose(orientation: Quaternion(yawDegrees: yaw, pitchDegrees: pitch, rollDegrees: -roll),
                        positionMetres: Vector3(x: -x / 100, y: y / 100, z: z / 100))
    }
}
