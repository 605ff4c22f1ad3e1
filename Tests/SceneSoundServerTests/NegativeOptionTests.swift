import Foundation
import Testing
import SceneSoundDSP
import SceneSoundMedia

/// Negative numbers typed as separate words (`--azimuth -40`, `--volume -6`) reach the server
/// and the daemon's checks: right-hand directions and cuts in level are negative.
/// (`--duck-db` and `--hidden-window-db` are measured where ducking and hidden windows are:
/// SystemSoundTests and WindowSceneTests.)
@Suite(.serialized) struct NegativeOptionTests {
    typealias Support = SampleTestSupport

    @Test func scenePlaceAzimuthAndElevationMinus() throws {
        let daemon = try Daemon()
        let socket = ["--socket", daemon.socketPath]
        let placed = try CommandLineTests.runCLI(["scene", "place", "radio", "--azimuth", "-40", "--elevation", "-10"] + socket)
        #expect(placed.status == 0, "\(placed.error)")
        let list = try CommandLineTests.runCLI(["scene", "list", "--json"] + socket)
        let scenes = try JSONSerialization.jsonObject(with: Data(list.output.utf8)) as? [[String: Any]] ?? []
        let radio = try #require(scenes.first { $0["id"] as? String == "radio" }, "\(list.output)")
        #expect(abs((radio["azimuth_degrees"] as? Double ?? 0) + 40) < 1e-3, "\(radio)")
        #expect(abs((radio["elevation_degrees"] as? Double ?? 0) + 10) < 1e-3, "\(radio)")
    }

    @Test func headSetYawPitchRollAndPositionMinus() throws {
        let daemon = try Daemon()
        let socket = ["--socket", daemon.socketPath]
        let set = try CommandLineTests.runCLI(["head", "set", "--yaw", "-30", "--pitch", "-10", "--roll", "-5",
                                               "--position", "-0.1,-0.05,-0.2"] + socket)
        #expect(set.status == 0, "\(set.error)")
        let shown = try CommandLineTests.runCLI(["head", "show", "--json"] + socket)
        let head = try JSONSerialization.jsonObject(with: Data(shown.output.utf8)) as? [String: Any] ?? [:]
        #expect(abs((head["yaw_degrees"] as? Double ?? 0) + 30) < 1e-3, "\(head)")
        #expect(abs((head["pitch_degrees"] as? Double ?? 0) + 10) < 1e-3, "\(head)")
        #expect(abs((head["roll_degrees"] as? Double ?? 0) + 5) < 1e-3, "\(head)")
        let position = head["position_metres"] as? [Double] ?? []
        #expect(position.count == 3 && zip(position, [-0.1, -0.05, -0.2]).allSatisfy { abs($0 - $1) < 1e-6 }, "\(head)")
    }

    /// `play --volume -6`, `system --volume -6` and `alert --volume -6`: a 0.4 tone comes
    /// out at 0.2 (−6 dB), measured on the wav output with spatial rendering off.
    @Test(arguments: ["play", "system", "alert"])
    func volumeMinusSixHalvesTheLevel(verb: String) throws {
        let daemon = try Daemon()
        let file = daemon.directory + "/tone.wav"
        let writer = try AudioFileWriter(path: file, sampleRateHz: 48000, channelCount: 2)
        try writer.write(Support.tone(hz: 1000, seconds: 0.5, amplitude: 0.4, channels: 2))
        try writer.finish()
        let played = try CommandLineTests.runCLI([verb, file, "--volume", "-6", "--spatial", "off", "--socket", daemon.socketPath])
        #expect(played.status == 0, "\(played.error)")
        #expect(daemon.stop() == 0)
        let left = try AudioFileReader.read(path: daemon.wavPath).channel(0)
        let range = try #require(Support.nonSilentRange(left), "nothing reached the output")
        // 0.1 s (100 whole periods) from the middle of what was played.
        let middle = (range.lowerBound + range.upperBound) / 2
        let level = Support.goertzelAmplitude(left[(middle - 2400)..<(middle + 2400)], hz: 1000)
        let gain = Support.decibels(level / 0.4)
        #expect(abs(gain + 6) < 0.1, "\(verb) --volume -6 played at \(gain) dB")
    }

    /// The daemon's flags that accept no negative values: the value as typed reaches the
    /// check, whose one line names the flag and the value.
    @Test(arguments: [
        ("--rate", "-48000", "--rate -48000"),
        ("--block", "-256", "--block -256"),
        ("--max-clients", "-1", "--max-clients -1"),
        ("--max-streams-per-client", "-1", "--max-streams-per-client -1"),
        ("--max-frame-bytes", "-4096", "--max-frame-bytes -4096"),
        ("--stream-buffer-seconds", "-0.4", "--stream-buffer-seconds -0.4"),
        ("--max-messages-per-second", "-10", "--max-messages-per-second -10"),
        ("--max-opentrack-packets-per-second", "-10", "--max-opentrack-packets-per-second -10"),
        ("--sample-cache-bytes", "-1048576", "--sample-cache-bytes -1048576"),
        ("--coalesce-seconds", "-0.1", "--coalesce-seconds -0.1"),
        ("--hidden-window-cutoff-hz", "-800", "--hidden-window-cutoff-hz -800"),
        ("--duck-db", "-61", "--duck-db -61"),
        ("--hidden-window-db", "-61", "--hidden-window-db -61"),
        ("--opentrack", "-1", "--opentrack '-1'"),
        ("--osc", "-1", "--osc '-1'"),
        ("--max-osc-packets-per-second", "-10", "--max-osc-packets-per-second -10"),
        ("--head-recenter-seconds", "-5", "--head-recenter-seconds -5"),
        ("--hrtf-voices", "-1", "--hrtf-voices -1"),
        ("--rest-after-seconds", "-1", "--rest-after-seconds -1"),
    ])
    func daemonNegativeValuesReachTheRangeCheck(flag: String, value: String, named: String) throws {
        let result = try ConfigFileTests.runDaemon([flag, value, "--socket", NSTemporaryDirectory() + "unused/socket"],
                                                   environment: ["XDG_CONFIG_HOME": "/nonexistent"])
        #expect(result.status == 2, "\(flag) \(value): \(result.error)")
        #expect(result.error.contains(named), "\(flag) \(value): \(result.error)")
        #expect(!result.error.contains("Missing value"))
        #expect(result.error.split(separator: "\n").count == 1)
    }
}
