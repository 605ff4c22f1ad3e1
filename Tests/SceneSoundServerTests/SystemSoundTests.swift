import SceneSoundTestSupport
import Foundation
import Testing
import SceneSoundDSP
import SceneSoundMedia
import SceneSoundProtocol

/// System and alert sounds through the real daemon with `--output wav:` (issue 5): the real
/// freedesktop theme, ducking, burst coalescing, start latency after idle, unknown names.
@Suite(.serialized) struct SystemSoundTests {
    typealias Support = SampleTestSupport

    /// A sound from the cache is listed in `status` while it plays (`plays`: kind, scene,
    /// level), in the JSON and the summary, and gone once it has played.
    @Test func statusListsAnAlertWhileItPlays() throws {
        let daemon = try Daemon()
        let socket = ["--socket", daemon.socketPath]
        let file = daemon.directory + "/long-alert.wav"
        let writer = try AudioFileWriter(path: file, sampleRateHz: 48000, channelCount: 1)
        try writer.write((0..<(48000 * 3)).map { Float(0.3 * sin(2 * Double.pi * 660 * Double($0) / 48000)) })
        try writer.finish()
        #expect(try CommandLineTests.runCLI(["scene", "place", "chime", "--azimuth", "50"] + socket).status == 0)
        let alert = Process()
        alert.executableURL = Daemon.binaries.appendingPathComponent("scenesound")
        alert.arguments = ["alert", file, "--scene", "chime"] + socket
        try alert.run()
        defer { if alert.isRunning { alert.terminate() }; alert.waitUntilExit() }
        var listed: StatusDocument.Play?
        try waitUntil(timeoutSeconds: 10, "the alert listed in status") {
            let json = try CommandLineTests.runCLI(["status", "--json"] + socket).output
            listed = try StatusSchema.decode(json).plays?.first { $0.scene == "chime" && $0.levelDecibels > -60 }
            return listed != nil
        }
        #expect(listed?.kind == "alert", "\(String(describing: listed))")
        let summary = try CommandLineTests.runCLI(["status"] + socket).output
        #expect(summary.contains("sounds   1") && summary.contains("alert") && summary.contains("scene chime"), "\(summary)")
        alert.waitUntilExit()
        #expect(alert.terminationStatus == 0)
        let after = try StatusSchema.decode(try CommandLineTests.runCLI(["status", "--json"] + socket).output)
        #expect(after.plays?.isEmpty == true, "\(String(describing: after.plays))")
    }

    @Test(arguments: ["bell", "dialog-warning", "message-new-instant", "complete"])
    func themeSoundsPlayOnTheSideOfTheirScene(name: String) throws {
        // The set as measured: the onset ITD of a chime below is read against KEMAR's own
        // responses; equalized, their low end (raised up to 12 dB where KEMAR's loudspeaker had
        // none) fills the 5 ms window and `complete` read 49 µs there (its whole length reads
        // 686 µs, and low-passed noise 720 µs: the low-frequency ITD itself holds).
        let daemon = try Daemon(extraArguments: ["--hrtf-eq", "none"])
        let socket = ["--socket", daemon.socketPath]
        #expect(try CommandLineTests.runCLI(["scene", "place", "left-window", "--azimuth", "60"] + socket).status == 0)
        let played = try CommandLineTests.runCLI(["system", name, "--scene", "left-window"] + socket)
        #expect(played.status == 0, "\(played.error)")
        let recording = try AudioFileReader.read(path: daemon.wavPath)
        let left = recording.channel(0), right = recording.channel(1)
        let range = try #require(Support.nonSilentRange(left), "nothing reached the output")
        // ITD from the onset (its first 5 ms): `complete` is a 2.6 kHz chime, and over its whole
        // length the cross-correlation below 1.5 kHz locks onto that tone's residue and aliases
        // by its 375 µs period; the onset transient is broadband and unambiguous.
        let onset = range.lowerBound..<(range.lowerBound + 240)
        let itdMicroseconds = CueAnalysis.itdSeconds(left: Array(left[onset]), right: Array(right[onset]), sampleRateHz: 48000) * 1e6
        let ild = CueAnalysis.ildDecibels(left: Array(left[range]), right: Array(right[range]))
        print("\(name) at +60°: ITD \(itdMicroseconds) µs, ILD \(ild) dB")
        // KEMAR at +45…+75° (a stereo sound's channels spread ±15°): the right ear lags by
        // 400 to 700 µs and hears less.
        #expect((300...900).contains(itdMicroseconds), "ITD \(itdMicroseconds) µs")
        #expect(ild > 3, "ILD \(ild) dB")
    }

    @Test func anUnknownNameExitsOneNamingTheDirectoriesSearched() throws {
        let result = try CommandLineTests.runCLI(["system", "no-such-sound-at-all", "--socket", "/nonexistent/socket"])
        #expect(result.status == 1)
        let lines = result.error.split(separator: "\n")
        #expect(lines.count == 1, "\(result.error)")
        #expect(result.error.contains("no sound named 'no-such-sound-at-all' in theme 'freedesktop'"))
        #expect(result.error.contains("/usr/share/sounds/freedesktop"))
    }

    @Test func aBurstOfIdenticalPlaysIsCoalesced() throws {
        let daemon = try Daemon()
        let client = try RawClient(socketPath: daemon.socketPath)
        let amplitude: Float = 0.3
        let click = Support.tone(hz: 1000, seconds: 0.2, amplitude: amplitude)
        try Support.upload(client, name: "click", format: AudioFormat(sampleFormat: .f32le, rateHz: 48000, channels: 1),
                           pcm: Support.floatBytes(click))
        // Twenty plays sent back to back: far less than the 100 ms window apart.
        let ids = (1...20).map { UInt32(500 + $0) }
        let start = Date()
        for id in ids {
            try client.send(.samplePlay(SamplePlay(name: "click", kind: .system, spatialMode: .off, sceneID: "")), requestID: id)
        }
        var playIDs: [UInt32] = []
        for id in ids {
            guard case .samplePlaying(let playing) = try client.waitFor({ $1 == id && $0.isReply }) else {
                throw TestFailure("SAMPLE_PLAY \(id) was refused")
            }
            playIDs.append(playing.playID)
        }
        #expect(Date().timeIntervalSince(start) < 0.1)
        var reasons: [UInt32: PlaybackEndReason] = [:]
        while reasons.count < playIDs.count {
            guard case .playbackEnded(let ended) = try client.waitFor({ m, _ in if case .playbackEnded = m { true } else { false } }) else { continue }
            reasons[ended.playID] = ended.reason
        }
        #expect(reasons[playIDs[0]] == .completed)
        #expect(playIDs.dropFirst().allSatisfy { reasons[$0] == .coalesced })
        // The output holds the sound once: twenty at once would be twenty times as loud.
        let recording = try AudioFileReader.read(path: daemon.wavPath)
        let peak = recording.interleaved.map(abs).max() ?? 0
        #expect(abs(peak - amplitude) < 0.01, "peak \(peak)")
    }

    /// The default 12 dB, and `--duck-db -6` typed as people type it.
    @Test(arguments: [([String](), -12.0), (["--duck-db", "-6"], -6.0)])
    func playbackIsDuckedDuringAnAlertAndRestoredAfter(daemonArguments: [String], duckDecibels: Double) throws {
        let daemon = try Daemon(extraArguments: daemonArguments)
        let client = try RawClient(socketPath: daemon.socketPath)
        let toneHz = 500.0, alertHz = 3000.0
        // A looping playback tone: 0.5 s is 250 whole periods, so the loop is seamless.
        let format = AudioFormat(sampleFormat: .f32le, rateHz: 48000, channels: 1)
        let reply = try client.request(.streamOpen(StreamOpen(kind: .playback, format: format, spatialMode: .off, loop: true,
                                                              volumeDecibels: 0, sceneID: "")))
        guard case .streamOpened(let opened) = reply else { throw TestFailure("STREAM_OPEN: \(reply)") }
        client.credits[opened.streamID] = Int(opened.creditBytes)
        try client.write(stream: opened.streamID, pcm: Support.floatBytes(Support.tone(hz: toneHz, seconds: 0.5, amplitude: 0.25)),
                         bytesPerFrame: 4)
        #expect(try client.request(.streamDrain(StreamReference(streamID: opened.streamID))) == .ok)
        try Support.upload(client, name: "alert-tone", format: format,
                           pcm: Support.floatBytes(Support.tone(hz: alertHz, seconds: 0.8, amplitude: 0.25)))
        try waitForRenderedAudio(client, seconds: 0.7)  // the tone alone first, for the level before
        guard case .samplePlaying(let playing) = try client.request(.samplePlay(SamplePlay(name: "alert-tone", kind: .alert, spatialMode: .off, sceneID: ""))) else {
            throw TestFailure("SAMPLE_PLAY refused")
        }
        let ended = try client.waitFor { m, _ in if case .playbackEnded(let e) = m { e.playID == playing.playID } else { false } }
        #expect(ended == .playbackEnded(PlaybackEnded(playID: playing.playID, reason: .completed)))
        try waitForRenderedAudio(client, seconds: 1)  // the 250 ms release and the level after it
        #expect(try client.request(.streamClose(StreamReference(streamID: opened.streamID))) == .ok)
        #expect(daemon.stop() == 0)

        let left = try AudioFileReader.read(path: daemon.wavPath).channel(0)
        // Where the alert is: 10 ms windows (30 whole periods of 3 kHz) with its tone present.
        let window = 480
        let alertWindows = stride(from: 0, to: left.count - window, by: window).filter {
            Support.goertzelAmplitude(left[$0..<($0 + window)], hz: alertHz) > 0.1
        }
        let alertStart = try #require(alertWindows.first), alertEnd = try #require(alertWindows.last) + window
        #expect(abs(Double(alertEnd - alertStart) / 48000 - 0.8) < 0.03, "the alert lasted \(Double(alertEnd - alertStart) / 48000) s")
        // The tone's level in 0.1 s windows (50 whole periods of 500 Hz).
        func level(at frame: Int) -> Double { Support.goertzelAmplitude(left[frame..<(frame + 4800)], hz: toneHz) }
        let before = level(at: alertStart - 9600)
        let during = level(at: alertStart + 14400)   // past the 50 ms attack
        let after = level(at: alertEnd + 24000)      // past the 250 ms release
        let duck = Support.decibels(during / before), restored = Support.decibels(after / before)
        print("ducking: before \(before), during \(during) (\(duck) dB), after \(after) (\(restored) dB)")
        #expect(abs(before - 0.25) < 0.005, "the tone before the alert: \(before)")
        #expect(abs(duck - duckDecibels) <= 1, "ducked by \(duck) dB, not \(duckDecibels) dB")
        #expect(abs(restored) < 0.2, "restored to \(restored) dB")
    }

    @Test func theFirstSoundAfterTenSecondsIdleStartsWithinAQuantumAndIsComplete() throws {
        let daemon = try Daemon()
        let client = try RawClient(socketPath: daemon.socketPath)
        let bell = try AudioFileReader.read(path: "\(Support.themeDirectory)/bell.oga")
        try Support.upload(client, name: "bell", format: AudioFormat(sampleFormat: .f32le, rateHz: UInt32(bell.sampleRateHz), channels: 2),
                           pcm: Support.floatBytes(bell.interleaved))
        sleep(10)
        let gain = Float(0.5)  // −6.02 dB: below the limiter's threshold, so the output is the sample × gain
        let reply = try client.request(.samplePlay(SamplePlay(name: "bell", kind: .system, spatialMode: .off,
                                                              volumeDecibels: Float(20 * log10(Double(gain))), sceneID: "")))
        guard case .samplePlaying(let playing) = reply else { throw TestFailure("SAMPLE_PLAY: \(reply)") }
        _ = try client.waitFor { m, _ in if case .playbackEnded(let e) = m { e.playID == playing.playID } else { false } }
        let queued = try #require(SampleTestSupport.queuedFrame(playID: playing.playID, in: daemon.log), "\(daemon.log)")

        // What the server plays: the bell resampled to 48 kHz.
        let expected = try Resampler.resample(bell.interleaved, channelCount: 2, from: bell.sampleRateHz, to: 48000)
        let expectedLeft = stride(from: 0, to: expected.count, by: 2).map { expected[$0] * gain }
        let output = try AudioFileReader.read(path: daemon.wavPath).channel(0)
        let expectedRange = try #require(Support.nonSilentRange(expectedLeft))
        let outputRange = try #require(Support.nonSilentRange(output), "nothing reached the output")
        let latencyFrames = outputRange.lowerBound - expectedRange.lowerBound - queued
        let block = 256, limiterLookahead = 72
        print("start latency after 10 s idle: \(latencyFrames) frames = \(Double(latencyFrames) / 48) ms (bound \(block + limiterLookahead) frames)")
        #expect(latencyFrames >= 0 && latencyFrames <= block + limiterLookahead)
        // Complete: the same span and the same samples, to the resampler's rounding.
        #expect(abs(outputRange.count - expectedRange.count) <= 2, "output span \(outputRange.count), sample span \(expectedRange.count)")
        let offset = outputRange.lowerBound - expectedRange.lowerBound
        var error = 0.0, energy = 0.0
        for n in expectedRange where n + offset < output.count {
            let d = Double(output[n + offset] - expectedLeft[n])
            error += d * d
            energy += Double(expectedLeft[n]) * Double(expectedLeft[n])
        }
        #expect(10 * log10(error / energy) < -60, "residual \(10 * log10(error / energy)) dB")
    }
}
