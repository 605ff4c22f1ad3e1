import Foundation
import Testing
import SceneSoundProtocol
@testable import SceneSoundServer
import SceneSoundTestSupport

/// `scenesound head tracker` (HEAD_TRACKER_USE) through the real daemon: the input chosen is
/// followed and the other's datagrams ignored and counted, a pose over the protocol always
/// applies, and the rate set bounds the poses a second followed.
@Suite(.serialized) struct HeadTrackerChoiceTests {
    static func head(_ client: RawClient) throws -> StatusDocument.Head { try HeadTrackingTests.head(client) }

    static func osc(yaw: Float) -> [UInt8] { OSCHeadTrackingTests.message("/SceneRotator/ypr", [yaw, 0, 0]) }
    static func openTrack(yaw: Double) -> [UInt8] { HeadTrackingTests.openTrackPacket([0, 0, 0, yaw, 0, 0]) }

    @Test func theChosenTrackerIsFollowedAndTheOtherIgnored() throws {
        let openTrackPort = HeadTrackingTests.freeUDPPort(), oscPort = HeadTrackingTests.freeUDPPort()
        let daemon = try Daemon(extraArguments: ["--opentrack", String(openTrackPort), "--osc", String(oscPort),
                                                 "--max-osc-packets-per-second", "500", "--head-prediction", "off"])
        let client = try RawClient(socketPath: daemon.socketPath)
        try waitUntil(timeoutSeconds: 5, "the listeners") {
            daemon.log.contains("opentrack input on 127.0.0.1:\(openTrackPort)") && daemon.log.contains("OSC input on 127.0.0.1:\(oscPort)")
        }
        var head = try Self.head(client)
        // At start: any tracker, each at its own limit (the larger reported).
        #expect(head.trackerChoice == "any" && head.trackerRateLimitPosesPerSecond == 1000, "\(head)")

        let chosen = try runCLI(["head", "tracker", "opentrack", "--socket", daemon.socketPath])
        #expect(chosen.status == 0, "\(chosen.error)")
        head = try Self.head(client)
        #expect(head.trackerChoice == "opentrack" && head.trackerRateLimitPosesPerSecond == 1000, "\(head)")

        // An OSC pose is ignored (counted, not read); an opentrack pose applies.
        HeadTrackingTests.sendUDP(Self.osc(yaw: 40), port: oscPort)
        try waitUntil(timeoutSeconds: 5, "the OSC datagram ignored") { try Self.head(client).oscIgnoredPackets == 1 }
        head = try Self.head(client)
        #expect(abs(head.yawDegrees) < 1e-6 && head.oscPackets == 0 && head.posesReceived == 0, "\(head)")
        HeadTrackingTests.sendUDP(Self.openTrack(yaw: 25), port: openTrackPort)
        try waitUntil(timeoutSeconds: 5, "the opentrack pose") { try Self.head(client).opentrackPackets == 1 }
        #expect(abs(try Self.head(client).yawDegrees - 25) < 1e-6)
        HeadTrackingTests.sendUDP(Self.osc(yaw: -40), port: oscPort)
        try waitUntil(timeoutSeconds: 5, "the second OSC datagram ignored") { try Self.head(client).oscIgnoredPackets == 2 }
        head = try Self.head(client)
        print("head tracker opentrack: OSC yaw 40° and −40° ignored, opentrack yaw 25°: yaw \(head.yawDegrees)°, tracker \(head.tracker ?? "none")")
        #expect(abs(head.yawDegrees - 25) < 1e-6 && head.tracker == "opentrack" && head.opentrackIgnoredPackets == 0, "\(head)")
        // A pose over the protocol always applies.
        let set = try runCLI(["head", "set", "--yaw", "10", "--socket", daemon.socketPath])
        #expect(set.status == 0, "\(set.error)")
        #expect(abs(try Self.head(client).yawDegrees - 10) < 1e-6)

        // The other way round, and back to any.
        #expect(try runCLI(["head", "tracker", "osc", "--socket", daemon.socketPath]).status == 0)
        HeadTrackingTests.sendUDP(Self.openTrack(yaw: 70), port: openTrackPort)
        try waitUntil(timeoutSeconds: 5, "the opentrack datagram ignored") { try Self.head(client).opentrackIgnoredPackets == 1 }
        #expect(abs(try Self.head(client).yawDegrees - 10) < 1e-6)
        HeadTrackingTests.sendUDP(Self.osc(yaw: -30), port: oscPort)
        try waitUntil(timeoutSeconds: 5, "the OSC pose") { try Self.head(client).oscPackets == 1 }
        head = try Self.head(client)
        #expect(abs(head.yawDegrees + 30) < 1e-3 && head.trackerChoice == "osc" && head.trackerRateLimitPosesPerSecond == 500, "\(head)")
        let show = try runCLI(["head", "show", "--socket", daemon.socketPath])
        #expect(show.output.contains("following osc only, at most 500 poses/s from each input"), "\(show.output)")
        let status = try runCLI(["status", "--socket", daemon.socketPath])
        #expect(status.status == 0 && status.output.contains("following osc only"), "\(status.output)")
        #expect(try runCLI(["head", "tracker", "any", "--socket", daemon.socketPath]).status == 0)
        HeadTrackingTests.sendUDP(Self.openTrack(yaw: 15), port: openTrackPort)
        try waitUntil(timeoutSeconds: 5, "the opentrack pose") { try Self.head(client).opentrackPackets == 2 }
        #expect(abs(try Self.head(client).yawDegrees - 15) < 1e-6)
        #expect(try Self.head(client).opentrackIgnoredPackets == 1)

        // Bad values are usage errors naming what is accepted; so they are on the wire.
        let bad = try runCLI(["head", "tracker", "udp", "--socket", daemon.socketPath])
        #expect(bad.status == 2 && bad.error.contains("tracker 'udp' is not known (accepted: any, opentrack, osc)"), "\(bad.error)")
        for rate in ["5", "1001", "fast"] {
            let badRate = try runCLI(["head", "tracker", "any", "--rate", rate, "--socket", daemon.socketPath])
            #expect(badRate.status == 2 && badRate.error.contains("--rate '\(rate)' is out of range (accepted: 10 to 1000 poses per second, or default)"),
                    "\(badRate.error)")
        }
        let refused = try RawClient(socketPath: daemon.socketPath).request(.headTrackerUse(HeadTrackerUse(tracker: .osc, posesPerSecond: 5)))
        guard case .error(let error) = refused else { throw TestFailure("5 poses/s accepted: \(refused)") }
        #expect(error.code == .invalidArgument && error.message.contains("poses_per_second 5 out of range"), "\(error)")
        #expect(try Self.head(client).trackerChoice == "any")
    }

    /// Sends opentrack poses at about `hz` a second for `seconds`, then returns the status at once
    /// (while the tracker is live).
    static func sendOpenTrack(hz: Double, seconds: Double, port: Int, client: RawClient) throws -> (StatusDocument.Head, sent: Int, elapsed: Double) {
        let started = Date()
        var sent = 0
        while Date().timeIntervalSince(started) < seconds {
            HeadTrackingTests.sendUDP(Self.openTrack(yaw: Double(sent % 90)), port: port)
            sent += 1
            Thread.sleep(until: started.addingTimeInterval(Double(sent) / hz))
        }
        return (try Self.head(client), sent, Date().timeIntervalSince(started))
    }

    @Test func theRateSetBoundsThePosesFollowed() throws {
        let port = HeadTrackingTests.freeUDPPort()
        let daemon = try Daemon(extraArguments: ["--opentrack", String(port), "--head-prediction", "off"])
        let client = try RawClient(socketPath: daemon.socketPath)
        try waitUntil(timeoutSeconds: 5, "the opentrack listener") { daemon.log.contains("opentrack input on 127.0.0.1:\(port)") }

        // At its own limit (1000 a second) a tracker at 100 a second is followed whole.
        let (free, freeSent, _) = try Self.sendOpenTrack(hz: 100, seconds: 1.5, port: port, client: client)
        print("opentrack at 100 poses/s, no rate set: \(free.trackerPosesPerSecond ?? 0) poses/s followed, \(free.opentrackRateLimitedPackets) of \(freeSent) dropped")
        #expect((free.trackerPosesPerSecond ?? 0) >= 60 && free.opentrackRateLimitedPackets == 0, "\(free)")

        let chosen = try runCLI(["head", "tracker", "opentrack", "--rate", "20", "--socket", daemon.socketPath])
        #expect(chosen.status == 0, "\(chosen.error)")
        #expect(try Self.head(client).trackerRateLimitPosesPerSecond == 20)
        let before = try Self.head(client)
        let (limited, sent, elapsed) = try Self.sendOpenTrack(hz: 100, seconds: 2.5, port: port, client: client)
        try waitUntil(timeoutSeconds: 5, "every datagram to be seen") {
            let head = try Self.head(client)
            return head.opentrackPackets + head.opentrackRateLimitedPackets == before.opentrackPackets + before.opentrackRateLimitedPackets + sent
        }
        let accepted = try Self.head(client).opentrackPackets - before.opentrackPackets
        print("opentrack at 100 poses/s, --rate 20: \(limited.trackerPosesPerSecond ?? 0) poses/s followed, \(accepted) of \(sent) taken in \(elapsed) s")
        // The last second: 20 (the burst of a second's worth is spent by then).
        #expect((12...22).contains(limited.trackerPosesPerSecond ?? 0), "\(limited)")
        // A bucket of 20, refilled at 20 a second.
        #expect(accepted >= 20 && Double(accepted) <= 20 + 20 * elapsed + 1, "\(accepted) in \(elapsed) s")

        // Back to the input's own limit.
        #expect(try runCLI(["head", "tracker", "opentrack", "--socket", daemon.socketPath]).status == 0)
        let (again, _, _) = try Self.sendOpenTrack(hz: 100, seconds: 1.5, port: port, client: client)
        #expect((again.trackerPosesPerSecond ?? 0) >= 60 && again.trackerRateLimitPosesPerSecond == 1000, "\(again)")
    }
}
