import Foundation
import SceneSoundMedia
import SceneSoundProtocol

/// A file decoded by libsndfile for sending: 32-bit float at the file's own rate (the server
/// resamples to its output rate, SPEC.md section 5), its channels as they are. A rate or a
/// channel count the protocol does not carry is one error naming the file and what is accepted.
struct DecodedSound: Sendable {
    let format: AudioFormat
    /// Interleaved, in [−1, 1].
    let samples: [Float]
    var frameCount: Int { samples.count / Int(format.channels) }
    var durationSeconds: Double { Double(frameCount) / Double(format.rateHz) }

    /// `channels`: the counts accepted — streams take up to 7.1, the sample cache stereo at most.
    init(path: String, channels accepted: ClosedRange<UInt8> = ProtocolLimits.channelsRange) throws(ClientError) {
        let audio: DecodedAudio
        do { audio = try AudioFileReader.read(path: path) } catch {
            throw .invalidArgument("\(error)")
        }
        let rate = audio.sampleRateHz
        guard rate.rounded() == rate, ProtocolLimits.rateHzRange.contains(UInt32(clamping: Int(rate))) else {
            throw .invalidArgument("\(path): sample rate \(rate) Hz is not supported (accepted: \(ProtocolLimits.rateHzRange.lowerBound) to \(ProtocolLimits.rateHzRange.upperBound) Hz)")
        }
        guard let channels = UInt8(exactly: audio.channelCount), accepted.contains(channels) else {
            throw .invalidArgument("\(path): \(audio.channelCount) channels are not supported (accepted: \(accepted.lowerBound) to \(accepted.upperBound))")
        }
        guard audio.frameCount > 0 else { throw .invalidArgument("\(path): the file holds no audio") }
        format = AudioFormat(sampleFormat: .f32le, rateHz: UInt32(rate), channels: channels)
        samples = audio.interleaved
    }

    private init(format: AudioFormat, samples: [Float]) {
        self.format = format
        self.samples = samples
    }

    /// This sound at another rate (libsoxr, very high quality), for a server whose output runs
    /// at `rateHz`.
    func resampled(toRateHz rateHz: UInt32) throws(ClientError) -> DecodedSound {
        guard rateHz != format.rateHz else { return self }
        let audio = DecodedAudio(sampleRateHz: Double(format.rateHz), channelCount: Int(format.channels), interleaved: samples)
        do {
            let converted = try audio.resampled(to: Double(rateHz))
            return DecodedSound(format: AudioFormat(sampleFormat: .f32le, rateHz: rateHz, channels: format.channels),
                                samples: converted.interleaved)
        } catch {
            throw .invalidArgument("\(error)")
        }
    }

    /// Frames as f32le bytes: the host's Float layout (Swift on Linux is little-endian only).
    func bytes(frames range: Range<Int>) -> [UInt8] {
        let channels = Int(format.channels)
        return samples[range.lowerBound * channels..<range.upperBound * channels].withUnsafeBytes { Array($0) }
    }
}
