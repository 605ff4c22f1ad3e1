import Foundation
import Testing
import SceneSoundDSP
import SceneSoundMedia
import SceneSoundProtocol

/// Nothing lost: with `--output wav:` and `--spatial off`, what a client sends comes out
/// sample-exact, complete and in order, and a drain returns only once its last sample is in
/// the file.
@Suite(.serialized) struct LosslessStreamTests {
    /// Non-zero values, so that the start of the stream is unmistakable in the output.
    static func pattern(frames: Int, channels: Int, seed: UInt64) -> [Int16] {
        var noise = WhiteNoise(seed: seed)
        return (0..<frames * channels).map { _ in
            let v = Int16(noise.next(amplitude: 20000))
            return v == 0 ? 1 : v
        }
    }

    static func bytes<T: FixedWidthInteger>(_ values: [T]) -> [UInt8] {
        values.flatMap { v in withUnsafeBytes(of: v.littleEndian) { Array($0) } }
    }

    /// Finds `expected` (interleaved stereo) in the recording, starting at its first
    /// non-silent frame.
    static func locate(_ expected: [Float], in recording: DecodedAudio, after frame: Int = 0) -> Int? {
        let samples = recording.interleaved
        var start = frame * 2
        while start < samples.count, samples[start] == 0 && samples[start + 1] == 0 { start += 2 }
        guard start + expected.count <= samples.count else { return nil }
        return Array(samples[start..<(start + expected.count)]) == expected ? start / 2 : nil
    }

    /// Where `expected` stops matching the recording (for failure messages).
    static func divergence(_ expected: [Float], in recording: DecodedAudio, after frame: Int = 0) -> String {
        let samples = recording.interleaved
        var start = frame * 2
        while start < samples.count, samples[start] == 0 && samples[start + 1] == 0 { start += 2 }
        for i in 0..<expected.count {
            guard start + i < samples.count else { return "the recording ends \(expected.count - i) samples early" }
            if samples[start + i] != expected[i] {
                return "sample \(i) of \(expected.count) differs: \(samples[start + i]) instead of \(expected[i]) (stream starts at frame \(start / 2))"
            }
        }
        return "matches"
    }

    @Test func sixteenBitAndFloatStreamsComeOutExactAndComplete() throws {
        let daemon = try Daemon()
        let client = try RawClient(socketPath: daemon.socketPath)

        // 1. s16le mono, 1.5 s: converted by /32768, the same on both ears.
        let mono = Self.pattern(frames: 72000, channels: 1, seed: 1)
        let monoStream = try client.openStream(format: AudioFormat(sampleFormat: .s16le, rateHz: 48000, channels: 1), mode: .off)
        try client.write(stream: monoStream, pcm: Self.bytes(mono), bytesPerFrame: 2)
        let drained = try client.request(.streamDrain(StreamReference(streamID: monoStream)))
        #expect(drained == .ok)
        // The drain's OK means the last sample is in the file already.
        let afterFirst = try AudioFileReader.read(path: daemon.wavPath)
        let expectedMono = mono.flatMap { v -> [Float] in let f = Float(v) / 32768; return [f, f] }
        let first = Self.locate(expectedMono, in: afterFirst)
        #expect(first != nil, "the s16 stream is not in the output exactly, completely and in order")

        // 2. f32le stereo, 1 s, on a second stream.
        var noise = WhiteNoise(seed: 2)
        let stereo = (0..<96000).map { _ in noise.next(amplitude: 0.6) }.map { $0 == 0 ? 0.001 : $0 }
        let stereoStream = try client.openStream(format: AudioFormat(sampleFormat: .f32le, rateHz: 48000, channels: 2), mode: .off)
        try client.write(stream: stereoStream, pcm: Self.bytes(stereo.map(\.bitPattern)), bytesPerFrame: 8)
        #expect(try client.request(.streamDrain(StreamReference(streamID: stereoStream))) == .ok)
        let afterSecond = try AudioFileReader.read(path: daemon.wavPath)
        let second = Self.locate(stereo, in: afterSecond, after: (first ?? 0) + mono.count)
        #expect(second != nil, "the float stream is not in the output exactly, completely and in order")

        // The STREAM_ENDED(drained) event came before each OK.
        let ended = client.backlog.filter { if case .streamEnded(let e) = $0.0 { return e.reason == .drained } else { return false } }
        #expect(ended.count == 2)
        #expect(try client.request(.streamClose(StreamReference(streamID: monoStream))) == .ok)
        #expect(daemon.stop() == 0)
        // Finalised on SIGTERM: still a valid WAV with everything in it.
        let final = try AudioFileReader.read(path: daemon.wavPath)
        #expect(final.frameCount >= afterSecond.frameCount)
    }

    @Test func aFastWriterIsPacedByCreditAndLosesNothing() throws {
        let daemon = try Daemon()
        let client = try RawClient(socketPath: daemon.socketPath)
        let frames = 48000 * 3
        let values = Self.pattern(frames: frames, channels: 2, seed: 3)
        let stream = try client.openStream(format: AudioFormat(sampleFormat: .s16le, rateHz: 48000, channels: 2), mode: .off)
        let initialCredit = client.credits[stream]!
        // The server never lets more than its buffer be outstanding.
        #expect(initialCredit <= Int(0.4 * 48000) * 4 + 4)
        let started = Date()
        try client.write(stream: stream, pcm: Self.bytes(values), bytesPerFrame: 4)
        let writeSeconds = Date().timeIntervalSince(started)
        // Three seconds of audio cannot be written in much less than 3 − 0.4 s: credit paces it.
        #expect(writeSeconds > 2.3, "the writer was not paced: \(writeSeconds) s")
        #expect(try client.request(.streamDrain(StreamReference(streamID: stream))) == .ok)
        let recording = try AudioFileReader.read(path: daemon.wavPath)
        let expected = values.map { Float($0) / 32768 }
        #expect(Self.locate(expected, in: recording) != nil)
        #expect(try HeadTrackingTests.statusDocument(client).output.kind == "wav")
    }
}
