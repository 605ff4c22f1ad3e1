import Foundation
import Testing
import SceneSoundMedia

@Suite struct AudioFileTests {
    func temporaryDirectory() -> String {
        let path = NSTemporaryDirectory() + "scenesound-media-\(UUID().uuidString)"
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test func writesAndReadsBackFloatWAVExactly() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let samples: [Float] = (0..<2000).map { Float(sin(Double($0) * 0.01)) * 0.7 }
        let writer = try AudioFileWriter(path: dir + "/a.wav", sampleRateHz: 44100, channelCount: 2)
        try writer.write(samples)
        #expect(!FileManager.default.fileExists(atPath: dir + "/a.wav"))  // not before finish
        try writer.finish()
        let back = try AudioFileReader.read(path: dir + "/a.wav")
        #expect(back.sampleRateHz == 44100 && back.channelCount == 2)
        let identical = back.interleaved == samples
        #expect(identical)
    }

    @Test func discardLeavesNoFile() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let writer = try AudioFileWriter(path: dir + "/b.wav", sampleRateHz: 48000, channelCount: 2)
        try writer.write([0.1, 0.2])
        writer.discard()
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).isEmpty)
    }

    @Test func decodesTheFreedesktopThemeOggVorbis() throws {
        let bell = try AudioFileReader.read(path: "/usr/share/sounds/freedesktop/stereo/bell.oga")
        #expect(bell.channelCount >= 1 && bell.frameCount > 1000)
        #expect(bell.interleaved.contains { abs($0) > 0.01 })
    }

    @Test func notAudioIsAClearError() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Data("this is not audio".utf8).write(to: URL(fileURLWithPath: dir + "/x.wav"))
        #expect(throws: AudioFileError.self) { try AudioFileReader.read(path: dir + "/x.wav") }
        #expect(throws: AudioFileError.self) { try AudioFileReader.read(path: dir + "/missing.wav") }
    }

    @Test func resamplingKeepsPitchAndLength() throws {
        // A 1 kHz sine at 44.1 kHz resampled to 48 kHz: same frequency, length scaled.
        let input = (0..<44100).map { Float(sin(2 * .pi * 1000 * Double($0) / 44100)) * 0.5 }
        let out = try Resampler.resample(input, channelCount: 1, from: 44100, to: 48000)
        #expect(abs(out.count - 48000) <= 2)
        var crossings = 0
        for i in 1000..<47000 where (out[i - 1] < 0) != (out[i] < 0) { crossings += 1 }
        #expect(abs(Double(crossings) / 2 / (46000.0 / 48000) - 1000) < 2)
        // Aligned: no start-up delay (the middle matches the ideal sine at 48 kHz).
        for i in stride(from: 10000, to: 10100, by: 7) {
            #expect(abs(out[i] - Float(sin(2 * .pi * 1000 * Double(i) / 48000)) * 0.5) < 1e-3)
        }
    }
}
