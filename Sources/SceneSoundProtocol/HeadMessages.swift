// Head pose input from clients (trackers, `scenesound head set`). HEAD_RECENTER has no payload
// and is represented by `Message.headRecenter`.

/// A rotation as a unit quaternion, in the design's right-handed frame (+x right, +y up,
/// −z forward). A positive rotation about +y (yaw) turns the head left.
public struct Quaternion: Equatable, Sendable {
    public var w: Float
    public var x: Float
    public var y: Float
    public var z: Float

    public init(w: Float, x: Float, y: Float, z: Float) {
        self.w = w
        self.x = x
        self.y = y
        self.z = z
    }

    public static let identity = Quaternion(w: 1, x: 0, y: 0, z: 0)
}

/// A point in metres, in the same frame; the neutral head is at the origin.
public struct PositionMetres: Equatable, Sendable {
    public var x: Float
    public var y: Float
    public var z: Float

    public init(x: Float, y: Float, z: Float) {
        self.x = x
        self.y = y
        self.z = z
    }
}

/// `HEAD_POSE` (one-way, request id 0): the listener's head orientation and optional position.
public struct HeadPose: WirePayload {
    /// CLOCK_MONOTONIC when the pose was measured; 0 means "now" (the server uses arrival time).
    public var timestampNanoseconds: UInt64
    public var orientation: Quaternion
    /// nil keeps the head at the neutral position (three degrees of freedom).
    public var position: PositionMetres?

    public init(timestampNanoseconds: UInt64, orientation: Quaternion, position: PositionMetres? = nil) {
        self.timestampNanoseconds = timestampNanoseconds
        self.orientation = orientation
        self.position = position
    }

    init(reading reader: inout PayloadReader) throws(ProtocolError) {
        timestampNanoseconds = try reader.readU64()
        orientation = Quaternion(w: try reader.readF32(), x: try reader.readF32(),
                                 y: try reader.readF32(), z: try reader.readF32())
        let hasPosition = try reader.readBool()
        let positionBits = (try reader.readU32(), try reader.readU32(), try reader.readU32())
        if hasPosition {
            position = PositionMetres(x: Float(bitPattern: positionBits.0), y: Float(bitPattern: positionBits.1),
                                      z: Float(bitPattern: positionBits.2))
        } else {
            // Absent position fields must be zero so that every pose has exactly one encoding.
            guard positionBits == (0, 0, 0) else {
                throw ProtocolError(.malformedPayload, "HEAD_POSE: position bytes set while has_position is 0")
            }
            position = nil
        }
    }

    func write(into bytes: inout [UInt8]) {
        bytes.writeU64(timestampNanoseconds)
        bytes.writeF32(orientation.w)
        bytes.writeF32(orientation.x)
        bytes.writeF32(orientation.y)
        bytes.writeF32(orientation.z)
        bytes.writeBool(position != nil)
        let written = position ?? PositionMetres(x: 0, y: 0, z: 0)
        bytes.writeF32(written.x)
        bytes.writeF32(written.y)
        bytes.writeF32(written.z)
    }

    public func validate() throws(ProtocolError) {
        let q = orientation
        for (value, field) in [(q.w, "w"), (q.x, "x"), (q.y, "y"), (q.z, "z")] {
            try Check.finite(value, "quaternion \(field)")
        }
        let norm = (q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z).squareRoot()
        guard abs(norm - 1) <= ProtocolLimits.quaternionNormTolerance else {
            throw ProtocolError(.invalidArgument, "quaternion norm \(norm) is not 1")
        }
        if let position {
            try Check.finite(position.x, "position x_metres")
            try Check.finite(position.y, "position y_metres")
            try Check.finite(position.z, "position z_metres")
        }
    }
}

/// `HEAD_TRACKING_SET` (request → `OK`): what the renderer follows of a tracked head from now on,
/// and automatic recentering (`scenesoundd --head-tracking`, `--head-recenter-seconds`, changed
/// live: `scenesound head tracking`, the browser view).
public struct HeadTrackingSet: WirePayload {
    /// What the renderer follows of a tracker's poses.
    public enum Mode: UInt8, NamedChoice {
        /// Every rotation and the position.
        case full = 1
        /// Only the turn about the vertical axis.
        case yawOnly = 2
        /// Trackers ignored, the head straight ahead (a `HEAD_POSE` still applies).
        case off = 3

        /// `full`, `yaw-only`, `off`: the daemon's and the CLI's words.
        public var name: String { ["full", "yaw-only", "off"][Int(rawValue) - 1] }
    }

    public var mode: Mode
    /// Once a tracked head has rested this long, straight ahead glides to it; 0 = off.
    public var recenterAfterSeconds: Float

    public static let recenterAfterSecondsRange: ClosedRange<Float> = 1...3600

    public init(mode: Mode, recenterAfterSeconds: Float = 0) {
        self.mode = mode
        self.recenterAfterSeconds = recenterAfterSeconds
    }

    init(reading reader: inout PayloadReader) throws(ProtocolError) {
        mode = try reader.readEnum(Mode.self, field: "mode", accepted: "1 full, 2 yaw_only, 3 off")
        recenterAfterSeconds = try reader.readF32()
    }

    func write(into bytes: inout [UInt8]) {
        bytes.writeU8(mode.rawValue)
        bytes.writeF32(recenterAfterSeconds)
    }

    public func validate() throws(ProtocolError) {
        guard recenterAfterSeconds == 0 || Self.recenterAfterSecondsRange.contains(recenterAfterSeconds) else {
            throw ProtocolError(.invalidArgument,
                                "recenter_after_seconds \(recenterAfterSeconds) out of range (accepted: 0 for off, or 1 to 3600)")
        }
    }
}

/// `HEAD_TRACKER_USE` (request → `OK`): which tracker input the server follows, and how many
/// poses a second it takes from each (`scenesound head tracker`, the browser view), until the
/// daemon restarts.
public struct HeadTrackerUse: WirePayload {
    /// Which tracker input's poses are followed. A `HEAD_POSE` always applies.
    public enum Tracker: UInt8, NamedChoice {
        /// opentrack and OSC both: the newest pose from either wins.
        case any = 1
        /// opentrack only; OSC datagrams are ignored and counted.
        case opentrack = 2
        /// OSC only; opentrack datagrams are ignored and counted.
        case osc = 3

        /// `any`, `opentrack`, `osc`: the CLI's and the status's words.
        public var name: String { ["any", "opentrack", "osc"][Int(rawValue) - 1] }
    }

    public var tracker: Tracker
    /// Poses taken a second from each input, more dropped unread and counted; 0 = the daemon's
    /// own limits (`--max-opentrack-packets-per-second`, `--max-osc-packets-per-second`).
    public var posesPerSecond: UInt32

    public static let posesPerSecondRange: ClosedRange<UInt32> = 10...1000

    public init(tracker: Tracker, posesPerSecond: UInt32 = 0) {
        self.tracker = tracker
        self.posesPerSecond = posesPerSecond
    }

    init(reading reader: inout PayloadReader) throws(ProtocolError) {
        tracker = try reader.readEnum(Tracker.self, field: "tracker", accepted: "1 any, 2 opentrack, 3 osc")
        posesPerSecond = try reader.readU32()
    }

    func write(into bytes: inout [UInt8]) {
        bytes.writeU8(tracker.rawValue)
        bytes.writeU32(posesPerSecond)
    }

    public func validate() throws(ProtocolError) {
        guard posesPerSecond == 0 || Self.posesPerSecondRange.contains(posesPerSecond) else {
            throw ProtocolError(.invalidArgument,
                                "poses_per_second \(posesPerSecond) out of range (accepted: 0 for the daemon's own limits, or 10 to 1000)")
        }
    }
}
