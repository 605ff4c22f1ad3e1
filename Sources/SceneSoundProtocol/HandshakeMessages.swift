// HELLO and WELCOME. Their layouts (and ERROR's) are frozen for every protocol version, because
// they are exchanged before a version has been agreed.

/// `HELLO` (client → server, first frame of every connection).
public struct Hello: WirePayload {
    public var minimumVersion: UInt16
    public var maximumVersion: UInt16
    /// The client's process id (0 when unknown); informational, the server trusts SO_PEERCRED.
    public var clientPID: UInt32
    /// A short program name for `status` and logs, at most 255 bytes.
    public var clientName: String

    public init(minimumVersion: UInt16 = ProtocolVersion.supported.lowerBound,
                maximumVersion: UInt16 = ProtocolVersion.supported.upperBound,
                clientPID: UInt32, clientName: String) {
        self.minimumVersion = minimumVersion
        self.maximumVersion = maximumVersion
        self.clientPID = clientPID
        self.clientName = clientName
    }

    init(reading reader: inout PayloadReader) throws(ProtocolError) {
        minimumVersion = try reader.readU16()
        maximumVersion = try reader.readU16()
        clientPID = try reader.readU32()
        clientName = try reader.readShortString()
    }

    func write(into bytes: inout [UInt8]) {
        bytes.writeU16(minimumVersion)
        bytes.writeU16(maximumVersion)
        bytes.writeU32(clientPID)
        bytes.writeShortString(clientName)
    }

    public func validate() throws(ProtocolError) {
        guard minimumVersion >= 1, minimumVersion <= maximumVersion else {
            throw ProtocolError(.invalidArgument, "version range \(minimumVersion)...\(maximumVersion) is empty or starts at 0")
        }
        try Check.shortString(clientName, "client_name", allowEmpty: true)
    }
}

/// `WELCOME` (server → client, reply to `HELLO`): the agreed version and the server's parameters.
public struct Welcome: WirePayload {
    public var version: UInt16
    /// The output's sample rate; streams at other rates are resampled.
    public var sampleRateHz: UInt32
    /// The render quantum.
    public var blockFrames: UInt32
    /// Largest frame, header included, the server accepts (and sends).
    public var maxFrameBytes: UInt32
    /// Streams one connection may have open at once.
    public var maxStreams: UInt32
    /// Largest sample `SAMPLE_UPLOAD` accepts, in PCM bytes.
    public var maxSampleBytes: UInt32
    public var serverName: String

    public init(version: UInt16, sampleRateHz: UInt32, blockFrames: UInt32, maxFrameBytes: UInt32,
                maxStreams: UInt32, maxSampleBytes: UInt32, serverName: String) {
        self.version = version
        self.sampleRateHz = sampleRateHz
        self.blockFrames = blockFrames
        self.maxFrameBytes = maxFrameBytes
        self.maxStreams = maxStreams
        self.maxSampleBytes = maxSampleBytes
        self.serverName = serverName
    }

    init(reading reader: inout PayloadReader) throws(ProtocolError) {
        version = try reader.readU16()
        sampleRateHz = try reader.readU32()
        blockFrames = try reader.readU32()
        maxFrameBytes = try reader.readU32()
        maxStreams = try reader.readU32()
        maxSampleBytes = try reader.readU32()
        serverName = try reader.readShortString()
    }

    func write(into bytes: inout [UInt8]) {
        bytes.writeU16(version)
        bytes.writeU32(sampleRateHz)
        bytes.writeU32(blockFrames)
        bytes.writeU32(maxFrameBytes)
        bytes.writeU32(maxStreams)
        bytes.writeU32(maxSampleBytes)
        bytes.writeShortString(serverName)
    }

    public func validate() throws(ProtocolError) {
        try Check.nonZero(UInt32(version), "version")
        guard ProtocolLimits.rateHzRange.contains(sampleRateHz) else {
            throw ProtocolError(.invalidArgument, "sample_rate_hz \(sampleRateHz) outside 8000...192000")
        }
        try Check.nonZero(blockFrames, "block_frames")
        guard maxFrameBytes >= UInt32(ProtocolLimits.minimumMaxFrameBytes) else {
            throw ProtocolError(.invalidArgument, "max_frame_bytes \(maxFrameBytes) below 4096")
        }
        try Check.shortString(serverName, "server_name", allowEmpty: true)
    }
}
