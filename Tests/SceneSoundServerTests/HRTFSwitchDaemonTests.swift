import Foundation
import SceneSoundDSP
import SceneSoundMedia
import SceneSoundProtocol
import SceneSoundSOFA
import SceneSoundTestSupport
import Testing

/// `scenesound hrtf use` against the real daemon (wav output), as a user runs it: a noise at 60°
/// left switches from KEMAR to a rigid sphere mid-sound with no gap, ends on the sphere's cues,
/// `status` names the set, a bad file changes nothing, and the choice lasts across restarts
/// (unless `--hrtf` names a set).
@Suite(.serialized) struct HRTFSwitchDaemonTests {
    static let rateHz = 48000.0

    static func status(_ daemon: Daemon) throws -> StatusDocument {
        try HeadphoneEQDaemonTests.status(daemon)
    }

    /// Cues of `file` rendered offline through `set` at the scene's place (the same engine).
    static func offlineCues(_ file: String, set: String, directory: String, range: Range<Int>) throws -> BinauralCues {
        let out = directory + "/offline-\(UUID().uuidString.prefix(6)).wav"
        let run = try CommandLineTests.runCLI(["render", file, "-o", out, "--azimuth", "60", "--distance", "1.6",
                                               "--room", "none", "--hrtf", set])
        guard run.status == 0 else { throw TestFailure("render: \(run.error)") }
        let audio = try AudioFileReader.read(path: out)
        return CueAnalysis.cues(left: Array(audio.channel(0)[range]), right: Array(audio.channel(1)[range]), sampleRateHz: rateHz)
    }

    @Test func hrtfUseSwitchesMidSoundWithoutAGapAndTheChoiceLastsAcrossRestarts() throws {
        let started = Date()
        let sphere = try SphereHeadSOFA.path()
        let state = NSTemporaryDirectory() + "scenesound-state-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: state) }
        let environment = ["XDG_STATE_HOME": state]
        let daemon = try Daemon(environment: environment)
        let socket = ["--socket", daemon.socketPath]
        #expect(try Self.status(daemon).hrtf.path == SOFAFile.defaultPath)

        // Refused, naming the file, with nothing changed: missing, and not a SOFA file.
        let missing = daemon.directory + "/missing.sofa"
        let refused = try CommandLineTests.runCLI(["hrtf", "use", missing] + socket)
        #expect(refused.status == 1)
        #expect(refused.error.contains(missing) && refused.error.split(separator: "\n").count == 1, "\(refused.error)")
        let bad = daemon.directory + "/bad.sofa"
        try "not HDF5".write(toFile: bad, atomically: true, encoding: .utf8)
        let badRun = try CommandLineTests.runCLI(["hrtf", "use", bad] + socket)
        #expect(badRun.status == 1)
        #expect(badRun.error.hasPrefix("scenesound: the server refused: \(bad): ") && badRun.error.hasSuffix("(invalid_argument)\n"),
                "\(badRun.error)")
        #expect(try Self.status(daemon).hrtf.path == SOFAFile.defaultPath)

        // Both sets once with nothing playing (prepared and cached), then back to KEMAR.
        for set in [sphere, SOFAFile.defaultPath] {
            let run = try CommandLineTests.runCLI(["hrtf", "use", set] + socket)
            #expect(run.status == 0, "\(run.error)")
            #expect(run.output == "HRTF set: \(set)\n")
        }

        // A 3 s noise at 60° left; once 0.6 s of it has played, the sphere.
        var generator = WhiteNoise(seed: 53)
        let noise = generator.samples(Int(3 * Self.rateHz), amplitude: 0.3)
        let file = daemon.directory + "/noise.wav"
        let writer = try AudioFileWriter(path: file, sampleRateHz: Int(Self.rateHz), channelCount: 1)
        try writer.write(noise)
        try writer.finish()
        #expect(try CommandLineTests.runCLI(["scene", "place", "side", "--azimuth", "60", "--distance", "1.6"] + socket).status == 0)
        let play = Process()
        play.executableURL = Daemon.binaries.appendingPathComponent("scenesound")
        play.arguments = ["play", file, "--scene", "side"] + socket
        play.standardOutput = FileHandle.nullDevice
        play.standardError = FileHandle.nullDevice
        try play.run()
        var firstSeen: Double?
        try waitUntil(timeoutSeconds: 10, "0.6 s of the noise rendered") {
            let document = try Self.status(daemon)
            guard !document.streams.isEmpty else { return false }
            let now = document.output.renderedSeconds
            if firstSeen == nil { firstSeen = now }
            return now >= firstSeen! + 0.6
        }
        let switched = try CommandLineTests.runCLI(["hrtf", "use", sphere] + socket)
        #expect(switched.status == 0, "\(switched.error)")
        let after = try Self.status(daemon)
        #expect(after.hrtf.path == sphere)
        #expect(after.hrtf.measurementDistanceMetres == SphereHeadSOFA.measurementDistanceMetres)
        #expect(after.streams.count == 1, "the noise plays on")
        play.waitUntilExit()
        #expect(play.terminationStatus == 0)
        #expect(daemon.stop() == 0)

        let out = try AudioFileReader.read(path: daemon.wavPath)
        let left = out.channel(0), right = out.channel(1)
        guard let onset = left.firstIndex(where: { abs($0) > 1e-3 }), onset + noise.count <= left.count else {
            throw TestFailure("no noise in the daemon's output")
        }
        // No gap: every 5 ms window's level within a few dB of the one before, over the sound.
        let window = Int(0.005 * Self.rateHz)
        let levels = stride(from: onset + 2400, to: onset + noise.count - 2400 - window, by: window).map { w in
            var power = 0.0
            for n in w..<(w + window) { power += Double(left[n] * left[n] + right[n] * right[n]) }
            return 10 * log10(power / Double(window) + 1e-20)
        }
        let steps = zip(levels, levels.dropFirst()).map { abs($1 - $0) }
        let largest = steps.max() ?? 0, quietest = levels.min() ?? 0, loudest = levels.max() ?? 0
        // The cues before and after, against offline renders of the same noise through each set.
        let early = 2400..<Int(0.45 * Self.rateHz), late = Int(2.4 * Self.rateHz)..<(noise.count - 2400)
        let shift = { (r: Range<Int>) in (r.lowerBound + onset)..<(r.upperBound + onset) }
        let before = CueAnalysis.cues(left: Array(left[shift(early)]), right: Array(right[shift(early)]), sampleRateHz: Self.rateHz)
        let afterCues = CueAnalysis.cues(left: Array(left[shift(late)]), right: Array(right[shift(late)]), sampleRateHz: Self.rateHz)
        let kemar = try Self.offlineCues(file, set: SOFAFile.defaultPath, directory: daemon.directory, range: early)
        let sphereCues = try Self.offlineCues(file, set: sphere, directory: daemon.directory, range: late)
        print(String(format: "scenesoundd hrtf use mid-noise: largest 5 ms level step %.2f dB (levels %.1f … %.1f dB); ITD/ILD before %.0f µs %.2f dB (KEMAR offline %.0f µs %.2f dB), after %.0f µs %.2f dB (sphere offline %.0f µs %.2f dB)",
                     largest, quietest, loudest, before.itdMicroseconds, before.interauralLevelDifferenceDecibels,
                     kemar.itdMicroseconds, kemar.interauralLevelDifferenceDecibels,
                     afterCues.itdMicroseconds, afterCues.interauralLevelDifferenceDecibels,
                     sphereCues.itdMicroseconds, sphereCues.interauralLevelDifferenceDecibels))
        #expect(largest <= 3)
        #expect(abs(before.itdMicroseconds - kemar.itdMicroseconds) <= 10)
        #expect(abs(before.interauralLevelDifferenceDecibels - kemar.interauralLevelDifferenceDecibels) <= 0.5)
        #expect(abs(afterCues.itdMicroseconds - sphereCues.itdMicroseconds) <= 10)
        #expect(abs(afterCues.interauralLevelDifferenceDecibels - sphereCues.interauralLevelDifferenceDecibels) <= 0.5)
        #expect(abs(kemar.itdMicroseconds - sphereCues.itdMicroseconds) >= 40, "the two heads must be told apart")

        // The choice lasts: a restarted daemon starts on the sphere; --hrtf wins over it.
        #expect(try String(contentsOfFile: state + "/scenesound/hrtf", encoding: .utf8) == sphere + "\n")
        let restarted = try Daemon(output: "null", environment: environment)
        #expect(try Self.status(restarted).hrtf.path == sphere)
        restarted.stop()
        let explicit = try Daemon(output: "null", extraArguments: ["--hrtf", SOFAFile.defaultPath], environment: environment)
        #expect(try Self.status(explicit).hrtf.path == SOFAFile.defaultPath)
        explicit.stop()
        print(String(format: "HRTFSwitchDaemonTests: %.1f s", Date().timeIntervalSince(started)))
    }

    /// `hrtf compare A B`: each direction through A, then B, said on stdout; the bursts carry
    /// each set's cues in turn, and the server's own set stays.
    @Test func hrtfComparePlaysEachDirectionThroughBothSetsInTurn() throws {
        let started = Date()
        let sphere = try SphereHeadSOFA.path()
        let daemon = try Daemon()
        let socket = ["--socket", daemon.socketPath]
        let run = try CommandLineTests.runCLI(["hrtf", "compare", sphere, SOFAFile.defaultPath, "--directions", "60,-90",
                                               "--seconds", "0.3", "--distance", "1.6"] + socket)
        #expect(run.status == 0, "\(run.error)")
        #expect(run.output == "A  +60°\nB  +60°\nA  −90°\nB  −90°\n", "\(run.output)")
        #expect(try Self.status(daemon).hrtf.path == SOFAFile.defaultPath)
        #expect(daemon.stop() == 0)
        let cues = try Self.burstCues(daemon.wavPath)
        #expect(cues.count == 4)
        guard cues.count == 4 else { return }
        print("hrtf compare, ITD/ILD per burst: " + cues.map { String(format: "%.0f µs %.1f dB", $0.itdMicroseconds,
                                                                       $0.interauralLevelDifferenceDecibels) }.joined(separator: ", "))
        // A is the sphere (the wider ITD at 60° left), B KEMAR; then both on the right.
        #expect(cues[0].itdMicroseconds > cues[1].itdMicroseconds + 40)
        #expect(cues[1].itdMicroseconds > 400 && cues[1].itdMicroseconds < 600)
        #expect(cues[2].itdMicroseconds < -600 && cues[3].itdMicroseconds < -600)
        #expect(abs(cues[2].itdMicroseconds - cues[3].itdMicroseconds) > 20
                || abs(cues[2].interauralLevelDifferenceDecibels - cues[3].interauralLevelDifferenceDecibels) > 1)

        // The sets are prepared as the daemon's own: a wider head (--head-width-cm) widens the ITD.
        let wide = try Daemon()
        let wideRun = try CommandLineTests.runCLI(["hrtf", "compare", SOFAFile.defaultPath, SOFAFile.defaultPath, "--directions", "-90",
                                                   "--seconds", "0.3", "--distance", "1.6", "--head-width-cm", "20",
                                                   "--socket", wide.socketPath])
        #expect(wideRun.status == 0, "\(wideRun.error)")
        #expect(wide.stop() == 0)
        let wideCues = try Self.burstCues(wide.wavPath)
        print(String(format: "hrtf compare --head-width-cm 20, KEMAR at -90°: ITD %.0f µs (KEMAR as measured: %.0f µs)",
                     wideCues.first?.itdMicroseconds ?? .nan, cues[3].itdMicroseconds))
        #expect(wideCues.count == 2 && wideCues[0].itdMicroseconds < cues[3].itdMicroseconds * 1.15)
        print(String(format: "HRTFSwitchDaemonTests compare: %.1f s", Date().timeIntervalSince(started)))
    }

    /// The cues of each burst in a recording: runs of 5 ms windows above −60 dBFS, measured past
    /// their fades and tails.
    static func burstCues(_ wavPath: String) throws -> [BinauralCues] {
        let out = try AudioFileReader.read(path: wavPath)
        let left = out.channel(0), right = out.channel(1)
        let window = 240
        var bursts: [Range<Int>] = [], start: Int?
        for w in stride(from: 0, to: left.count - window, by: window) {
            var power: Float = 0
            for n in w..<(w + window) { power += left[n] * left[n] + right[n] * right[n] }
            let loud = power / Float(window) > 1e-6
            if loud, start == nil { start = w }
            if !loud, let s = start { bursts.append(s..<w); start = nil }
        }
        return bursts.map { b in
            let body = (b.lowerBound + 1200)..<(b.upperBound - 2400)
            return CueAnalysis.cues(left: Array(left[body]), right: Array(right[body]), sampleRateHz: rateHz)
        }
    }

    /// `hrtf test` with scripted answers: exact for the sphere (A), front/back mirrored for
    /// KEMAR (B), one bad answer asked again; A scores no confusion, B one per trial, A is
    /// offered and, on 'y', used. Answers that stop early end the test cleanly.
    @Test func hrtfTestScoresScriptedAnswersAndUsesTheBestSet() throws {
        let started = Date()
        let sphere = try SphereHeadSOFA.path()
        let state = NSTemporaryDirectory() + "scenesound-state-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: state) }
        let daemon = try Daemon(output: "null", environment: ["XDG_STATE_HOME": state])
        let socket = ["--socket", daemon.socketPath]
        let arguments = ["hrtf", "test", sphere, SOFAFile.defaultPath, "--seed", "11", "--trials", "3", "--seconds", "0.1"] + socket
        let plan = try CommandLineTests.runCLI(arguments + ["--plan"])
        #expect(plan.status == 0, "\(plan.error)")
        let trials = plan.output.split(separator: "\n").map { line -> (path: String, azimuth: Double) in
            let parts = line.split(separator: " ")
            return (String(parts[0]), Double(parts[1])!)
        }
        #expect(trials.count == 6 && trials.filter { $0.path == sphere }.count == 3, "\(plan.output)")
        var answers = trials.map { trial -> String in
            guard trial.path != sphere else { return "\(Int(trial.azimuth))" }
            var mirrored = 180 - trial.azimuth
            if mirrored > 180 { mirrored -= 360 }
            return "\(Int(mirrored))"
        }
        answers.insert("left", at: 0)  // not an answer: asked again once
        let run = try CommandLineTests.runCLI(arguments, input: Data((answers + ["y"]).joined(separator: "\n").utf8 + [10]))
        #expect(run.status == 0, "\(run.error)")
        print(run.output)
        #expect(run.output.contains("'left' is not an answer: give an azimuth in degrees"))
        let rows = run.output.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true) }
        #expect(rows.contains { $0 == [Substring(sphere), "3", "0", "0.0°"] }, "\(run.output)")
        #expect(rows.contains { $0 == [Substring(SOFAFile.defaultPath), "3", "3", "0.0°"] }, "\(run.output)")
        #expect(run.output.contains("Use \(sphere)? [y/n] \nHRTF set: \(sphere)\n"))
        #expect(try Self.status(daemon).hrtf.path == sphere)

        // Two answers, then the end of the input: a clean stop, nothing switched.
        let early = try CommandLineTests.runCLI(["hrtf", "use", SOFAFile.defaultPath] + socket)
        #expect(early.status == 0)
        let stopped = try CommandLineTests.runCLI(arguments, input: Data("0\n30\n".utf8))
        #expect(stopped.status == 0, "\(stopped.error)")
        #expect(stopped.output.contains("no more answers: stopped after 2 of 6"), "\(stopped.output)")
        #expect(try Self.status(daemon).hrtf.path == SOFAFile.defaultPath)
        print(String(format: "HRTFSwitchDaemonTests test: %.1f s", Date().timeIntervalSince(started)))
    }
}
