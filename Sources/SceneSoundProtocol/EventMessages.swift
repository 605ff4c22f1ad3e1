// Server events: unsolicited, request id 0.

/// `CREDIT_GRANTED`: the client may send `bytes` more audio bytes on the stream (whole frames).
public struct CreditGranted: WirePayload {
    public var streamID: UInt32
    public var bytes: UInt32

    public init(streamID: UInt32, bytes: UInt32) {
        self.streamID = streamID
        self.bytes = bytes
    }

    init(reading reader: inout PayloadReader) throws(ProtocolError) {
        streamID = try reader.readU32()
        bytes = try reader.readU32()
    }

    func write(into bytes: inout [UInt8]) {
        bytes.writeU32(streamID)
        bytes.writeU32(self.bytes)
    }

    public func validate() throws(ProtocolError) {
        try Check.nonZero(streamID, "stream_id")
        try Check.nonZero(bytes, "bytes")
    }
}

/// Why `STREAM_ENDED` was sent.
public enum StreamEndReason: UInt8, Sendable, CaseIterable {
    /// A drain completed (sent just before its OK reply); the stream stays open and usable.
    case drained = 1
    /// The server is shutting down; the stream is defunct.
    case serverShutdown = 2
    /// The server removed the stream (policy or a limit); the stream is defunct.
    case removedByServer = 3
}

/// `STREAM_ENDED`: all audio sent so far has been played (drained), or the server ended the stream.
public struct StreamEnded: WirePayload {
    public var streamID: UInt32
    public var reason: StreamEndReason

    public init(streamID: UInt32, reason: StreamEndReason) {
        self.streamID = streamID
        self.reason = reason
    }

    init(reading reader: inout PayloadReader) throws(ProtocolError) {
        streamID = try reader.readU32()
        let value = try reader.readU8()
        guard let reason = StreamEndReason(rawValue: value) else {
            throw ProtocolError(.invalidArgument, "stream end reason \(value) unknown")
        }
        self.reason = reason
    }

    func write(into bytes: inout [UInt8]) {
        bytes.writeU32(streamID)
        bytes.writeU8(reason.rawValue)
    }

    public func validate() throws(ProtocolError) { try Check.nonZero(streamID, "stream_id") }
}

/// `STREAM_ERROR`: the stream failed (e.g. data not in whole frames); it is defunct and the
/// client should close it. The connection stays open.
public struct StreamError: WirePayload {
    public var streamID: UInt32
    public var code: ErrorCode
    public var message: String

    public init(streamID: UInt32, code: ErrorCode, message: String) {
        self.streamID = streamID
        self.code = code
        self.message = message
    }

    init(reading reader: inout PayloadReader) throws(ProtocolError) {
        streamID = try reader.readU32()
        code = ErrorCode(rawValue: try reader.readU16())
        message = try reader.readLongString()
    }

    func write(into bytes: inout [UInt8]) {
        bytes.writeU32(streamID)
        bytes.writeU16(code.rawValue)
        bytes.writeLongString(message)
    }

    public func validate() throws(ProtocolError) {
        try Check.nonZero(streamID, "stream_id")
        try Check.nonZero(UInt32(code.rawValue), "code")
        try Check.longString(message, "message")
    }
}

/// Why a sample play ended.
public enum PlaybackEndReason: UInt8, Sendable, CaseIterable {
    /// The last sample was rendered to the output.
    case completed = 1
    /// Merged into an identical sound requested just before (burst coalescing); never played.
    case coalesced = 2
    /// Cut short (server shutdown, sample evicted while playing, output failure).
    case interrupted = 3
}

/// `PLAYBACK_ENDED`: a `SAMPLE_PLAY` has finished.
public struct PlaybackEnded: WirePayload {
    public var playID: UInt32
    public var reason: PlaybackEndReason

    public init(playID: UInt32, reason: PlaybackEndReason) {
        self.playID = playID
        self.reason = reason
    }

    init(reading reader: inout PayloadReader) throws(ProtocolError) {
        playID = try reader.readU32()
        let value = try reader.readU8()
        guard let reason = PlaybackEndReason(rawValue: value) else {
            throw ProtocolError(.invalidArgument, "playback end reason \(value) unknown")
        }
        self.reason = reason
    }

    func write(into bytes: inout [UInt8]) {
        bytes.writeU32(playID)
        bytes.writeU8(reason.rawValue)
    }

    public func validate() throws(ProtocolError) { try Check.nonZero(playID, "play_id") }
}
