import Foundation
import Testing
import SceneSoundDSP
import SceneSoundMedia

/// Every numeric option of the offline verbs takes a negative value written as a separate
/// word (`--azimuth -30`), as people type it: the value reaches the renderer, or the range
/// check that names the flag — never "Missing value".
@Suite final class NegativeValueTests {
    let dir = temporaryDirectory("negative")
    deinit { try? FileManager.default.removeItem(atPath: dir) }
    var environment: [String: String] { ["XDG_CACHE_HOME": NSTemporaryDirectory() + "scenesound-test-cache"] }

    func noise(_ name: String = "in.wav") throws -> String {
        var generator = WhiteNoise(seed: 7)
        let path = dir + "/" + name
        let writer = try AudioFileWriter(path: path, sampleRateHz: 48000, channelCount: 1)
        try writer.write(generator.samples(24000, amplitude: 0.3))
        try writer.finish()
        return path
    }

    /// Renders with the arguments and returns the cues of the output's last `seconds`.
    func renderedCues(_ arguments: [String], lastSeconds seconds: Double = 0.5) throws -> BinauralCues {
        let output = dir + "/\(UUID().uuidString.prefix(8)).wav"
        let result = try Binaries.run("scenesound", ["render", try noise(), "-o", output] + arguments, environment: environment)
        #expect(result.status == 0, "\(arguments): \(result.standardError)")
        let audio = try AudioFileReader.read(path: output)
        let frames = Int(seconds * 48000)
        // The filters' ring-out (under 1000 frames) is left out of a tail measurement.
        let end = audio.frameCount - 1000
        let left = Array(audio.channel(0)[max(0, end - frames)..<end]), right = Array(audio.channel(1)[max(0, end - frames)..<end])
        return CueAnalysis.cues(left: left, right: right, sampleRateHz: 48000)
    }

    @Test func renderAzimuthMinusThirtyIsOnTheRight() throws {
        let cues = try renderedCues(["--azimuth", "-30"])
        // KEMAR at −30°: the left ear lags by about 250 µs.
        #expect(cues.itdMicroseconds < -150, "ITD \(cues.itdMicroseconds) µs")
    }

    @Test func renderHeadYawMinusThirtyPutsAheadOnTheLeft() throws {
        let cues = try renderedCues(["--head-yaw", "-30"])
        #expect(cues.itdMicroseconds > 150, "ITD \(cues.itdMicroseconds) µs")
    }

    @Test func renderYawRateMinusNinetyTurnsTheHeadRight() throws {
        // After 0.5 s at −90°/s the head faces −45°, so a source ahead is heard at +45°.
        let cues = try renderedCues(["--yaw-rate", "-90"], lastSeconds: 0.1)
        #expect(cues.itdMicroseconds > 200, "ITD \(cues.itdMicroseconds) µs")
    }

    @Test func renderElevationMinusThirtyIsTheSameAsTheEqualsForm() throws {
        let input = try noise()
        func render(_ arguments: [String]) throws -> [Float] {
            let output = dir + "/\(UUID().uuidString.prefix(8)).wav"
            let result = try Binaries.run("scenesound", ["render", input, "-o", output] + arguments, environment: environment)
            #expect(result.status == 0, "\(arguments): \(result.standardError)")
            return try AudioFileReader.read(path: output).interleaved
        }
        let typed = try render(["--elevation", "-30"])
        #expect(typed == (try render(["--elevation=-30"])))
        #expect(typed != (try render(["--elevation=30"])))
        #expect(typed != (try render([])))
    }

    /// Options whose accepted range has no negative values: the value as typed reaches the
    /// range check, whose one line names the flag and the value.
    @Test(arguments: [
        (["render", "IN", "-o", "OUT", "--distance", "-1"], "--distance -1.0"),
        (["render", "IN", "-o", "OUT", "--rate", "-48000"], "--rate -48000"),
        (["render", "IN", "-o", "OUT", "--block", "-256"], "--block -256"),
        (["render", "IN", "-o", "OUT", "--hrtf-voices", "-1"], "--hrtf-voices -1"),
        (["bench", "--sources", "-4"], "--sources -4"),
        (["bench", "--seconds", "-1"], "--seconds -1.0"),
        (["bench", "--hrtf-voices", "-2"], "--hrtf-voices -2"),
        (["bench", "--rate", "-44100"], "--rate -44100"),
        (["bench", "--block", "-128"], "--block -128"),
        (["cues", "IN", "--segment", "-0.5"], "--segment -0.5"),
        (["play", "-", "--format", "s16le", "--rate", "-48000", "--channels", "1"], "--rate -48000"),
        (["play", "-", "--format", "s16le", "--rate", "48000", "--channels", "-1"], "--channels -1"),
        (["scene", "place", "radio", "--azimuth", "10", "--distance", "-2"], "--distance -2.0"),
    ])
    func negativeValuesOutOfRangeAreNamedByTheRangeCheck(arguments: [String], named: String) throws {
        let input = try noise()
        let resolved = arguments.map { $0 == "IN" ? input : $0 == "OUT" ? dir + "/out.wav" : $0 }
        // The verbs that talk to a server get a socket nobody listens on: the check comes first.
        let socket = ["play", "scene"].contains(arguments[0]) ? ["--socket", dir + "/no-server"] : []
        let result = try Binaries.run("scenesound", resolved + socket, environment: environment)
        #expect(result.status == 2, "\(arguments): \(result.standardError)")
        #expect(result.standardError.contains(named), "\(arguments): \(result.standardError)")
        #expect(!result.standardError.contains("Missing value"))
        #expect(result.standardError.split(separator: "\n").count == 1)
    }
}
