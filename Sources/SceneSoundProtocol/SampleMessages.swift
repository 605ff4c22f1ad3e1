// The server's sample cache: upload PCM once under a name, then play it by name.

/// `SAMPLE_UPLOAD`: one chunk of a named sample. A sample larger than a frame is sent as
/// consecutive chunks with increasing `offsetBytes`; it becomes playable when the chunk that
/// reaches `totalBytes` has been acknowledged. A chunk at offset 0 (re)starts the upload.
public struct SampleUpload: WirePayload {
    /// 1–255 bytes; typically a sound-theme event id such as `bell`.
    public var name: String
    public var format: AudioFormat
    /// PCM bytes of the whole sample.
    public var totalBytes: UInt32
    /// Where this chunk's bytes go within the sample.
    public var offsetBytes: UInt32
    public var pcm: ArraySlice<UInt8>

    /// Bytes of the SAMPLE_UPLOAD payload in front of the PCM, for a name of `nameBytes` bytes.
    public static func headerBytes(nameBytes: Int) -> Int { 1 + nameBytes + 6 + 4 + 4 }

    public init(name: String, format: AudioFormat, totalBytes: UInt32, offsetBytes: UInt32, pcm: ArraySlice<UInt8>) {
        self.name = name
        self.format = format
        self.totalBytes = totalBytes
        self.offsetBytes = offsetBytes
        self.pcm = pcm
    }

    init(reading reader: inout PayloadReader) throws(ProtocolError) {
        name = try reader.readShortString()
        format = try AudioFormat(reading: &reader)
        totalBytes = try reader.readU32()
        offsetBytes = try reader.readU32()
        pcm = reader.readRemainingBytes()
    }

    func write(into bytes: inout [UInt8]) {
        bytes.writeShortString(name)
        format.write(into: &bytes)
        bytes.writeU32(totalBytes)
        bytes.writeU32(offsetBytes)
        bytes.append(contentsOf: pcm)
    }

    public func validate() throws(ProtocolError) {
        try Check.shortString(name, "name", allowEmpty: false)
        try format.validate()
        let frameBytes = format.bytesPerFrame
        guard totalBytes > 0, Int(totalBytes) % frameBytes == 0 else {
            throw ProtocolError(.badFormat, "total_bytes \(totalBytes) is not a positive number of \(frameBytes)-byte frames")
        }
        guard Int(offsetBytes) % frameBytes == 0, !pcm.isEmpty, pcm.count % frameBytes == 0 else {
            throw ProtocolError(.badFormat, "chunk at \(offsetBytes) of \(pcm.count) bytes is not whole \(frameBytes)-byte frames")
        }
        guard UInt64(offsetBytes) + UInt64(pcm.count) <= UInt64(totalBytes) else {
            throw ProtocolError(.invalidArgument, "chunk ends past total_bytes \(totalBytes)")
        }
    }
}

/// `SAMPLE_PLAY`: play a cached sample as a system or alert sound; the reply is `SAMPLE_PLAYING`.
public struct SamplePlay: WirePayload {
    public var name: String
    /// `.system` or `.alert`.
    public var kind: StreamKind
    public var spatialMode: SpatialMode
    public var volumeDecibels: Float
    /// Empty: no scene.
    public var sceneID: String
    /// Alerts only: also flag the scene's window with `_NET_WM_STATE_DEMANDS_ATTENTION`.
    public var demandAttention: Bool

    public init(name: String, kind: StreamKind, spatialMode: SpatialMode = .anchored,
                volumeDecibels: Float = 0, sceneID: String, demandAttention: Bool = false) {
        self.name = name
        self.kind = kind
        self.spatialMode = spatialMode
        self.volumeDecibels = volumeDecibels
        self.sceneID = sceneID
        self.demandAttention = demandAttention
    }

    init(reading reader: inout PayloadReader) throws(ProtocolError) {
        name = try reader.readShortString()
        kind = try StreamKind(wire: try reader.readU8())
        spatialMode = try SpatialMode(wire: try reader.readU8())
        volumeDecibels = try reader.readF32()
        sceneID = try reader.readShortString()
        demandAttention = try reader.readBool()
    }

    func write(into bytes: inout [UInt8]) {
        bytes.writeShortString(name)
        bytes.writeU8(kind.rawValue)
        bytes.writeU8(spatialMode.rawValue)
        bytes.writeF32(volumeDecibels)
        bytes.writeShortString(sceneID)
        bytes.writeBool(demandAttention)
    }

    public func validate() throws(ProtocolError) {
        try Check.shortString(name, "name", allowEmpty: false)
        guard kind != .playback else {
            throw ProtocolError(.invalidArgument, "samples play as system or alert sounds")
        }
        try Check.finite(volumeDecibels, in: ProtocolLimits.volumeDecibelsRange, "volume_db")
        try SceneID.validate(sceneID, allowEmpty: true)
        guard !demandAttention || kind == .alert else {
            throw ProtocolError(.invalidArgument, "only alerts demand attention")
        }
    }
}

/// `SAMPLE_PLAYING` (reply to `SAMPLE_PLAY`): names this play in the later `PLAYBACK_ENDED`.
public struct SamplePlaying: WirePayload {
    public var playID: UInt32

    public init(playID: UInt32) { self.playID = playID }

    init(reading reader: inout PayloadReader) throws(ProtocolError) { playID = try reader.readU32() }

    func write(into bytes: inout [UInt8]) { bytes.writeU32(playID) }

    public func validate() throws(ProtocolError) { try Check.nonZero(playID, "play_id") }
}
