import SceneSoundProtocol

/// Reading the C caller's arguments into checked Swift values. Everything is validated here,
/// before any Swift API that would trap on a bad value is reached.
enum CArguments {
    /// A NUL-terminated UTF-8 string; NULL becomes `nullValue` (or a failure when none is allowed).
    static func string(_ pointer: UnsafePointer<CChar>?, _ name: String, nullValue: String? = nil) throws(CFailure) -> String {
        guard let pointer else {
            if let nullValue { return nullValue }
            throw .invalid("\(name) is NULL")
        }
        guard let value = String(validatingCString: pointer) else { throw .invalid("\(name) is not valid UTF-8") }
        return value
    }

    static func sceneID(_ pointer: UnsafePointer<CChar>?, allowEmpty: Bool = true) throws(CFailure) -> String {
        let scene = try string(pointer, "scene_id", nullValue: allowEmpty ? "" : nil)
        do throws(ProtocolError) { try SceneID.validate(scene, allowEmpty: allowEmpty) } catch {
            throw .invalid(error.detail)
        }
        return scene
    }

    /// Format, rate and channels checked as the server would (SPEC.md section 5), so a bad
    /// format is `SCENESOUND_E_BAD_FORMAT` without a round trip.
    /// `maximumChannels`: 8 for streams (up to 7.1, WAVE order), 2 for samples.
    static func audioFormat(_ format: Int32, _ rateHz: UInt32, _ channels: Int32,
                            maximumChannels: Int32 = 2) throws(CFailure) -> AudioFormat {
        guard let wireFormat = UInt8(exactly: format), let sampleFormat = SampleFormat(rawValue: wireFormat) else {
            throw CFailure(StatusCode.badFormat, "sample format \(format) is not SCENESOUND_FORMAT_S16LE, _S32LE or _F32LE")
        }
        guard (8000...192_000).contains(rateHz) else {
            throw CFailure(StatusCode.badFormat, "rate \(rateHz) Hz is outside 8000 … 192000 Hz")
        }
        guard (1...maximumChannels).contains(channels) else {
            throw CFailure(StatusCode.badFormat, "\(channels) channels: only 1 to \(maximumChannels) are supported")
        }
        return AudioFormat(sampleFormat: sampleFormat, rateHz: rateHz, channels: UInt8(channels))
    }

    /// `channels` SCENESOUND_CHANNEL_* values, each speaker once; NULL: nil (the standard
    /// layout). (`channels` was checked by `audioFormat`.)
    static func channelMap(_ map: UnsafePointer<Int32>?, channels: Int32) throws(CFailure) -> [ChannelPosition]? {
        guard let map else { return nil }
        var positions: [ChannelPosition] = []
        for index in 0 ..< Int(channels) {
            guard let raw = UInt8(exactly: map[index]), let position = ChannelPosition(rawValue: raw) else {
                throw CFailure(StatusCode.badFormat, "channel_map[\(index)] = \(map[index]) is not a SCENESOUND_CHANNEL_* value "
                               + "(accepted: 0 to 7, FL FR FC LFE BL BR SL SR)")
            }
            guard !positions.contains(position) else {
                throw CFailure(StatusCode.badFormat, "channel_map[\(index)] = \(map[index]) names a speaker a second time")
            }
            positions.append(position)
        }
        return positions
    }

    static func kind(_ value: Int32) throws(CFailure) -> StreamKind {
        guard let raw = UInt8(exactly: value), let kind = StreamKind(rawValue: raw) else {
            throw .invalid("kind \(value) is not a SCENESOUND_KIND_* value")
        }
        return kind
    }

    static func spatialMode(_ value: Int32) throws(CFailure) -> SpatialMode {
        guard let raw = UInt8(exactly: value), let mode = SpatialMode(rawValue: raw) else {
            throw .invalid("spatial mode \(value) is not a SCENESOUND_SPATIAL_* value")
        }
        return mode
    }

    static func volume(_ decibels: Float) throws(CFailure) -> Float {
        guard decibels.isFinite, (-200...24).contains(decibels) else {
            throw .invalid("volume \(decibels) dB is outside -200 … 24 dB")
        }
        return decibels
    }

    /// Milliseconds to the client's seconds; negative means "no limit".
    static func timeout(milliseconds: Int32) -> Double? {
        milliseconds < 0 ? nil : Double(milliseconds) / 1000
    }
}
