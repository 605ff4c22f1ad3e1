import Foundation
import Testing
import SceneSoundDSP
import SceneSoundMedia

/// `scenesound render`, run as a user runs it.
@Suite final class RenderCommandTests {
    let dir = temporaryDirectory("render")
    deinit { try? FileManager.default.removeItem(atPath: dir) }
    /// Each test gets its own HRTF cache, so the cold path is exercised too.
    var environment: [String: String] { ["XDG_CACHE_HOME": dir + "/cache"] }

    func writeNoise(_ name: String, rateHz: Int = 48000, channels: Int = 1, seconds: Double = 0.5) throws -> String {
        var noise = WhiteNoise(seed: 99)
        let path = dir + "/" + name
        let writer = try AudioFileWriter(path: path, sampleRateHz: rateHz, channelCount: channels)
        try writer.write(noise.samples(Int(Double(rateHz) * seconds) * channels, amplitude: 0.3))
        try writer.finish()
        return path
    }

    func render(_ arguments: [String]) throws -> CommandResult {
        try Binaries.run("scenesound", ["render"] + arguments, environment: environment)
    }

    func cues(_ path: String) throws -> BinauralCues {
        let audio = try AudioFileReader.read(path: path)
        return CueAnalysis.cues(left: audio.channel(0), right: audio.channel(1), sampleRateHz: audio.sampleRateHz)
    }

    @Test func rendersToTheLeftAndTheHeadTurnMovesItRight() throws {
        let input = try writeNoise("in.wav")
        let left = try render([input, "-o", dir + "/left.wav", "--azimuth", "60"])
        #expect(left.status == 0, "\(left.standardError)")
        let turned = try render([input, "-o", dir + "/turned.wav", "--head-yaw", "90"])
        #expect(turned.status == 0)
        let right = try render([input, "-o", dir + "/right.wav", "--azimuth=-90"])
        #expect(right.status == 0)
        #expect(try cues(dir + "/left.wav").itdMicroseconds > 500)
        let a = try cues(dir + "/turned.wav"), b = try cues(dir + "/right.wav")
        #expect(abs(a.itdMicroseconds - b.itdMicroseconds) < 1 && a.itdMicroseconds < -600)
        // Same length as the input, plus the filters' ring-out.
        let out = try AudioFileReader.read(path: dir + "/left.wav")
        #expect(out.channelCount == 2 && out.sampleRateHz == 48000)
        #expect(out.frameCount >= 24000 && out.frameCount < 24000 + 1000)
    }

    @Test func stereoAtAnotherRateIsResampledAndSpread() throws {
        let input = try writeNoise("stereo.wav", rateHz: 44100, channels: 2)
        let result = try render([input, "-o", dir + "/out.wav", "--room", "small", "--yaw-rate", "90"])
        #expect(result.status == 0, "\(result.standardError)")
        let out = try AudioFileReader.read(path: dir + "/out.wav")
        #expect(out.sampleRateHz == 48000)
        #expect(out.frameCount > 24000)  // resampled length plus the room's tail
    }

    /// `--hrtf-voices 0` renders through the ambisonic bus alone: a different rendering (the
    /// decoder's filters, whole-sample delays) with the voice's cues.
    @Test func theBusAloneKeepsTheCues() throws {
        let input = try writeNoise("in.wav")
        let voice = try render([input, "-o", dir + "/voice.wav", "--azimuth", "60"])
        let bus = try render([input, "-o", dir + "/bus.wav", "--azimuth", "60", "--hrtf-voices", "0"])
        #expect(voice.status == 0 && bus.status == 0, "\(bus.standardError)")
        let a = try AudioFileReader.read(path: dir + "/voice.wav"), b = try AudioFileReader.read(path: dir + "/bus.wav")
        #expect(a.channel(0) != b.channel(0))
        let cuesA = try cues(dir + "/voice.wav"), cuesB = try cues(dir + "/bus.wav")
        print("render at 60°: voice ITD \(cuesA.itdMicroseconds) µs, ILD \(cuesA.interauralLevelDifferenceDecibels) dB; "
              + "bus ITD \(cuesB.itdMicroseconds) µs, ILD \(cuesB.interauralLevelDifferenceDecibels) dB")
        #expect(abs(cuesA.itdMicroseconds - cuesB.itdMicroseconds) <= 30)
        #expect(abs(cuesA.interauralLevelDifferenceDecibels - cuesB.interauralLevelDifferenceDecibels) <= 1)

        let negative = try render([input, "-o", dir + "/x.wav", "--hrtf-voices", "-1"])
        #expect(negative.status == 2)
        #expect(negative.standardError.split(separator: "\n").count == 1 && negative.standardError.contains("--hrtf-voices"))
    }

    /// `--hrtf-eq none` plays the set as measured (KEMAR's ear-canal resonance: 2.5 kHz far
    /// above 250 Hz), the default `diffuse` equalizes it (each set prepared and cached on its
    /// own); anything else is refused naming the option and its values.
    @Test func theEqualizationIsChosenOnTheCommandLine() throws {
        var noise = WhiteNoise(seed: 5)
        let path = dir + "/long.wav"
        let writer = try AudioFileWriter(path: path, sampleRateHz: 48000, channelCount: 1)
        try writer.write(noise.samples(48000, amplitude: 0.1))
        try writer.finish()
        func tilt(_ arguments: [String]) throws -> Double {
            let out = dir + "/eq.wav"
            let result = try render([path, "-o", out, "--distance", "1.4", "--azimuth", "30"] + arguments)
            #expect(result.status == 0, "\(result.standardError)")
            let audio = try AudioFileReader.read(path: out)
            var low = 0.0, high = 0.0
            for ear in [audio.channel(0), audio.channel(1)] {
                let bands = BandAnalysis.thirdOctavePowers(of: ear, centresHz: [250, 2500], sampleRateHz: 48000)
                low += bands[0]
                high += bands[1]
            }
            return 10 * log10(high / low)
        }
        let equalized = try tilt([]), raw = try tilt(["--hrtf-eq", "none"])
        print("render at 30°, 2.5 kHz over 250 Hz: hrtf-eq diffuse \(equalized) dB, none \(raw) dB")
        #expect(raw > 12)
        #expect(abs(equalized) < 6)
        let cached = (try? FileManager.default.contentsOfDirectory(atPath: dir + "/cache/scenesound")) ?? []
        #expect(cached.contains { $0.contains("-diffuse-") } && cached.contains { $0.contains("-none-") }, "\(cached)")

        let bad = try render([path, "-o", dir + "/x.wav", "--hrtf-eq", "flat"])
        #expect(bad.status == 2)
        #expect(bad.standardError.split(separator: "\n").count == 1 && bad.standardError.contains("--hrtf-eq")
                && bad.standardError.contains("diffuse"), "\(bad.standardError)")
    }

    /// Pure tones straight ahead stay centred in both rooms (the reverb used to lean them by
    /// several dB: 300 Hz in the small room, 523 Hz in the medium one).
    @Test func tonesAheadStayCentredInTheRooms() throws {
        for (frequencyHz, room) in [(300.0, "small"), (523.0, "medium")] {
            let path = dir + "/tone\(Int(frequencyHz)).wav"
            let writer = try AudioFileWriter(path: path, sampleRateHz: 48000, channelCount: 1)
            try writer.write((0..<48000).map { Float(0.25 * sin(2 * Double.pi * frequencyHz * Double($0) / 48000)) })
            try writer.finish()
            let out = dir + "/tone\(Int(frequencyHz))-\(room).wav"
            let result = try render([path, "-o", out, "--room", room])
            #expect(result.status == 0, "\(result.standardError)")
            let ild = try cues(out).interauralLevelDifferenceDecibels
            print("\(Int(frequencyHz)) Hz ahead, room \(room): ILD \(ild) dB")
            #expect(abs(ild) <= 1)
        }
    }

    /// The freedesktop dialog-warning alert on the right keeps its side in the daemon's
    /// default room: at least 70 % of its level difference without the room.
    @Test func anAlertOnTheRightStaysRightInTheSmallRoom() throws {
        let alert = "/usr/share/sounds/freedesktop/stereo/dialog-warning.oga"
        let dry = try render([alert, "-o", dir + "/dry.wav", "--azimuth=-30"])
        let small = try render([alert, "-o", dir + "/small.wav", "--azimuth=-30", "--room", "small"])
        #expect(dry.status == 0 && small.status == 0, "\(small.standardError)")
        let ildDry = try cues(dir + "/dry.wav").interauralLevelDifferenceDecibels
        let ildSmall = try cues(dir + "/small.wav").interauralLevelDifferenceDecibels
        print("dialog-warning at -30°: ILD \(ildDry) dB dry, \(ildSmall) dB in the small room")
        #expect(ildDry < -2)
        #expect(ildSmall <= 0.7 * ildDry)
    }

    @Test func aMissingOrCorruptHRTFFailsCleanly() throws {
        let input = try writeNoise("in.wav")
        let missing = try render([input, "-o", dir + "/a.wav", "--hrtf", dir + "/none.sofa"])
        #expect(missing.status == 1)
        #expect(missing.standardError.split(separator: "\n").count == 1)
        #expect(missing.standardError.contains("none.sofa"))

        let corrupt = dir + "/corrupt.sofa"
        try Data(contentsOf: URL(fileURLWithPath: "/usr/share/libmysofa/default.sofa")).prefix(300_000)
            .write(to: URL(fileURLWithPath: corrupt))
        let broken = try render([input, "-o", dir + "/b.wav", "--hrtf", corrupt])
        #expect(broken.status == 1)
        #expect(broken.standardError.split(separator: "\n").count == 1)
        #expect(!FileManager.default.fileExists(atPath: dir + "/a.wav"))
        #expect(!FileManager.default.fileExists(atPath: dir + "/b.wav"))
    }

    @Test func badInputFilesFailWithOneLineAndNoOutput() throws {
        let text = dir + "/notes.wav"
        try Data("not audio at all".utf8).write(to: URL(fileURLWithPath: text))
        let nineChannels = try writeNoise("nine.wav", channels: 9, seconds: 0.1)
        let lowRate = try writeNoise("low.wav", rateHz: 4000, seconds: 0.1)
        for (input, phrase) in [(text, "not a readable audio file"), (nineChannels, "9 channels"),
                                (lowRate, "4000 Hz"), (dir + "/absent.wav", "no such file")] {
            let result = try render([input, "-o", dir + "/out.wav"])
            #expect(result.status == 1)
            #expect(result.standardError.split(separator: "\n").count == 1)
            #expect(result.standardError.contains(phrase), "\(result.standardError)")
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.contains("out.wav") }
            #expect(leftovers.isEmpty)
        }
    }

    @Test func usageErrorsExitTwo() throws {
        let input = try writeNoise("in.wav")
        for arguments in [[input, "-o", dir + "/x.wav", "--rate", "1000"],
                          [input, "-o", dir + "/x.wav", "--room", "cathedral"],
                          [input, "-o", dir + "/x.wav", "--distance", "0"],
                          [input]] {
            let result = try render(arguments)
            #expect(result.status == 2, "\(arguments): \(result.standardError)")
            #expect(result.standardError.split(separator: "\n").count == 1)
        }
        let help = try render(["--help"])
        #expect(help.status == 0 && help.standardOutput.contains("--azimuth"))
    }
}
