import Foundation
import Testing
import SceneSoundDSP
import SceneSoundProtocol
@testable import SceneSoundServer
import SceneSoundTestSupport

/// OSC head poses: datagrams built byte by byte as OSC 1.0 senders send them (big-endian,
/// strings padded to four bytes), decoded by liblo, mapped onto SceneSound's axes; and sent
/// to the real daemon's `--osc` port.
@Suite(.serialized) struct OSCHeadTrackingTests {
    static func oscString(_ text: String) -> [UInt8] {
        var bytes = Array(text.utf8) + [0]
        while bytes.count % 4 != 0 { bytes.append(0) }
        return bytes
    }

    static func message(_ address: String, _ floats: [Float]) -> [UInt8] {
        oscString(address) + oscString("," + String(repeating: "f", count: floats.count))
            + floats.flatMap { withUnsafeBytes(of: $0.bitPattern.bigEndian) { Array($0) } }
    }

    static func bundle(_ elements: [[UInt8]]) -> [UInt8] {
        oscString("#bundle") + [0, 0, 0, 0, 0, 0, 0, 1]
            + elements.flatMap { withUnsafeBytes(of: UInt32($0.count).bigEndian) { Array($0) } + $0 }
    }

    static let ahead = Vector3(x: 0, y: 0, z: -1)

    static func decode(_ bytes: [UInt8], _ formats: [OSCPoseFormat] = [.sceneRotatorYawPitchRoll, .sceneRotatorQuaternions]) -> OSCPacket.Outcome {
        bytes.withUnsafeBytes { OSCPacket.decode($0, formats: formats) }
    }

    static func pose(_ bytes: [UInt8], _ formats: [OSCPoseFormat] = [.sceneRotatorYawPitchRoll, .sceneRotatorQuaternions]) throws -> SceneSoundDSP.HeadPose {
        guard case .pose(let pose) = decode(bytes, formats) else { throw TestFailure("no pose in \(bytes)") }
        let (pitch, roll) = pitchAndRollDegrees(pose.orientation)
        print(String(format: "OSC %@: decoded yaw %.1f°, pitch %.1f°, roll %.1f°", describe(bytes), pose.orientation.yawDegrees, pitch, roll))
        return pose
    }

    static func describe(_ bytes: [UInt8]) -> String {
        String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self) + (bytes.starts(with: oscString("#bundle")) ? " (bundle)" : "")
    }

    // MARK: Each sender's axes against SceneSound's conventions

    /// IEM SceneRotator's angles are in its own right-handed axes (x front, y left, z up): yaw +
    /// turns left, pitch + tips the nose down, roll + tilts right. Positive yaw turns the head
    /// left here too, so a source ahead is then heard on the right.
    @Test func sceneRotatorsYawPitchRollMapOntoTheConventions() throws {
        let left = try Self.pose(Self.message("/SceneRotator/ypr", [90, 0, 0]))
        #expect(abs(left.relative(Self.ahead).azimuthDegrees + 90) < 1e-4)
        let noseDown = try Self.pose(Self.message("/SceneRotator/ypr", [0, 30, 0]))
        #expect(abs(noseDown.relative(Self.ahead).elevationDegrees - 30) < 1e-4)  // ahead is now above the gaze
        let tiltedRight = try Self.pose(Self.message("/SceneRotator/ypr", [0, 0, 20]))
        #expect(abs(pitchAndRollDegrees(tiltedRight.orientation).roll - 20) < 1e-4)
        // Its quaternions are the same rotations in the same axes.
        func iem(_ axis: (Float, Float, Float), _ degrees: Float) -> [Float] {
            let half = degrees * .pi / 360
            return [cos(half), axis.0 * sin(half), axis.1 * sin(half), axis.2 * sin(half)]
        }
        for (q, expected) in [(iem((0, 0, 1), 90), left), (iem((0, 1, 0), 30), noseDown), (iem((1, 0, 0), 20), tiltedRight)] {
            let pose = try Self.pose(Self.message("/SceneRotator/quaternions", q))
            #expect(angleDegrees(pose.orientation, expected.orientation) < 1e-3)
        }
        // IEM's composed order (yaw, then pitch, then roll): the same as the quaternion of it.
        let composed = try Self.pose(Self.message("/SceneRotator/ypr", [40, -15, 10]))
        #expect(abs(composed.orientation.yawDegrees - 40) < 1e-3)
        #expect(abs(pitchAndRollDegrees(composed.orientation).pitch - 15) < 1e-3)
    }

    /// Other senders through `--osc-address` and `--osc-axes`.
    @Test func otherSendersAxesAreMappedByTheirAxesSpecification() throws {
        // Mach1's M1-AirPodOSC: yaw + to the right.
        let mach1 = try OSCPoseFormat(address: "/orientation", axes: "-yaw,pitch,roll")
        let right = try Self.pose(Self.message("/orientation", [90, 0, 0]), [mach1])
        #expect(abs(right.relative(Self.ahead).azimuthDegrees - 90) < 1e-4)
        // Sensors2OSC's /gamerotationvector: Android's quaternion x, y, z, w in the world's east,
        // north, up axes; the phone lying on the head, screen up, its top forward.
        let phone = try OSCPoseFormat(address: "/gamerotationvector", axes: "x,-z,y,w")
        let half = Float.pi / 4  // turned 90° counter-clockwise seen from above: left
        let turned = try Self.pose(Self.message("/gamerotationvector", [0, 0, sin(half), cos(half)]), [phone])
        #expect(abs(turned.orientation.yawDegrees - 90) < 1e-3)
        // The top tipped up 30° (about the phone's x, east): the head looks up.
        let tipped = try Self.pose(Self.message("/gamerotationvector", [sin(Float.pi / 12), 0, 0, cos(Float.pi / 12)]), [phone])
        #expect(abs(pitchAndRollDegrees(tipped.orientation).pitch - 30) < 1e-3)
        // Without the w (Android's rotation vector as three values): derived.
        let threeValues = try Self.pose(Self.message("/gamerotationvector", [0, 0, sin(half)]), [phone])
        #expect(angleDegrees(threeValues.orientation, turned.orientation) < 1e-3)
        // A bundle: the last pose in it wins.
        let bundled = try Self.pose(Self.bundle([Self.message("/SceneRotator/ypr", [10, 0, 0]), Self.message("/SceneRotator/ypr", [20, 0, 0])]))
        #expect(abs(bundled.orientation.yawDegrees - 20) < 1e-3)
    }

    @Test func badAxesSpecificationsAreRefusedByName() {
        for bad in ["yaw,pitch", "yaw,yaw,roll", "w,x,y", "yaw,pitch,z", "heading,pitch,roll", ""] {
            #expect(throws: OSCPoseFormat.Invalid.self) { try OSCPoseFormat(address: "/a", axes: bad) }
        }
        #expect(throws: OSCPoseFormat.Invalid.self) { try OSCPoseFormat(address: "no-slash") }
    }

    @Test func malformedPacketsAreToldApartFromOtherAddresses() {
        #expect(Self.decode(Self.message("/accelerometer", [0, 0, 9.8])) == .otherAddress)
        var malformed: [[UInt8]] = [
            [], [0x2f], Array(repeating: 0x7f, count: 64),
            Self.message("/SceneRotator/ypr", [1, 2]),                       // too few
            Self.message("/SceneRotator/ypr", [.nan, 0, 0]),                  // not finite
            Self.message("/SceneRotator/ypr", [9999, 0, 0]),                  // not an angle
            Self.message("/SceneRotator/quaternions", [0, 0, 0, 0]),          // not a rotation
            Self.oscString("/SceneRotator/ypr") + Self.oscString(",s") + Self.oscString("up"),  // a string
            Array(Self.message("/SceneRotator/ypr", [1, 2, 3]).dropLast(2)),  // cut short
            Self.bundle([Self.message("/SceneRotator/ypr", [1, 2, 3])]).dropLast(3).map { $0 },
        ]
        malformed.append(Self.oscString("#bundle") + [0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xf0])
        for bytes in malformed {
            guard case .malformed(let reason) = Self.decode(bytes) else {
                Issue.record("\(bytes.count) bytes not malformed: \(Self.decode(bytes))")
                continue
            }
            #expect(!reason.isEmpty && !reason.contains("\n"))
        }
    }

    // MARK: Through the daemon

    @Test func oscPosesTurnTheHeadThroughTheDaemon() throws {
        let port = HeadTrackingTests.freeUDPPort()
        let daemon = try Daemon(extraArguments: ["--osc", String(port), "--osc-address", "/gamerotationvector", "--osc-axes", "x,-z,y,w"])
        let client = try RawClient(socketPath: daemon.socketPath)
        try waitUntil(timeoutSeconds: 5, "the OSC listener") { daemon.log.contains("OSC input on 127.0.0.1:\(port)") }
        let half = Float.pi / 8
        let sends: [([UInt8], Double)] = [
            (Self.message("/SceneRotator/ypr", [30, 0, 0]), 30),
            (Self.message("/SceneRotator/quaternions", [cos(half), 0, 0, sin(half)]), 45),
            (Self.bundle([Self.message("/SceneRotator/ypr", [-10, 0, 0]), Self.message("/SceneRotator/ypr", [-20, 0, 0])]), -20),
            (Self.message("/gamerotationvector", [0, 0, -sin(half), cos(half)]), -45),
        ]
        for (i, (datagram, yaw)) in sends.enumerated() {
            HeadTrackingTests.sendUDP(datagram, port: port)
            try waitUntil(timeoutSeconds: 5, "OSC pose \(i + 1)") { try HeadTrackingTests.head(client).oscPackets == i + 1 }
            let head = try HeadTrackingTests.head(client)
            print(String(format: "daemon, OSC %@: yaw %.2f°, pitch %.2f°, roll %.2f°, tracker %@", Self.describe(datagram),
                         head.yawDegrees, head.pitchDegrees, head.rollDegrees, head.tracker ?? "none"))
            #expect(abs(head.yawDegrees - yaw) < 1e-3)
            #expect(head.tracker == "osc")
        }
        // Other addresses are let by; a burst of garbage is counted and logged once.
        HeadTrackingTests.sendUDP(Self.message("/accelerometer", [0, 0, 9.8]), port: port)
        for size in [1, 7, 40, 64, 200] { HeadTrackingTests.sendUDP([UInt8](repeating: 0x41, count: size), port: port) }
        try waitUntil(timeoutSeconds: 5, "the garbage to be counted") { try HeadTrackingTests.head(client).oscRejectedPackets == 5 }
        #expect(try HeadTrackingTests.head(client).oscPackets == 4)
        #expect(abs(try HeadTrackingTests.head(client).yawDegrees + 45) < 1e-3)
        let reports = daemon.log.components(separatedBy: "\n").filter { $0.contains("OSC: malformed") }
        #expect(reports.count == 1, "\(reports)")
        // A pose just before each look, so the tracker counts as live (it is for a second).
        HeadTrackingTests.sendUDP(Self.message("/SceneRotator/ypr", [5, 0, 0]), port: port)
        try waitUntil(timeoutSeconds: 5, "one more pose") { try HeadTrackingTests.head(client).oscPackets == 5 }
        let show = try runCLI(["head", "show", "--socket", daemon.socketPath])
        print(show.output)
        #expect(show.status == 0 && show.output.contains("tracker osc") && show.output.contains("prediction"))
        HeadTrackingTests.sendUDP(Self.message("/SceneRotator/ypr", [6, 0, 0]), port: port)
        try waitUntil(timeoutSeconds: 5, "one more pose") { try HeadTrackingTests.head(client).oscPackets == 6 }
        let status = try runCLI(["status", "--socket", daemon.socketPath])
        #expect(status.status == 0 && status.output.contains("tracker osc"), "\(status.output)")
    }

    @Test func anOSCFloodIsLimitedToTheConfiguredRate() throws {
        let port = HeadTrackingTests.freeUDPPort()
        let daemon = try Daemon(extraArguments: ["--osc", String(port), "--max-osc-packets-per-second", "10"])
        let client = try RawClient(socketPath: daemon.socketPath)
        try waitUntil(timeoutSeconds: 5, "the OSC listener") { daemon.log.contains("OSC input on 127.0.0.1:\(port)") }
        let started = Date()
        for i in 0..<60 { HeadTrackingTests.sendUDP(Self.message("/SceneRotator/ypr", [Float(i), 0, 0]), port: port) }
        try waitUntil(timeoutSeconds: 5, "every datagram to be seen") {
            let head = try HeadTrackingTests.head(client)
            return (head.oscPackets ?? 0) + (head.oscRateLimitedPackets ?? 0) == 60
        }
        let elapsed = Date().timeIntervalSince(started)
        let accepted = try HeadTrackingTests.head(client).oscPackets ?? 0
        #expect(accepted >= 10 && Double(accepted) <= 10 + 10 * elapsed + 1, "\(accepted) in \(elapsed) s")
    }
}
