// Stream requests and the STREAM_OPENED reply. Stream ids are chosen by the server, non-zero,
// and never reused within a connection.

/// `STREAM_OPEN`: start a stream; the reply is `STREAM_OPENED`.
public struct StreamOpen: WirePayload {
    public var kind: StreamKind
    public var format: AudioFormat
    public var spatialMode: SpatialMode
    /// Repeat the content until closed; only for `.playback` (system sounds never loop).
    public var loop: Bool
    public var volumeDecibels: Float
    /// Empty: no scene (the client's window by `_NET_WM_PID`, else straight ahead).
    public var sceneID: String
    /// Version 2's `channel_map`: per channel its speaker (`ChannelPosition`), or empty for the
    /// standard layout of the channel count. Nil: the version 1 layout, which has no map (and
    /// one or two channels).
    public var channelMap: [ChannelPosition]?

    public init(kind: StreamKind, format: AudioFormat, spatialMode: SpatialMode = .anchored,
                loop: Bool = false, volumeDecibels: Float = 0, sceneID: String, channelMap: [ChannelPosition]? = nil) {
        self.kind = kind
        self.format = format
        self.spatialMode = spatialMode
        self.loop = loop
        self.volumeDecibels = volumeDecibels
        self.sceneID = sceneID
        self.channelMap = channelMap
    }

    init(reading reader: inout PayloadReader) throws(ProtocolError) {
        kind = try StreamKind(wire: try reader.readU8())
        format = try AudioFormat(reading: &reader)
        spatialMode = try SpatialMode(wire: try reader.readU8())
        loop = try reader.readBool()
        volumeDecibels = try reader.readF32()
        sceneID = try reader.readShortString()
        if reader.version >= 2 {
            let count = Int(try reader.readU8())
            var map: [ChannelPosition] = []
            for _ in 0..<count { map.append(try ChannelPosition(wire: try reader.readU8())) }
            channelMap = map
        }
    }

    func write(into bytes: inout [UInt8]) {
        bytes.writeU8(kind.rawValue)
        format.write(into: &bytes)
        bytes.writeU8(spatialMode.rawValue)
        bytes.writeBool(loop)
        bytes.writeF32(volumeDecibels)
        bytes.writeShortString(sceneID)
        if let channelMap {
            bytes.writeU8(UInt8(channelMap.count))
            for position in channelMap { bytes.writeU8(position.rawValue) }
        }
    }

    public func validate() throws(ProtocolError) {
        try format.validate(channels: channelMap == nil ? ProtocolLimits.stereoChannelsRange : ProtocolLimits.channelsRange)
        if let channelMap, !channelMap.isEmpty {
            guard channelMap.count == Int(format.channels) else {
                throw ProtocolError(.badFormat, "channel_map names \(channelMap.count) channels, the stream has \(format.channels)")
            }
            guard Set(channelMap).count == channelMap.count else {
                throw ProtocolError(.badFormat, "channel_map names a speaker twice")
            }
        }
        if loop && kind != .playback {
            throw ProtocolError(.invalidArgument, "only playback streams may loop")
        }
        try Check.finite(volumeDecibels, in: ProtocolLimits.volumeDecibelsRange, "volume_db")
        try SceneID.validate(sceneID, allowEmpty: true)
    }
}

/// `STREAM_OPENED` (reply to `STREAM_OPEN`): the new stream's id and its first credit.
public struct StreamOpened: WirePayload {
    public var streamID: UInt32
    /// Audio bytes the client may send before it hears from the server again; whole frames.
    public var creditBytes: UInt32

    public init(streamID: UInt32, creditBytes: UInt32) {
        self.streamID = streamID
        self.creditBytes = creditBytes
    }

    init(reading reader: inout PayloadReader) throws(ProtocolError) {
        streamID = try reader.readU32()
        creditBytes = try reader.readU32()
    }

    func write(into bytes: inout [UInt8]) {
        bytes.writeU32(streamID)
        bytes.writeU32(creditBytes)
    }

    public func validate() throws(ProtocolError) {
        try Check.nonZero(streamID, "stream_id")
        try Check.nonZero(creditBytes, "credit_bytes")
    }
}

/// `STREAM_DATA` (one-way, request id 0): PCM for a stream, in the stream's format, whole frames.
/// Counts against the stream's credit.
public struct StreamData: WirePayload {
    public var streamID: UInt32
    /// After decoding this shares the frame's storage; nothing is copied.
    public var pcm: ArraySlice<UInt8>

    /// Bytes of the STREAM_DATA payload in front of the PCM.
    public static let headerBytes = 4

    public init(streamID: UInt32, pcm: ArraySlice<UInt8>) {
        self.streamID = streamID
        self.pcm = pcm
    }

    /// The most PCM bytes one frame can carry, rounded down to whole audio frames.
    public static func maxPCMBytes(maxFrameBytes: Int, bytesPerFrame: Int) -> Int {
        let room = maxFrameBytes - FrameHeader.byteCount - headerBytes
        return room - room % bytesPerFrame
    }

    init(reading reader: inout PayloadReader) throws(ProtocolError) {
        streamID = try reader.readU32()
        pcm = reader.readRemainingBytes()
    }

    func write(into bytes: inout [UInt8]) {
        bytes.writeU32(streamID)
        bytes.append(contentsOf: pcm)
    }

    /// Whole frames can only be checked by the receiver, which knows the stream's format.
    public func validate() throws(ProtocolError) {
        try Check.nonZero(streamID, "stream_id")
    }
}

/// The payload of `STREAM_DRAIN` and `STREAM_CLOSE`: just the stream.
public struct StreamReference: WirePayload {
    public var streamID: UInt32

    public init(streamID: UInt32) { self.streamID = streamID }

    init(reading reader: inout PayloadReader) throws(ProtocolError) {
        streamID = try reader.readU32()
    }

    func write(into bytes: inout [UInt8]) { bytes.writeU32(streamID) }

    public func validate() throws(ProtocolError) { try Check.nonZero(streamID, "stream_id") }
}

/// `STREAM_SET_VOLUME`: change the gain (ramped by the server, no click).
public struct StreamSetVolume: WirePayload {
    public var streamID: UInt32
    public var volumeDecibels: Float

    public init(streamID: UInt32, volumeDecibels: Float) {
        self.streamID = streamID
        self.volumeDecibels = volumeDecibels
    }

    init(reading reader: inout PayloadReader) throws(ProtocolError) {
        streamID = try reader.readU32()
        volumeDecibels = try reader.readF32()
    }

    func write(into bytes: inout [UInt8]) {
        bytes.writeU32(streamID)
        bytes.writeF32(volumeDecibels)
    }

    public func validate() throws(ProtocolError) {
        try Check.nonZero(streamID, "stream_id")
        try Check.finite(volumeDecibels, in: ProtocolLimits.volumeDecibelsRange, "volume_db")
    }
}

/// `STREAM_SET_SCENE`: move the stream to another scene (empty: no scene).
public struct StreamSetScene: WirePayload {
    public var streamID: UInt32
    public var sceneID: String

    public init(streamID: UInt32, sceneID: String) {
        self.streamID = streamID
        self.sceneID = sceneID
    }

    init(reading reader: inout PayloadReader) throws(ProtocolError) {
        streamID = try reader.readU32()
        sceneID = try reader.readShortString()
    }

    func write(into bytes: inout [UInt8]) {
        bytes.writeU32(streamID)
        bytes.writeShortString(sceneID)
    }

    public func validate() throws(ProtocolError) {
        try Check.nonZero(streamID, "stream_id")
        try SceneID.validate(sceneID, allowEmpty: true)
    }
}
