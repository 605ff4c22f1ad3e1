// Scene requests. Scenes are server-wide (shared by every client of the user); a binding lasts
// until it is replaced, unbound, or the server exits. `x11:` scenes cannot be bound, placed or
// unbound (the server answers not_permitted); the codec only checks their syntax.

/// `SCENE_BIND_WINDOW`: anchor `sceneID` to an X11 top-level window.
public struct SceneBindWindow: WirePayload {
    public var sceneID: String
    public var windowID: UInt32

    public init(sceneID: String, windowID: UInt32) {
        self.sceneID = sceneID
        self.windowID = windowID
    }

    init(reading reader: inout PayloadReader) throws(ProtocolError) {
        sceneID = try reader.readShortString()
        windowID = try reader.readU32()
    }

    func write(into bytes: inout [UInt8]) {
        bytes.writeShortString(sceneID)
        bytes.writeU32(windowID)
    }

    public func validate() throws(ProtocolError) {
        try SceneID.validate(sceneID, allowEmpty: false)
        try Check.nonZero(windowID, "window_id")
    }
}

/// A direction and distance from the listener's neutral head, in the design's conventions:
/// azimuth counterclockwise seen from above (0° ahead, +90° left), elevation +90° up.
public struct ScenePosition: Equatable, Sendable {
    public var azimuthDegrees: Float
    public var elevationDegrees: Float
    public var distanceMetres: Float

    public init(azimuthDegrees: Float, elevationDegrees: Float, distanceMetres: Float) {
        self.azimuthDegrees = azimuthDegrees
        self.elevationDegrees = elevationDegrees
        self.distanceMetres = distanceMetres
    }

    init(reading reader: inout PayloadReader) throws(ProtocolError) {
        azimuthDegrees = try reader.readF32()
        elevationDegrees = try reader.readF32()
        distanceMetres = try reader.readF32()
    }

    func write(into bytes: inout [UInt8]) {
        bytes.writeF32(azimuthDegrees)
        bytes.writeF32(elevationDegrees)
        bytes.writeF32(distanceMetres)
    }

    public func validate() throws(ProtocolError) {
        try Check.finite(azimuthDegrees, in: ProtocolLimits.azimuthDegreesRange, "azimuth_degrees")
        try Check.finite(elevationDegrees, in: ProtocolLimits.elevationDegreesRange, "elevation_degrees")
        try Check.finite(distanceMetres, in: ProtocolLimits.distanceMetresRange, "distance_metres")
    }
}

/// `SCENE_PLACE`: put `sceneID` at a fixed position (replacing any window binding).
public struct ScenePlace: WirePayload {
    public var sceneID: String
    public var position: ScenePosition

    public init(sceneID: String, position: ScenePosition) {
        self.sceneID = sceneID
        self.position = position
    }

    init(reading reader: inout PayloadReader) throws(ProtocolError) {
        sceneID = try reader.readShortString()
        position = try ScenePosition(reading: &reader)
    }

    func write(into bytes: inout [UInt8]) {
        bytes.writeShortString(sceneID)
        position.write(into: &bytes)
    }

    public func validate() throws(ProtocolError) {
        try SceneID.validate(sceneID, allowEmpty: false)
        try position.validate()
    }
}

/// `SCENE_UNBIND`: forget a scene's binding; its streams then play straight ahead.
public struct SceneUnbind: WirePayload {
    public var sceneID: String

    public init(sceneID: String) { self.sceneID = sceneID }

    init(reading reader: inout PayloadReader) throws(ProtocolError) {
        sceneID = try reader.readShortString()
    }

    func write(into bytes: inout [UInt8]) { bytes.writeShortString(sceneID) }

    public func validate() throws(ProtocolError) { try SceneID.validate(sceneID, allowEmpty: false) }
}

/// What a scene is anchored to.
public enum SceneAnchor: UInt8, Sendable, CaseIterable {
    /// Nothing: straight ahead.
    case none = 0
    /// An X11 window (bound, or named by an `x11:` id).
    case window = 1
    /// A fixed position from `SCENE_PLACE`.
    case position = 2
}

/// One row of `SCENE_LIST_REPLY`.
public struct SceneListEntry: Equatable, Sendable {
    public var sceneID: String
    public var anchor: SceneAnchor
    /// The window for `.window` anchors, else 0.
    public var windowID: UInt32
    /// Where the scene is now (for windows: their current or last visible place).
    public var position: ScenePosition

    public init(sceneID: String, anchor: SceneAnchor, windowID: UInt32, position: ScenePosition) {
        self.sceneID = sceneID
        self.anchor = anchor
        self.windowID = windowID
        self.position = position
    }

    init(reading reader: inout PayloadReader) throws(ProtocolError) {
        sceneID = try reader.readShortString()
        let anchorValue = try reader.readU8()
        guard let anchor = SceneAnchor(rawValue: anchorValue) else {
            throw ProtocolError(.invalidArgument, "anchor \(anchorValue) unknown")
        }
        self.anchor = anchor
        windowID = try reader.readU32()
        position = try ScenePosition(reading: &reader)
    }

    func write(into bytes: inout [UInt8]) {
        bytes.writeShortString(sceneID)
        bytes.writeU8(anchor.rawValue)
        bytes.writeU32(windowID)
        position.write(into: &bytes)
    }

    public func validate() throws(ProtocolError) {
        try SceneID.validate(sceneID, allowEmpty: false)
        guard (anchor == .window) == (windowID != 0) else {
            throw ProtocolError(.invalidArgument, "window_id must be non-zero exactly for window anchors")
        }
        try position.validate()
    }
}

/// `SCENE_LIST_REPLY`: every scene the server knows.
public struct SceneListReply: WirePayload {
    public var entries: [SceneListEntry]

    public init(entries: [SceneListEntry]) { self.entries = entries }

    init(reading reader: inout PayloadReader) throws(ProtocolError) {
        let count = Int(try reader.readU16())
        entries = []
        entries.reserveCapacity(min(count, 1024))  // count is untrusted until the entries are read
        for _ in 0..<count { entries.append(try SceneListEntry(reading: &reader)) }
    }

    func write(into bytes: inout [UInt8]) {
        precondition(entries.count <= Int(UInt16.max), "more than 65535 scenes in one reply")
        bytes.writeU16(UInt16(entries.count))
        for entry in entries { entry.write(into: &bytes) }
    }

    public func validate() throws(ProtocolError) {
        guard entries.count <= Int(UInt16.max) else {
            throw ProtocolError(.invalidArgument, "more than 65535 scenes")
        }
        for entry in entries { try entry.validate() }
    }
}
