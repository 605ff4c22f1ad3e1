import SceneSoundTestSupport
import Foundation
import SceneSoundDSP
import SceneSoundMedia
import SceneSoundProtocol

/// Helpers for the system and alert sound tests: uploads over a RawClient, tones, levels.
enum SampleTestSupport {
    static let themeDirectory = "/usr/share/sounds/freedesktop/stereo"

    /// Uploads a sample in frame-sized chunks, all sent before any OK is read (as SPEC.md 6.6
    /// allows), and checks every chunk's OK.
    static func upload(_ client: RawClient, name: String, format: AudioFormat, pcm: [UInt8]) throws {
        let maxFrame = Int(client.welcome?.maxFrameBytes ?? 65536)
        let room = maxFrame - FrameHeader.byteCount - SampleUpload.headerBytes(nameBytes: name.utf8.count)
        let chunk = room - room % format.bytesPerFrame
        var ids: [UInt32] = []
        for (index, offset) in stride(from: 0, to: pcm.count, by: chunk).enumerated() {
            let id = UInt32(10_000 + index)
            let end = min(offset + chunk, pcm.count)
            try client.send(.sampleUpload(SampleUpload(name: name, format: format, totalBytes: UInt32(pcm.count),
                                                       offsetBytes: UInt32(offset), pcm: pcm[offset..<end])), requestID: id)
            ids.append(id)
        }
        for id in ids {
            let reply = try client.waitFor { $1 == id && $0.isReply }
            guard reply == .ok else { throw TestFailure("SAMPLE_UPLOAD chunk \(id) answered \(reply)") }
        }
    }

    static func floatBytes(_ samples: [Float]) -> [UInt8] { samples.withUnsafeBytes { Array($0) } }

    /// A sine, `channels` identical channels interleaved.
    static func tone(hz: Double, seconds: Double, amplitude: Float, channels: Int = 1, rateHz: Double = 48000) -> [Float] {
        let frames = Int(seconds * rateHz)
        return (0..<frames).flatMap { n in
            Array(repeating: amplitude * Float(sin(2 * Double.pi * hz * Double(n) / rateHz)), count: channels)
        }
    }

    /// Amplitude of the `hz` component of `samples` (see ToneAnalysis).
    static func goertzelAmplitude(_ samples: ArraySlice<Float>, hz: Double, rateHz: Double = 48000) -> Double {
        ToneAnalysis.amplitude(of: samples, frequencyHz: hz, sampleRateHz: rateHz)
    }

    static func decibels(_ ratio: Double) -> Double { 20 * log10(ratio) }

    /// Indices of the first and last sample above `threshold` in magnitude.
    static func nonSilentRange(_ samples: [Float], threshold: Float = 1e-4) -> ClosedRange<Int>? {
        guard let first = samples.firstIndex(where: { abs($0) > threshold }),
              let last = samples.lastIndex(where: { abs($0) > threshold }) else { return nil }
        return first...last
    }

    /// The output frame the daemon logged for a play's start ("queued at output frame N").
    static func queuedFrame(playID: UInt32, in log: String) -> Int? {
        for line in log.split(separator: "\n") where line.contains("play \(playID) ") && line.contains("queued at output frame ") {
            return Int(line.split(separator: " ").last ?? "")
        }
        return nil
    }
}
