import Foundation
import SceneSoundCapture
import SceneSoundTestSupport
import Testing

/// On PipeWire with its own output (the default there), `scenesoundd --capture-apps` links each
/// captured app's output ports into its graph node's input ports, as `pw-link -l` shows a user:
/// no record stream of pipewire-pulse and no `pw_stream` of ours records the app; the capture
/// sink only parks it. With another output (`--output pulse`, `wav:`, `null`) the same, into a
/// node of the capture's own (`scenesound-capture`). Unmodified `paplay`.
@Suite(.serialized) struct GraphCaptureTests {
    final class Daemon {
        let server: PrivateSoundServer
        let process: ChildProcess
        let log: URL

        /// `spatialModes`: the capture's per-app choices file (`MODE NAME` lines), written first.
        /// `beforeStart`: run on the server before the daemon starts (an app already playing).
        init(spatialModes: String? = nil, output: String = "pipewire", extraArguments: [String] = [],
             environment: [String: String] = [:], beforeStart: (PrivateSoundServer) throws -> Void = { _ in }) throws {
            server = try PrivateSoundServer(.pipeWire)
            try beforeStart(server)
            log = temporaryFile("daemon.log")
            let configHome = server.directory.appendingPathComponent("config-home")
            if let spatialModes {
                try FileManager.default.createDirectory(at: configHome.appendingPathComponent("scenesound"), withIntermediateDirectories: true)
                try spatialModes.write(to: configHome.appendingPathComponent("scenesound/capture-spatial"), atomically: true, encoding: .utf8)
            }
            process = try ChildProcess(
                BuiltProducts.directory.appendingPathComponent("scenesoundd").path,
                ["--socket", server.directory.appendingPathComponent("ss.sock").path, "--output", output,
                 "--display", "none", "--opentrack", "off", "--room", "none", "--capture-apps", "--log-level", "debug"] + extraArguments,
                display: nil, errorPath: log.path,
                environment: server.clientEnvironment.merging([
                    "XDG_CACHE_HOME": NSTemporaryDirectory() + "scenesound-test-cache", "XDG_CONFIG_HOME": configHome.path,
                ].merging(environment) { $1 }) { $1 })
            guard waitUntil(timeoutSeconds: 20, { logText.contains("taking other apps' streams") }) else {
                throw ToolFailure(command: "scenesoundd", status: 0, output: logText)
            }
        }

        var logText: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

        deinit {
            kill(process.pid, SIGTERM)
            _ = waitUntil(timeoutSeconds: 5) { !process.isRunning }
            process.kill()
            server.tearDown()
            try? FileManager.default.removeItem(at: log)
        }

        /// Waits until paplay's ports are linked into `node`'s input sets; the graph and the
        /// daemon's log in the message when they are not within 10 s.
        func requireAppLinked(into node: String) throws {
            let linked = waitUntil(timeoutSeconds: 10) {
                (try? server.pipeWireLinks().contains { $0.output.hasPrefix("paplay:") && $0.input.hasPrefix("\(node):in_") }) == true
            }
            try #require(linked, "paplay not linked into \(node):\n\(server.pipeWireGraphText())\n\(logText.suffix(3000))")
        }

        /// A stereo noise file that `paplay` plays for 30 s.
        func playNoise() throws -> ChildProcess { try Self.playNoise(on: server) }

        static func playNoise(on server: PrivateSoundServer) throws -> ChildProcess {
            let file = temporaryFile("noise.wav")
            try TestSignal.writeWAV(TestSignal.stereoNoise(seconds: 30, seed: 3), channels: 2, to: file)
            return try server.startClient("/usr/bin/paplay", [file.path])
        }
    }

    /// `output`: the daemon's; with `pulse` it plays through pipewire-pulse and the apps are
    /// linked into the capture's own node.
    @Test(arguments: ["pipewire", "pulse"])
    func aCapturedAppsPortsAreLinkedToSceneSoundsNodeAndNothingRecordsIt(output: String) throws {
        let daemon = try Daemon(output: output)
        let node = output == "pipewire" ? "scenesound" : "scenesound-capture"
        let app = try daemon.playNoise()
        defer { app.kill() }
        try #require(waitUntil(timeoutSeconds: 10) { daemon.logText.contains("capturing ") }, "not captured: \(daemon.logText)")
        // Ours: paplay's FL and FR into one of our node's input sets, channel by channel.
        let ourInputs = { try daemon.server.pipeWireLinks().filter { $0.output.hasPrefix("paplay:") && $0.input.hasPrefix("\(node):in_") } }
        #expect(try waitUntil(timeoutSeconds: 5) { try ourInputs().count == 2 })
        let links = try daemon.server.pipeWireLinks()
        let listing = try daemon.server.pwLink(["-l"])
        print("pw-link -l, paplay captured on PipeWire, --output \(output):\n" + listing.split(separator: "\n").filter {
            $0.contains("paplay") || $0.contains("\(node):in_") }.joined(separator: "\n"))
        for channel in ["FL", "FR"] {
            #expect(links.contains { $0.output == "paplay:output_\(channel)" && $0.input.hasPrefix("\(node):in_") && $0.input.hasSuffix("_\(channel)") },
                    "paplay:output_\(channel) is not linked to our node's \(channel): \(links)")
        }
        // Nothing else takes its audio: only the (silent, parking) capture sink and our node.
        let elsewhere = links.filter { $0.output.hasPrefix("paplay:") && !$0.input.hasPrefix("\(node):") && !$0.input.hasPrefix(CaptureSinkProperties.sinkName + ":") }
        #expect(elsewhere.isEmpty, "paplay also linked to \(elsewhere)")
        // No pipewire-pulse record stream, no pw_stream recording of ours.
        let recordings = try daemon.server.list("source-outputs")
        #expect(recordings.isEmpty, "record streams: \(recordings.map { ($0["properties"] as? [String: Any])?["media.name"] ?? "?" })")
        #expect(!listing.contains("SceneSound capture of"), "a recording of ours is in the graph")
        // And it is heard: the real sink plays it through our node (and our output).
        let recording = try MonitorRecording(server: daemon.server, file: temporaryFile("sink.raw"))
        let heard = recording.finish(afterFrames: 48_000, timeoutSeconds: 10)
        let level = (heard.reduce(0) { $0 + $1 * $1 } / Float(max(1, heard.count))).squareRoot()
        print(String(format: "the real sink through our node: RMS %.3f over %d samples", level, heard.count))
        #expect(level > 0.01)
    }

    /// An app already playing as the daemon starts (the session's music): the capture waits
    /// for the node to connect, so the app is linked into it rather than left on the real sink
    /// for want of a set.
    @Test func anAppPlayingBeforeTheDaemonStartsIsLinkedIntoItsNode() throws {
        var app: ChildProcess?
        let daemon = try Daemon { server in
            app = try Daemon.playNoise(on: server)
            try #require(waitUntil(timeoutSeconds: 5) { ((try? server.sinkInputs()) ?? []).count == 1 })
        }
        defer { app?.kill() }
        try daemon.requireAppLinked(into: "scenesound")
        #expect(!daemon.logText.contains("every input set"), "\(daemon.logText.suffix(2000))")
    }

    @Test func anAppAlsoLinkedToTheRealSinkIsUnlinkedFromIt() throws {
        let daemon = try Daemon()
        let app = try daemon.playNoise()
        defer { app.kill() }
        try daemon.requireAppLinked(into: "scenesound")
        let real = PrivateSoundServer.sinkName
        for channel in ["FL", "FR"] { try daemon.server.pwLink(["paplay:output_\(channel)", "\(real):playback_\(channel)"]) }
        let dry = { try daemon.server.pipeWireLinks().filter { $0.output.hasPrefix("paplay:") && $0.input.hasPrefix("\(real):") } }
        #expect(try !dry().isEmpty, "the links by hand were not made")
        let made = Date()
        let undone = try waitUntil(timeoutSeconds: 4) { try dry().isEmpty }
        print(String(format: "graph path: an app linked by hand to the real sink besides ours: unlinked %@ %.1f s later",
                     undone ? "" : "NOT", Date().timeIntervalSince(made)))
        #expect(undone, "still linked: \((try? dry()) ?? [])")
        #expect(daemon.logText.contains("also linked to another sink"))
        #expect(try daemon.server.pipeWireLinks().contains { $0.output == "paplay:output_FL" && $0.input.hasPrefix("scenesound:in_") })
    }

    /// A 100 ms event sound, played by `paplay` as plain stereo (`off`: the daemon's mix is the
    /// app's samples at unity gain), reaches the real sink whole, from its first sample to its
    /// last: linked into the node, nothing of the app's first cycle is lost (the capture sink
    /// is passive, so the app starts with our link), and nothing is recovered from a mix.
    /// `afterRest`: each play comes once the output has rested (its links to the sink undone,
    /// so the sink may suspend): the app's link into the node then runs the node alone, and the
    /// output must be linked again before the sound is lost into unlinked ports.
    @Test(arguments: [false, true])
    func aShortSoundReachesTheSinkWholeFromItsFirstSample(afterRest: Bool) throws {
        // After rest: the output rests after 1 s of silence (3 s by default), each play 2 s sooner.
        let daemon = try Daemon(spatialModes: "off paplay\n", extraArguments: afterRest ? ["--rest-after-seconds", "1"] : [])
        func outputRests() -> Int { daemon.logText.components(separatedBy: "nothing sounding: the output and the tick rest").count - 1 }
        let frames = 4_800
        var sound = TestSignal.stereoNoise(seconds: 0.1, seed: 11)
        // Its first 10 ms louder, as an event sound's attack: lost, it would show.
        for index in 0 ..< 960 { sound[index] = sound[index] &* 3 / 2 }
        let file = temporaryFile("click.wav")
        try TestSignal.writeWAV(sound, channels: 2, to: file)
        var wholePlays = 0, startedWhole = 0, fromFirstSample = 0, restsSeen = 0
        var notFromFirstWhileDisturbed: [String] = []
        for play in 1 ... 3 {
            if afterRest {
                try #require(waitUntil(timeoutSeconds: 15) { outputRests() > restsSeen }, "the output did not rest")
                restsSeen = outputRests()
            }
            let recording = try MonitorRecording(server: daemon.server, file: temporaryFile("sink.raw"))
            Thread.sleep(forTimeInterval: 0.3)
            let watch = MachineStallWatch(thresholdSeconds: 0.002)
            let app = try daemon.server.startClient("/usr/bin/paplay", ["--latency-msec=10", file.path])
            _ = waitUntil(timeoutSeconds: 5) { !app.isRunning }
            watch.stop()
            Thread.sleep(forTimeInterval: 0.3)
            let heard = recording.finish(afterFrames: 48_000, timeoutSeconds: 10)
            let first = heard.firstIndex { abs($0) > 1e-4 }.map { $0 / 2 }
            let last = heard.lastIndex { abs($0) > 1e-4 }.map { $0 / 2 }
            guard let first, let last else {
                Issue.record("play \(play): nothing reached the sink; \(daemon.logText.suffix(1500))")
                continue
            }
            let span = Array(heard[(2 * first) ..< (2 * last + 2)])
            let match = TestSignal.match(captured: span, source: sound)
            let offset = match.map { $0.sourceFrame - $0.capturedFrame }
            print(String(format: "%@play %d through the node: %d frames sounding of %d, the file from its frame %@, residual %@ dB, %@",
                         afterRest ? "after rest, " : "", play, last - first + 1, frames, offset.map(String.init) ?? "?",
                         match.map { String(format: "%.1f", $0.residualDecibels) } ?? "?", match?.mismatch ?? "not the file"))
            if offset == 0 { fromFirstSample += 1 } else if let why = watch.disturbance() { notFromFirstWhileDisturbed.append("play \(play): \(why)") }
            if offset == 0, last - first + 1 >= frames - 2 {
                startedWhole += 1
                if let match, match.residualDecibels < -60 { wholePlays += 1 }
            } else {
                // What the daemon saw of it: the frames its feed received, the wake.
                print("play \(play), the daemon's log since it began:\n" + daemon.logText.split(separator: "\n").suffix(25).joined(separator: "\n"))
            }
        }
        // From its first sample, every play. After a rest the first play wakes the output: its
        // first cycle, rendered while the app's parking sink still drove the node and the link
        // to the real sink was not yet active, was lost (185 frames, 1 after-rest play in 10–25)
        // until only live outputs were rendered into (`PipeWireOutput.start`). Seen again on
        // 1 Dec 2026 in a fresh-clone run, 185 frames once more, the host stealing several per
        // cent of the CPUs: such a play, the machine disturbed while it played
        // (`MachineStallWatch.disturbance`), is a known issue (issue 28, item 4, open), said;
        // one on an undisturbed machine fails.
        let fromFirst = { #expect(fromFirstSample == 3, "from its first sample in \(fromFirstSample) plays of 3") }
        if !notFromFirstWhileDisturbed.isEmpty, fromFirstSample + notFromFirstWhileDisturbed.count == 3 {
            print("not from the first sample while the machine disturbed the play: \(notFromFirstWhileDisturbed)")
            withKnownIssue("a short sound after rest loses its first cycle while the machine is disturbed", isIntermittent: true) { fromFirst() }
        } else {
            fromFirst()
        }
        // To its last sample: not met every run yet (issue 28, item 4, open), reported as a known
        // issue with every play printed above. One play in 30–45 is 7 frames short at its end
        // (its last graph cycle: 185 + 18 × 256 + 7 frames), exact up to there.
        withKnownIssue("a short sound through the node is now and then not whole to its end", isIntermittent: true) {
            #expect(startedWhole == 3, "from its first sample to its last in \(startedWhole) plays of 3")
            if !afterRest { #expect(wholePlays == 3, "the file sample for sample in \(wholePlays) plays of 3") }
        }
    }

    /// The daemon killed (SIGKILL: our node and its links go with its connection) or hung
    /// (SIGSTOP: the guard, hearing no beat, disconnects it from PipeWire — its node, never
    /// finishing a cycle, would hold the real sink silent): the guard puts the parked app back
    /// on the real sink, where it is heard, within 3 s — the output's node, or with another
    /// output the capture's own.
    @Test(arguments: ["pipewire", "pulse"], [SIGKILL, SIGSTOP])
    func anAppIsBackOnTheRealSinkWithinThreeSecondsOfTheDaemonsEnd(output: String, signal: Int32) throws {
        let daemon = try Daemon(output: output)
        defer { kill(daemon.process.pid, SIGCONT) }
        let node = output == "pipewire" ? "scenesound" : "scenesound-capture"
        let app = try daemon.playNoise()
        defer { app.kill() }
        try daemon.requireAppLinked(into: node)
        let outIndex = try #require(try daemon.server.sinkIndex(named: PrivateSoundServer.sinkName))
        let killedAt = Date()
        kill(daemon.process.pid, signal)
        let restored = try waitUntil(timeoutSeconds: 5) {
            try daemon.server.sinkOf(application: "paplay") == outIndex && daemon.server.sinks(carrying: CaptureSinkProperties.sessionKey).isEmpty
        }
        let seconds = Date().timeIntervalSince(killedAt)
        print(String(format: "graph path, --output %@, daemon %@: paplay back on the real sink after %.2f s",
                     output, signal == SIGKILL ? "SIGKILLed" : "hung (SIGSTOP)", seconds))
        #expect(restored && seconds <= 3.0, "restored \(restored) after \(seconds) s")
        #expect(try !daemon.server.pipeWireLinks().contains { $0.input.hasPrefix("scenesound:") })
        let recording = try MonitorRecording(server: daemon.server, file: temporaryFile("out.raw"))
        let heard = recording.finish(afterFrames: 9_600, timeoutSeconds: 5)
        #expect(TestSignal.rmsDecibels(heard[(heard.count / 2)...]) > -30,
                "\((try? daemon.server.pactl(["list", "sink-inputs"])) ?? "")\n\(daemon.server.pipeWireGraphText())")
    }

    /// With every input set taken, the next app is not taken at all (no recording on PipeWire):
    /// it plays on the real sink, dry, with the reason in the log, while the first is captured;
    /// both are heard.
    @Test func anAppBeyondTheNodesSetsPlaysOnTheRealSink() throws {
        let daemon = try Daemon(spatialModes: "off first\noff second\n", environment: ["SCENESOUND_CAPTURE_GRAPH_SETS": "1"])
        let rate = 48_000
        var apps: [ChildProcess] = []
        defer { apps.forEach { $0.kill() } }
        for (name, hertz) in [("first", 500), ("second", 1300)] {
            let file = temporaryFile("\(name).wav")
            try TestSignal.writeWAV((0 ..< 20 * rate).map { Int16(3200 * sin(2 * Double.pi * Double(hertz) * Double($0) / Double(rate))) },
                                    channels: 1, to: file)
            apps.append(try daemon.server.startClient("/usr/bin/paplay", ["--client-name=\(name)", file.path]))
            if name == "first" {
                try #require(waitUntil(timeoutSeconds: 10) { daemon.logText.contains("capturing first") }, "\(daemon.logText.suffix(2000))")
            }
        }
        let outIndex = try #require(try daemon.server.sinkIndex(named: PrivateSoundServer.sinkName))
        #expect(waitUntil(timeoutSeconds: 5) { daemon.logText.contains("every input set of SceneSound's PipeWire node is taken") },
                "\(daemon.logText.suffix(2000))")
        #expect(try waitUntil(timeoutSeconds: 5) { try daemon.server.sinkOf(application: "second") == outIndex })
        #expect(!daemon.logText.split(separator: "\n").contains { $0.contains("capturing second") && !$0.contains("not capturing second") })
        #expect(waitUntil(timeoutSeconds: 5) { ((try? daemon.server.pipeWireLinks()) ?? []).contains { $0.output.hasPrefix("first:") && $0.input.hasPrefix("scenesound:in_0_") } })
        #expect(try daemon.server.list("source-outputs").isEmpty, "a record stream on PipeWire")
        // Both heard on the real sink: a recording taken again after a gap (ci61: both tones
        // low, 0.031 and 0.063 of 0.098, the machine's doing or the recorder joining the graph;
        // `checkRecording`).
        try MachineStallWatch.checkRecording("one set, two apps") {
            let recording = try MonitorRecording(server: daemon.server, file: temporaryFile("both.raw"))
            let heard = recording.finish(afterFrames: rate, timeoutSeconds: 10)
            let left = stride(from: 0, to: heard.count, by: 2).map { Double(heard[$0]) }
            func amplitude(_ hertz: Int) -> Double {
                var re = 0.0, im = 0.0
                for (n, sample) in left.prefix(rate / 2).enumerated() {
                    let phase = 2 * Double.pi * Double(hertz) * Double(n) / Double(rate)
                    re += sample * cos(phase)
                    im += sample * sin(phase)
                }
                return 2 * (re * re + im * im).squareRoot() / Double(min(left.count, rate / 2))
            }
            let first = amplitude(500), second = amplitude(1300)
            print(String(format: "one set: the app linked into it at %.3f, the one left on the real sink at %.3f (each played at 0.098)", first, second))
            return [(first > 0.05 && second > 0.05, String(format: "the app linked into the node at %.3f, the one on the real sink at %.3f", first, second))]
        }
    }

    /// The volume keys (the default sink, ours, mirrored onto the real sink) and the app's own
    /// slider each act once on what is heard through the node: 50 % is -18 dB, not -36.
    @Test func theVolumeKeysAndTheAppsSliderEachActOnce() throws {
        let daemon = try Daemon(spatialModes: "off paplay\n")
        let app = try daemon.playNoise()
        defer { app.kill() }
        try daemon.requireAppLinked(into: "scenesound")
        let level = { (what: String) throws -> Double in
            let recording = try MonitorRecording(server: daemon.server, file: temporaryFile("\(what).raw"))
            let heard = recording.finish(afterFrames: 24_000, timeoutSeconds: 10)
            return TestSignal.rmsDecibels(heard[(heard.count / 2)...])
        }
        Thread.sleep(forTimeInterval: 0.5)
        let unity = try level("unity")
        try daemon.server.pactl(["set-sink-volume", "@DEFAULT_SINK@", "50%"])
        Thread.sleep(forTimeInterval: 0.5)
        let keys = try level("keys") - unity
        try daemon.server.pactl(["set-sink-volume", "@DEFAULT_SINK@", "100%"])
        let input = try #require(try daemon.server.sinkInputs().first { $0.application == "paplay" }).index
        try daemon.server.pactl(["set-sink-input-volume", String(input), "50%"])
        Thread.sleep(forTimeInterval: 0.5)
        let slider = try level("slider") - unity
        print(String(format: "through the node: unity %.1f dBFS; volume keys at 50 %% %.2f dB, the app's slider at 50 %% %.2f dB", unity, keys, slider))
        #expect(abs(keys - -18.06) < 1.5 && abs(slider - -18.06) < 1.5, "\(daemon.server.pipeWireGraphText())")
    }
}
