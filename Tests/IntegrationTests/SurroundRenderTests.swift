import Foundation
import Testing
import SceneSoundDSP
import SceneSoundMedia
import SceneSoundSOFA

/// `scenesound render` of surround files (3 to 8 channels), measured on the rendered audio
/// against the KEMAR set's own cues (docs/BEHAVIOUR.md "Surround").
@Suite final class SurroundRenderTests {
    let dir = temporaryDirectory("surround")
    deinit { try? FileManager.default.removeItem(atPath: dir) }
    var environment: [String: String] { ["XDG_CACHE_HOME": dir + "/cache"] }
    static let rateHz = 48000
    static let noise: [Float] = { var n = WhiteNoise(seed: 7); return n.samples(24000, amplitude: 0.3) }()
    static let measurements: [HRIRMeasurement] = try! SOFAFile.load(path: SOFAFile.defaultPath).resampled(to: 48000)

    /// The set's own cues for a horizontal direction: `noise` through its measured responses.
    static func datasetCues(azimuthDegrees: Double) -> BinauralCues {
        var az = azimuthDegrees.truncatingRemainder(dividingBy: 360)
        if az < 0 { az += 360 }
        let m = measurements.first { abs($0.azimuthDegrees - az) < 0.01 && abs($0.elevationDegrees) < 0.01 }!
        func convolve(_ h: [Float]) -> [Float] {
            var y = [Float](repeating: 0, count: noise.count)
            for n in 0..<noise.count {
                var s: Float = 0
                for k in 0..<min(h.count, n + 1) { s += h[k] * noise[n - k] }
                y[n] = s
            }
            return y
        }
        return CueAnalysis.cues(left: convolve(m.left), right: convolve(m.right), sampleRateHz: Double(rateHz))
    }

    /// A file of `channelCount` channels with `signal` in channel `index` (silence in the others).
    func write(_ name: String, channelCount: Int, index: Int, signal: [Float] = noise, channelMap: [String]? = nil) throws -> String {
        let path = dir + "/" + name
        let writer = try AudioFileWriter(path: path, sampleRateHz: Self.rateHz, channelCount: channelCount,
                                         channelMap: channelMap)
        var interleaved = [Float](repeating: 0, count: signal.count * channelCount)
        for n in 0..<signal.count { interleaved[n * channelCount + index] = signal[n] }
        try writer.write(interleaved)
        try writer.finish()
        return path
    }

    func render(_ input: String, _ arguments: [String] = []) throws -> DecodedAudio {
        let output = input + ".out.wav"
        let result = try Binaries.run("scenesound", ["render", input, "-o", output] + arguments, environment: environment)
        #expect(result.status == 0, "\(result.standardError)")
        return try AudioFileReader.read(path: output)
    }

    func cues(_ audio: DecodedAudio, seconds: ClosedRange<Double>? = nil) -> BinauralCues {
        var (left, right) = (audio.channel(0), audio.channel(1))
        if let seconds {
            let range = Int(seconds.lowerBound * audio.sampleRateHz)..<Int(seconds.upperBound * audio.sampleRateHz)
            (left, right) = (Array(left[range]), Array(right[range]))
        }
        return CueAnalysis.cues(left: left, right: right, sampleRateHz: audio.sampleRateHz)
    }

    /// A 5.1 file (no channel map: WAVE order FL FR FC LFE BL BR) rendered ahead: FL and FR
    /// at the set's ±30°, FC centred, the surrounds at its ±110°.
    @Test(arguments: [(0, 30.0), (1, -30), (2, 0), (4, 110), (5, -110)])
    func each51ChannelSoundsFromItsSpeaker(channel: Int, azimuthDegrees: Double) throws {
        // At the set's own distance (no near field) and as measured (no equalization, whose
        // spectral weighting moves the broadband ILD): the speaker's direction alone is compared.
        let out = try render(try write("c\(channel).wav", channelCount: 6, index: channel),
                             ["--distance", "1.4", "--hrtf-eq", "none"])
        let rendered = cues(out), reference = Self.datasetCues(azimuthDegrees: azimuthDegrees)
        print("render 5.1 channel \(channel): ITD \(rendered.itdMicroseconds) µs (KEMAR at \(azimuthDegrees)°: "
              + "\(reference.itdMicroseconds)), ILD \(rendered.interauralLevelDifferenceDecibels) dB "
              + "(KEMAR \(reference.interauralLevelDifferenceDecibels))")
        #expect(abs(rendered.itdMicroseconds - reference.itdMicroseconds) <= 30)
        #expect(abs(rendered.interauralLevelDifferenceDecibels - reference.interauralLevelDifferenceDecibels) <= 1.5)
        if azimuthDegrees == 0 {
            #expect(abs(rendered.itdMicroseconds) <= 30 && abs(rendered.interauralLevelDifferenceDecibels) <= 1)
        }
    }

    /// A file's channel map wins over the order for its count: four channels are quad (FL FR
    /// BL BR) unless the file says FL FR FC LFE. More than eight channels: one clear line.
    @Test func theFilesChannelMapIsFollowed() throws {
        let quad = cues(try render(try write("quad.wav", channelCount: 4, index: 2)))
        let mapped = try write("31.wav", channelCount: 4, index: 2, channelMap: ["front-left", "front-right", "front-center", "lfe"])
        #expect(try AudioFileReader.read(path: mapped).channelMap == ["front-left", "front-right", "front-center", "lfe"])
        let centre = cues(try render(mapped))
        print("4 channels, channel 3: ITD \(quad.itdMicroseconds) µs as quad's BL, \(centre.itdMicroseconds) µs as 3.1's FC")
        #expect(quad.itdMicroseconds > 500)
        #expect(abs(centre.itdMicroseconds) <= 30)
        let lfe = try render(try write("lfe.wav", channelCount: 4, index: 3,
                                       channelMap: ["front-left", "front-right", "front-center", "lfe"]))
        #expect(lfe.channel(0) == lfe.channel(1))

        let nine = try write("nine.wav", channelCount: 9, index: 0)
        let result = try Binaries.run("scenesound", ["render", nine, "-o", dir + "/nine.out.wav"], environment: environment)
        #expect(result.status == 1)
        #expect(result.standardError.split(separator: "\n").count == 1 && result.standardError.contains("1 to 8"))
    }

    /// A 7.1 side-left speaker (90° in the world) while the head turns left at 90°/s: its
    /// cues follow the world direction, 90° − 90°/s × t from the head.
    @Test func a71SpeakerStaysInTheWorldWhileTheHeadTurns() throws {
        var generator = WhiteNoise(seed: 11)
        let input = try write("71.wav", channelCount: 8, index: 6, signal: generator.samples(2 * Self.rateHz, amplitude: 0.3))
        let out = try render(input, ["--yaw-rate", "90"])
        for (seconds, azimuth) in [(1.0 / 3, 60.0), (2.0 / 3, 30), (1, 0), (4.0 / 3, -30), (5.0 / 3, -60)] {
            let rendered = cues(out, seconds: (seconds - 0.05)...(seconds + 0.05))
            let reference = Self.datasetCues(azimuthDegrees: azimuth)
            print("7.1 SL at \(String(format: "%.2f", seconds)) s, head turning 90°/s: ITD \(rendered.itdMicroseconds) µs "
                  + "(KEMAR at \(azimuth)°: \(reference.itdMicroseconds))")
            #expect(abs(rendered.itdMicroseconds - reference.itdMicroseconds) <= 40, "at \(seconds) s")
        }
    }
}
