/// PCM sample encodings. Samples are interleaved by channel; every format is little-endian.
public enum SampleFormat: UInt8, Sendable, CaseIterable {
    case s16le = 1
    case s32le = 2
    case f32le = 3

    public var bytesPerSample: Int {
        switch self {
        case .s16le: 2
        case .s32le, .f32le: 4
        }
    }

    init(wire value: UInt8) throws(ProtocolError) {
        guard let format = SampleFormat(rawValue: value) else {
            throw ProtocolError(.badFormat, "sample_format \(value) unknown")
        }
        self = format
    }
}

/// How a stream's PCM is laid out: encoding, rate and channel count.
public struct AudioFormat: Equatable, Sendable {
    public var sampleFormat: SampleFormat
    public var rateHz: UInt32
    public var channels: UInt8

    public init(sampleFormat: SampleFormat, rateHz: UInt32, channels: UInt8) {
        self.sampleFormat = sampleFormat
        self.rateHz = rateHz
        self.channels = channels
    }

    /// Bytes in one frame (one sample for every channel); data always comes in whole frames.
    public var bytesPerFrame: Int { sampleFormat.bytesPerSample * Int(channels) }

    /// `channels`: the counts the message carrying the format accepts.
    public func validate(channels accepted: ClosedRange<UInt8> = ProtocolLimits.stereoChannelsRange) throws(ProtocolError) {
        guard ProtocolLimits.rateHzRange.contains(rateHz) else {
            throw ProtocolError(.badFormat, "rate_hz \(rateHz) outside 8000...192000")
        }
        guard accepted.contains(channels) else {
            throw ProtocolError(.badFormat, "channels \(channels) outside \(accepted.lowerBound)...\(accepted.upperBound)")
        }
    }

    /// Wire layout: sample_format u8, channels u8, rate_hz u32.
    func write(into bytes: inout [UInt8]) {
        bytes.writeU8(sampleFormat.rawValue)
        bytes.writeU8(channels)
        bytes.writeU32(rateHz)
    }

    init(reading reader: inout PayloadReader) throws(ProtocolError) {
        let format = try reader.readU8()
        let channels = try reader.readU8()
        let rateHz = try reader.readU32()
        self.init(sampleFormat: try SampleFormat(wire: format), rateHz: rateHz, channels: channels)
    }
}

/// What a stream or sound is for; decides latency, looping and ducking (see SPEC.md).
public enum StreamKind: UInt8, Sendable, CaseIterable {
    case playback = 1
    case system = 2
    case alert = 3

    init(wire value: UInt8) throws(ProtocolError) {
        guard let kind = StreamKind(rawValue: value) else {
            throw ProtocolError(.invalidArgument, "kind \(value) unknown")
        }
        self = kind
    }
}

/// How a stream is placed relative to the listener.
public enum SpatialMode: UInt8, Sendable, CaseIterable {
    /// World-locked at its scene; head tracking applies.
    case anchored = 1
    /// Placed relative to the head; turning does not move it.
    case headLocked = 2
    /// Plain stereo, bit-exact at unity gain.
    case off = 3

    init(wire value: UInt8) throws(ProtocolError) {
        guard let mode = SpatialMode(rawValue: value) else {
            throw ProtocolError(.invalidArgument, "spatial_mode \(value) unknown")
        }
        self = mode
    }
}

/// A speaker of STREAM_OPEN's `channel_map` (version 2), in the WAVE / SMPTE order.
public enum ChannelPosition: UInt8, Sendable, CaseIterable {
    case frontLeft = 0, frontRight, frontCenter, lowFrequency, backLeft, backRight, sideLeft, sideRight

    init(wire value: UInt8) throws(ProtocolError) {
        guard let position = ChannelPosition(rawValue: value) else {
            throw ProtocolError(.badFormat, "channel_map position \(value) unknown (accepted: 0 to 7, FL FR FC LFE BL BR SL SR)")
        }
        self = position
    }
}
