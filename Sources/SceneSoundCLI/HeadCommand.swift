import ArgumentParser
import Foundation
import SceneSoundClient
import SceneSoundDSP
import SceneSoundProtocol
import SceneSoundStatusJSON

struct HeadCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "head",
        abstract: "Set, recenter and show the listener's head pose.",
        discussion: """
            Positive yaw turns the head left, positive pitch looks up, positive roll tilts it \
            to the right: after 'head set --yaw 90' a window straight ahead sounds from the right.
            """,
        subcommands: [HeadSetCommand.self, HeadRecenterCommand.self, HeadTrackingCommand.self, HeadTrackerCommand.self, HeadShowCommand.self])
}

struct HeadSetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "set", abstract: "Set the head's orientation (and position).")

    @Option(name: .customLong("yaw"), parsing: .unconditional, help: ArgumentHelp("Degrees, + = turned left.", valueName: "DEG"))
    var yawDegrees: Double

    @Option(name: .customLong("pitch"), parsing: .unconditional, help: ArgumentHelp("Degrees, + = looking up.", valueName: "DEG"))
    var pitchDegrees: Double = 0

    @Option(name: .customLong("roll"), parsing: .unconditional, help: ArgumentHelp("Degrees, + = tilted right.", valueName: "DEG"))
    var rollDegrees: Double = 0

    @Option(name: .customLong("position"), parsing: .unconditional,
            help: ArgumentHelp("Head position x,y,z in metres (+x right, +y up, +z back).", valueName: "X,Y,Z"))
    var position: String?

    @OptionGroup var server: ServerOptions

    func validate() throws {
        for (name, value, limit) in [("--yaw", yawDegrees, 360.0), ("--pitch", pitchDegrees, 90), ("--roll", rollDegrees, 180)] {
            guard value.isFinite, abs(value) <= limit else {
                throw ValidationError("\(name) \(value) is out of range (accepted: -\(Int(limit)) to \(Int(limit)) degrees)")
            }
        }
        _ = try positionMetres()
    }

    private func positionMetres() throws -> PositionMetres? {
        guard let position else { return nil }
        let parts = position.split(separator: ",").compactMap { Float($0.trimmingCharacters(in: .whitespaces)) }
        guard parts.count == 3, parts.allSatisfy({ $0.isFinite && abs($0) <= 10 }) else {
            throw ValidationError("--position '\(position)' is not valid (accepted: three numbers x,y,z in metres, each within ±10)")
        }
        return PositionMetres(x: parts[0], y: parts[1], z: parts[2])
    }

    func run() throws {
        let q = SceneSoundDSP.Quaternion(yawDegrees: yawDegrees, pitchDegrees: pitchDegrees, rollDegrees: rollDegrees)
        let pose = SceneSoundProtocol.HeadPose(timestampNanoseconds: 0,
                                               orientation: .init(w: Float(q.w), x: Float(q.x), y: Float(q.y), z: Float(q.z)),
                                               position: try positionMetres())
        try server.exchange { connection throws(ClientError) in
            try connection.sendHeadPose(pose)
            // A round trip, so the pose has been taken when this command returns.
            _ = try connection.status()
        }
    }
}

struct HeadRecenterCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "recenter", abstract: "Make the current orientation straight ahead.")

    @OptionGroup var server: ServerOptions

    func run() throws {
        try server.exchange { connection throws(ClientError) in try connection.recenterHead() }
    }
}

struct HeadTrackingCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tracking",
        abstract: "Choose what the sound follows of a tracked head, live: full, yaw-only or off.",
        discussion: "As scenesoundd's --head-tracking and --head-recenter-seconds, until the daemon restarts.")

    @Argument(help: ArgumentHelp("full, yaw-only or off (trackers ignored, the head straight ahead).", valueName: "MODE"))
    var mode: String

    @Option(name: .customLong("recenter-after"), parsing: .unconditional,
            help: ArgumentHelp("Once the tracked head has rested this long, straight ahead glides to it (1 to 3600 s), or off.", valueName: "S|off"))
    var recenterAfter = "off"

    @OptionGroup var server: ServerOptions

    func validate() throws {
        _ = try parsed()
    }

    private func parsed() throws -> (HeadTrackingSet.Mode, Float) {
        guard let wire = HeadTrackingSet.Mode(name: mode) else {
            throw ValidationError("mode '\(mode)' is not known (accepted: full, yaw-only, off)")
        }
        if recenterAfter == "off" { return (wire, 0) }
        guard let seconds = Float(recenterAfter), HeadTrackingSet.recenterAfterSecondsRange.contains(seconds) else {
            throw ValidationError("--recenter-after '\(recenterAfter)' is out of range (accepted: 1 to 3600 seconds, or off)")
        }
        return (wire, seconds)
    }

    func run() throws {
        let (wire, seconds) = try parsed()
        try server.exchange { connection throws(ClientError) in
            try connection.setHeadTracking(wire, recenterAfterSeconds: seconds)
        }
    }
}

struct HeadTrackerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tracker",
        abstract: "Choose which tracker input the head follows, and its pose rate, live.",
        discussion: """
            any follows the newest pose from opentrack or OSC; opentrack or osc follows that input \
            alone, and the other's datagrams are ignored and counted (status: *_ignored_packets). \
            --rate takes at most that many poses a second from each input, the rest dropped unread \
            and counted (status: *_rate_limited_packets); without it, each input's own limit \
            (scenesoundd --max-opentrack-packets-per-second, --max-osc-packets-per-second). A pose \
            set with 'head set' always applies. Until the daemon restarts.
            """)

    @Argument(help: ArgumentHelp("any, opentrack or osc.", valueName: "TRACKER"))
    var tracker: String

    @Option(name: .customLong("rate"), parsing: .unconditional,
            help: ArgumentHelp("Poses a second taken from each input at most (10 to 1000), or default (each input's own limit).", valueName: "HZ|default"))
    var rate = "default"

    @OptionGroup var server: ServerOptions

    func validate() throws {
        _ = try parsed()
    }

    private func parsed() throws -> (HeadTrackerUse.Tracker, UInt32) {
        guard let wire = HeadTrackerUse.Tracker(name: tracker) else {
            throw ValidationError("tracker '\(tracker)' is not known (accepted: any, opentrack, osc)")
        }
        if rate == "default" { return (wire, 0) }
        let range = HeadTrackerUse.posesPerSecondRange
        guard let hz = UInt32(rate), range.contains(hz) else {
            throw ValidationError("--rate '\(rate)' is out of range (accepted: \(range.lowerBound) to \(range.upperBound) poses per second, or default)")
        }
        return (wire, hz)
    }

    func run() throws {
        let (wire, hz) = try parsed()
        try server.exchange { connection throws(ClientError) in
            try connection.useHeadTracker(wire, posesPerSecond: hz)
        }
    }
}

struct HeadShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show", abstract: "Show the head pose the server renders with.")

    @Flag(help: "Print the head section of the status as JSON.")
    var json = false

    @OptionGroup var server: ServerOptions

    func run() throws {
        let connection = try server.connect()
        defer { connection.close() }
        let head = try connection.statusDocument().head
        if json {
            return print(StatusDocument.jsonLine(head))
        }
        print(String(format: "yaw %.1f°, pitch %.1f°, roll %.1f°", head.yawDegrees, head.pitchDegrees, head.rollDegrees))
        if head.positionMetres.count == 3 {
            let p = head.positionMetres
            print(String(format: "position x %.2f, y %.2f, z %.2f m", p[0], p[1], p[2]))
        }
        if let age = head.poseAgeSeconds {
            print(String(format: "last pose %.1f s ago", age))
        } else {
            print("no pose received yet")
        }
        if let latency = head.motionToSoundSeconds {
            print(String(format: "motion to sound %.1f ms", latency * 1000))
        }
        if let tracker = head.tracker {
            print(String(format: "tracker %@, %.0f poses/s", tracker, head.trackerPosesPerSecond ?? 0))
        } else {
            print("no tracker live")
        }
        if let tracking = head.tracking, tracking != "full" { print("tracking \(tracking)") }
        if let choice = head.trackerChoice {
            print("following \(choice == "any" ? "any tracker" : choice + " only")"
                  + (head.trackerRateLimitPosesPerSecond.map { ", at most \($0) poses/s from each input" } ?? ""))
        }
        if let horizon = head.predictionSeconds {
            print(String(format: "prediction %.1f ms ahead (rendered yaw %.1f°)", horizon * 1000, head.renderedYawDegrees ?? head.yawDegrees))
        } else if head.tracking != nil {
            print("prediction off")
        }
        if let after = head.recenterAfterSeconds {
            print(String(format: "recentering after %.0f s at rest (%d so far)", after, head.automaticRecenters ?? 0))
        }
    }
}
