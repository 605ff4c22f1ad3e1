import Foundation
import SceneSoundCapture
import SceneSoundDSP
import SceneSoundProtocol
import SceneSoundSOFA
import SceneSoundTestSupport
import Testing

/// `scenesoundd --capture-apps` with unmodified apps in real windows (Xvfb + openbox), on
/// PulseAudio and PipeWire: what reaches the real sink (the daemon's own output, recorded
/// from its monitor) carries each app's window in its cues.
@Suite(.serialized) struct DaemonCaptureTests {
    /// A sound server, a display with a window on the left and one on the right, and the
    /// daemon capturing apps and playing to the sound server's default sink.
    final class Desk {
        let server: PrivateSoundServer
        let x: XDisplayFixture
        let leftWindow: UInt32, rightWindow: UInt32
        private(set) var daemon: ChildProcess
        let log: URL
        var apps: [ChildProcess] = []
        let socket: String
        /// The daemon's and the CLI's config directory (the exclusion list lives there).
        let configHome: String
        private let extraArguments: [String]

        init(_ kind: PrivateSoundServer.Kind, extraArguments: [String] = []) throws {
            server = try PrivateSoundServer(kind)
            x = try XDisplayFixture(windowManager: true)
            leftWindow = try x.windowID(of: x.openXTerm(geometry: "60x20+80+300"))
            rightWindow = try x.windowID(of: x.openXTerm(geometry: "60x20+1450+300"))
            log = temporaryFile("daemon.log")
            socket = server.directory.appendingPathComponent("scenesound.sock").path
            configHome = server.directory.appendingPathComponent("config-home").path
            self.extraArguments = extraArguments
            daemon = try Self.startDaemon(server: server, display: x.display, socket: socket, configHome: configHome,
                                          log: log, extraArguments: extraArguments)
            guard waitUntil(timeoutSeconds: 20, { logText.contains("app capture: taking other apps' streams") }) else {
                throw ToolFailure(command: "scenesoundd", status: 0, output: logText)
            }
        }

        var environment: [String: String] {
            server.clientEnvironment.merging([
                "XDG_CACHE_HOME": NSTemporaryDirectory() + "scenesound-test-cache", "XDG_CONFIG_HOME": configHome,
            ]) { $1 }
        }

        static func startDaemon(server: PrivateSoundServer, display: String, socket: String, configHome: String, log: URL,
                                extraArguments: [String]) throws -> ChildProcess {
            try ChildProcess(
                BuiltProducts.directory.appendingPathComponent("scenesoundd").path,
                // Each server's default output: PipeWire's own there (pinned to the real sink by
                // target.object and node.dont-reconnect), pulse on PulseAudio.
                ["--socket", socket, "--output", server.kind == .pipeWire ? "pipewire" : "pulse", "--display", display, "--opentrack", "off",
                 "--room", "none", "--capture-apps", "--log-level", "debug"] + extraArguments,
                display: display, outputPath: log.path + ".out", errorPath: log.path,
                environment: server.clientEnvironment.merging([
                    "XDG_CACHE_HOME": NSTemporaryDirectory() + "scenesound-test-cache", "XDG_CONFIG_HOME": configHome,
                ]) { $1 })
        }

        /// Stops the daemon cleanly and starts it again (its log starts over).
        func restartDaemon() throws {
            kill(daemon.pid, SIGTERM)
            _ = waitUntil(timeoutSeconds: 5) { !daemon.isRunning }
            daemon.kill()
            daemon = try Self.startDaemon(server: server, display: x.display, socket: socket, configHome: configHome,
                                          log: log, extraArguments: extraArguments)
            guard waitUntil(timeoutSeconds: 20, { logText.contains("app capture: taking other apps' streams") }) else {
                throw ToolFailure(command: "scenesoundd", status: 0, output: logText)
            }
        }

        /// Runs the scenesound CLI against this daemon; (status, stdout).
        func cli(_ arguments: [String]) -> (Int32, String) {
            let (status, output, errors) = runToolStatus(BuiltProducts.directory.appendingPathComponent("scenesound").path,
                                                         arguments, display: nil, environment: environment)
            return (status, output + errors)
        }

        var logText: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

        /// The sound server's default sink, sinks and streams, for failure messages.
        var serverStateText: String {
            ["info", "list short sinks", "list short sink-inputs"].map { command in
                (try? server.pactl(command.split(separator: " ").map(String.init))) ?? "pactl \(command) failed"
            }.joined(separator: "\n")
        }

        /// For a failure's message: the daemon's apps and levels, the sinks and, on PipeWire, the graph.
        var soundPathText: String {
            let status = cli(["status", "--json", "--socket", socket]).1
            let graph = server.kind == .pipeWire ? server.pipeWireGraphText() : "-"
            return "status: \(status)\n\(serverStateText)\ngraph:\n\(graph)"
        }

        func start(_ executable: String, _ arguments: [String]) throws {
            apps.append(try server.startClient(executable, arguments, display: x.display))
        }

        /// Waits until the daemon has taken `count` streams in all.
        func waitForCaptures(_ count: Int) -> Bool {
            waitUntil(timeoutSeconds: 15) { logText.components(separatedBy: "capturing ").count - 1 >= count }
        }

        /// Cues of `seconds` of what reaches the real sink.
        func cuesOnTheSink(seconds: Double = 1.0) throws -> BinauralCues {
            let recording = try MonitorRecording(server: server, file: temporaryFile("sink.raw"))
            let frames = Int(seconds * 48_000)
            let heard = Array(recording.finish(afterFrames: frames + 4_800, timeoutSeconds: 10).suffix(frames * 2))
            let left = stride(from: 0, to: heard.count, by: 2).map { heard[$0] }
            let right = stride(from: 1, to: heard.count, by: 2).map { heard[$0] }
            return CueAnalysis.cues(left: left, right: right, sampleRateHz: 48_000)
        }

        deinit {
            apps.forEach { $0.kill() }
            kill(daemon.pid, SIGTERM)
            _ = waitUntil(timeoutSeconds: 5) { !daemon.isRunning }
            daemon.kill()
            // Whatever the daemon asked of it, the sound server lives through it, its stop included.
            #expect(server.everyProcessRuns, "a process of the sound server died: \(server.serversAndLog())")
            x.stopAll()
            server.tearDown()
            try? FileManager.default.removeItem(at: log)
            try? FileManager.default.removeItem(atPath: log.path + ".out")
        }
    }

    static func noiseFile() throws -> URL {
        let file = temporaryFile("noise.wav")
        // Mono noise: a stereo file would carry a difference between its channels of its own.
        let stereo = TestSignal.stereoNoise(seconds: 30, seed: 5)
        let mono = stride(from: 0, to: stereo.count, by: 2).map { stereo[$0] }
        try TestSignal.writeWAV(mono, channels: 1, to: file)
        return file
    }

    @Test(arguments: PrivateSoundServer.Kind.allCases)
    func aStreamNamingItsWindowSoundsFromThatWindow(kind: PrivateSoundServer.Kind) throws {
        let desk = try Desk(kind)
        let file = try Self.noiseFile()
        defer { try? FileManager.default.removeItem(at: file) }
        try desk.start("/usr/bin/paplay", ["--property=window.x11.xid=\(desk.leftWindow)", file.path])
        #expect(desk.waitForCaptures(1), "\(desk.logText)")
        let left = try desk.cuesOnTheSink()
        desk.apps.forEach { $0.kill() }
        // Its queued end is played out first; the right one is measured on its own.
        #expect(waitUntil(timeoutSeconds: 5) { desk.logText.contains("ended:") })
        try desk.start("/usr/bin/paplay", ["--property=window.x11.xid=\(desk.rightWindow)", file.path])
        #expect(desk.waitForCaptures(2), "\(desk.logText)")
        let right = try desk.cuesOnTheSink()
        #expect(left.itdMicroseconds > 100 && left.interauralLevelDifferenceDecibels > 2, "left window: \(left); \(desk.logText.suffix(1500))")
        #expect(right.itdMicroseconds < -100 && right.interauralLevelDifferenceDecibels < -2, "right window: \(right)")
    }

    /// `scenesound apps spatial NAME off` while the app plays: its stream switches from its
    /// window's cues to plain stereo (a mono file: the same in both ears), `status` says so, and
    /// back to anchored it is at its window again; the choice holds for the app's next stream.
    @Test(arguments: PrivateSoundServer.Kind.allCases)
    func anAppsSpatialModeChosenByNameSwitchesItsStreamAsItPlays(kind: PrivateSoundServer.Kind) throws {
        let desk = try Desk(kind)
        let file = try Self.noiseFile()
        defer { try? FileManager.default.removeItem(at: file) }
        try desk.start("/usr/bin/paplay", ["--client-name=spatialtest", "--property=window.x11.xid=\(desk.leftWindow)", file.path])
        #expect(desk.waitForCaptures(1), "\(desk.logText)")
        func spatial() -> String? {
            let (status, text) = desk.cli(["status", "--json", "--socket", desk.socket])
            guard status == 0, let apps = (try? StatusSchema.decode(text))?.apps else { return nil }
            return apps.streams.first { $0.application == "spatialtest" }?.spatial
        }
        #expect(spatial() == "anchored")
        let anchored = try desk.cuesOnTheSink()

        let (chose, said) = desk.cli(["apps", "spatial", "spatialtest", "off"])
        #expect(chose == 0 && said.contains("spatialtest plays off"), "\(said)")
        #expect(waitUntil(timeoutSeconds: 3) { spatial() == "off" }, "\(desk.logText.suffix(1500))")
        let plain = try desk.cuesOnTheSink()
        #expect(anchored.itdMicroseconds > 100 && anchored.interauralLevelDifferenceDecibels > 2, "at its window: \(anchored)")
        #expect(abs(plain.itdMicroseconds) < 20 && abs(plain.interauralLevelDifferenceDecibels) < 0.5, "off: \(plain)")

        #expect(desk.cli(["apps", "spatial", "spatialtest", "anchored"]).0 == 0)
        #expect(waitUntil(timeoutSeconds: 3) { spatial() == "anchored" })
        let again = try desk.cuesOnTheSink()
        #expect(again.itdMicroseconds > 100 && again.interauralLevelDifferenceDecibels > 2, "anchored again: \(again)")
        let (bad, refused) = desk.cli(["apps", "spatial", "spatialtest", "binaural"])
        #expect(bad == 2 && refused.contains("accepted: anchored, head-locked, off"), "\(refused)")
    }

    /// KEMAR's own cues for horizontal directions: 0.2 s of noise through its measured responses.
    static func datasetCues(azimuthDegrees: [Double]) throws -> [BinauralCues] {
        let measurements = try SOFAFile.load(path: SOFAFile.defaultPath).resampled(to: 48_000)
        var generator = WhiteNoise(seed: 7)
        let noise = generator.samples(9_600, amplitude: 0.3)
        return try azimuthDegrees.map { azimuthDegrees in
            let azimuth = (azimuthDegrees + 360).truncatingRemainder(dividingBy: 360)
            let measured = try #require(measurements.first {
                abs($0.azimuthDegrees - azimuth) < 0.01 && abs($0.elevationDegrees) < 0.01 })
            func convolve(_ response: [Float]) -> [Float] {
                var out = [Float](repeating: 0, count: noise.count)
                for n in noise.indices {
                    var sum: Float = 0
                    for k in 0 ..< min(response.count, n + 1) { sum += response[k] * noise[n - k] }
                    out[n] = sum
                }
                return out
            }
            return CueAnalysis.cues(left: convolve(measured.left), right: convolve(measured.right), sampleRateHz: 48_000)
        }
    }

    /// A game's 5.1 kept as virtual speakers: `paplay --channel-map=…` of a 5.1 file with noise
    /// in rear-left only, captured, sounds from the rear left speaker (BS.775: 110°) of its
    /// stage, which faces it (it has no window: straight ahead); folded down to stereo, as the
    /// stereo capture sink did before, it came from the front left. A stereo app beside it
    /// (playing silence) is still taken in stereo.
    @Test(arguments: PrivateSoundServer.Kind.allCases)
    func aCaptured51AppsRearLeftChannelSoundsFromTheRearLeft(kind: PrivateSoundServer.Kind) throws {
        // KEMAR as measured (no equalization), as the cues it is compared with.
        let desk = try Desk(kind, extraArguments: ["--hrtf-eq", "none"])
        let surroundFile = temporaryFile("rear-left.wav"), silentFile = temporaryFile("silent.wav")
        let silentMonoFile = temporaryFile("silent-mono.wav")
        defer { [surroundFile, silentFile, silentMonoFile].forEach { try? FileManager.default.removeItem(at: $0) } }
        let noise = TestSignal.stereoNoise(seconds: 30, seed: 5)
        var six = [Int16](repeating: 0, count: 3 * noise.count)
        for frame in 0 ..< noise.count / 2 { six[6 * frame + 4] = noise[2 * frame] }
        try TestSignal.writeWAV(six, channels: 6, to: surroundFile)
        try TestSignal.writeWAV([Int16](repeating: 0, count: 2 * 48_000 * 30), to: silentFile)
        try desk.start("/usr/bin/paplay", ["--channel-map=front-left,front-right,front-center,lfe,rear-left,rear-right",
                                           surroundFile.path])
        try desk.start("/usr/bin/paplay", [silentFile.path])
        // A mono app beside them is one source (at the centre of its scene), not a pair.
        try TestSignal.writeWAV([Int16](repeating: 0, count: 48_000 * 30), channels: 1, to: silentMonoFile)
        try desk.start("/usr/bin/paplay", [silentMonoFile.path])
        #expect(desk.waitForCaptures(3), "\(desk.logText)")
        let log = desk.logText
        #expect(log.contains("6 channels FL FR FC LFE BL BR") && log.contains("2 channels FL FR") && log.contains("1 channels FC"),
                "\(log.suffix(1500))")

        let heard = try waitForCues(desk) { $0.itdMicroseconds > 500 }
        let kemar = try Self.datasetCues(azimuthDegrees: [110, 30])
        let rear = kemar[0], front = kemar[1]
        print("\(kind) captured 5.1 rear-left: ITD \(heard.itdMicroseconds) µs, ILD \(heard.interauralLevelDifferenceDecibels) dB "
              + "(KEMAR at 110°: \(rear.itdMicroseconds) µs, \(rear.interauralLevelDifferenceDecibels) dB; "
              + "at 30°, a front-left fold-down: \(front.itdMicroseconds) µs, \(front.interauralLevelDifferenceDecibels) dB)")
        #expect(heard.itdMicroseconds > 500, "\(heard); \(desk.logText.suffix(1500))")
        #expect(abs(heard.itdMicroseconds - rear.itdMicroseconds) <= 30)
        // (Its stage is at the screen's distance, inside KEMAR's 1.4 m: the near field adds ILD.)
        #expect(abs(heard.interauralLevelDifferenceDecibels - rear.interauralLevelDifferenceDecibels) <= 3)
    }

    @Test(arguments: PrivateSoundServer.Kind.allCases)
    func mpvInAWindowSoundsFromItsWindowFoundByItsPid(kind: PrivateSoundServer.Kind) throws {
        let desk = try Desk(kind)
        let file = try Self.noiseFile()
        defer { try? FileManager.default.removeItem(at: file) }
        // No xid on its stream: the daemon finds mpv's window by _NET_WM_PID.
        try desk.start("/usr/bin/mpv", ["--no-config", "--force-window=yes", "--vo=x11", "--ao=pulse",
                                        "--geometry=400x300+1400+200", "--loop-file=inf", "--really-quiet", file.path])
        #expect(desk.waitForCaptures(1), "\(desk.logText)")
        #expect(waitUntil(timeoutSeconds: 10) { (try? desk.x.toolOutput("xdotool", ["search", "--onlyvisible", "--pid", String(desk.apps[0].pid)])) != nil })
        // Its stream moves to the window as soon as the tracker reports the window.
        let cues = try waitForCues(desk) { $0.itdMicroseconds < -100 }
        #expect(cues.itdMicroseconds < -100 && cues.interauralLevelDifferenceDecibels < -2, "mpv on the right: \(cues); \(desk.logText.suffix(1500))")
    }

    @Test(arguments: PrivateSoundServer.Kind.allCases)
    func eventSoundsAreSystemSoundsOrAlertsAtTheirWindow(kind: PrivateSoundServer.Kind) throws {
        let desk = try Desk(kind)
        // Said when the warning is missing (ci61, PulseAudio: captured, nothing at the sink, six
        // output underruns meanwhile): whether the machine stalled the render then.
        let watch = MachineStallWatch(thresholdSeconds: 0.002)
        defer { watch.stop() }
        let recording = try MonitorRecording(server: desk.server, file: temporaryFile("sink.raw"))
        // libcanberra as GTK programs use it: a cached sample played with the window's id.
        try desk.start("/usr/bin/canberra-gtk-play", ["-i", "dialog-warning", "--property=window.x11.xid=\(desk.rightWindow)"])
        #expect(desk.waitForCaptures(1), "\(desk.logText)")
        #expect(waitUntil(timeoutSeconds: 10) { !desk.apps[0].isRunning })
        let heard = recording.finish(afterFrames: recording.frameCount + 72_000, timeoutSeconds: 5)
        try desk.start("/usr/bin/canberra-gtk-play", ["-i", "bell", "--property=window.x11.xid=\(desk.leftWindow)"])
        #expect(desk.waitForCaptures(2), "\(desk.logText)")
        let log = desk.logText
        #expect(log.contains("window 0x\(String(desk.rightWindow, radix: 16))) as alert dialog-warning"), "\(log)")
        #expect(log.contains("window 0x\(String(desk.leftWindow, radix: 16))) as system bell"), "\(log)")

        // The warning (0.5 s) is heard from the right: measured over its second half, where the
        // window is the only thing that places it (ShortSoundTests covers its onset).
        let left = stride(from: 0, to: heard.count, by: 2).map { heard[$0] }
        let right = stride(from: 1, to: heard.count, by: 2).map { heard[$0] }
        let loud = left.indices.filter { abs(left[$0]) > 0.002 || abs(right[$0]) > 0.002 }
        // Seen once in a fresh-clone run on PipeWire: nothing at all. What the daemon and the
        // graph said then.
        let whatHappened = { """
            \(heard.count / 2) frames recorded; \(watch.summary(from: 0, to: MachineStallWatch.nowSeconds())); \(desk.serverStateText); \
            links: \(kind == .pipeWire ? (try? desk.server.pwLink(["-l"])) ?? "?" : "-"); the daemon said: \(log.suffix(3000))
            """ }
        let first = try #require(loud.first, "the warning never reached the sink; \(whatHappened())"), last = loud.last!
        // ci85 (PulseAudio, the host taking 40 % of the CPUs): 0.095 s of it, and nothing said why.
        #expect(Double(last - first) / 48_000 > 0.3, "only \(Double(last - first) / 48_000) s of the warning arrived; \(whatHappened())")
        let tail = (first + last) / 2 ..< last
        let cues = CueAnalysis.cues(left: Array(left[tail]), right: Array(right[tail]), sampleRateHz: 48_000)
        // (A mostly low-pitched sound: its level differs less between the ears than noise's.)
        #expect(cues.itdMicroseconds < -100 && cues.interauralLevelDifferenceDecibels < -1, "warning at the right window: \(cues)")
    }

    @Test(arguments: PrivateSoundServer.Kind.allCases)
    func aWindowClosingWhileItsAppPlaysLeavesTheSoundWhereItWas(kind: PrivateSoundServer.Kind) throws {
        let desk = try Desk(kind)
        let file = try Self.noiseFile()
        defer { try? FileManager.default.removeItem(at: file) }
        let term = try desk.x.openXTerm(geometry: "60x20+80+700")
        let window = try desk.x.windowID(of: term)
        try desk.start("/usr/bin/paplay", ["--property=window.x11.xid=\(window)", file.path])
        #expect(desk.waitForCaptures(1), "\(desk.logText)")
        term.kill()
        #expect(waitUntil(timeoutSeconds: 5) { (try? desk.x.toolOutput("xwininfo", ["-id", String(window)])) == nil })
        // Still playing, still from the left, where the window was; the daemon is fine.
        let cues = try waitForCues(desk) { $0.itdMicroseconds > 100 }
        #expect(cues.itdMicroseconds > 100, "after the window closed: \(cues)")
        #expect(desk.daemon.isRunning)
        let (status, text) = desk.cli(["apps", "--json", "--socket", desk.socket])
        #expect(status == 0 && text.contains("\"window\":\"0x\(String(window, radix: 16))\""), "\(text)")
    }

    @Test(arguments: PrivateSoundServer.Kind.allCases)
    func theSoundServerRestartingUnderTheDaemonIsCapturedAgain(kind: PrivateSoundServer.Kind) throws {
        let desk = try Desk(kind)
        let file = try Self.noiseFile()
        defer { try? FileManager.default.removeItem(at: file) }
        try desk.start("/usr/bin/paplay", ["--property=window.x11.xid=\(desk.leftWindow)", file.path])
        #expect(desk.waitForCaptures(1), "\(desk.logText)")
        desk.apps.forEach { $0.kill() }
        desk.server.stop()
        try desk.server.start()
        #expect(waitUntil(timeoutSeconds: 15) { desk.logText.components(separatedBy: "taking other apps' streams").count - 1 >= 2 },
                "\(desk.logText.suffix(2000))")
        try desk.start("/usr/bin/paplay", ["--property=window.x11.xid=\(desk.leftWindow)", file.path])
        #expect(desk.waitForCaptures(2), "\(desk.logText.suffix(2000))\n\(desk.serverStateText)")
        let cues = try waitForCues(desk) { $0.itdMicroseconds > 100 }
        #expect(cues.itdMicroseconds > 100 && cues.interauralLevelDifferenceDecibels > 2, "after the restart: \(cues)")
    }

    @Test(arguments: PrivateSoundServer.Kind.allCases)
    func aHundredStreamsComingAndGoingInFiveSecondsLeaveNothingBehind(kind: PrivateSoundServer.Kind) throws {
        let desk = try Desk(kind)
        let file = temporaryFile("short.wav")
        defer { try? FileManager.default.removeItem(at: file) }
        try TestSignal.writeWAV(TestSignal.stereoNoise(seconds: 0.3, seed: 9), to: file)
        // The scene slots (`status --json`): each paplay, which has no window, plays at its own process's scene.
        func sceneSlots() -> StatusDocument.SceneSlots? {
            let (status, output) = desk.cli(["status", "--json", "--socket", desk.socket])
            return status == 0 ? (try? StatusSchema.decode(output))?.sceneSlots : nil
        }
        func described(_ slots: StatusDocument.SceneSlots?) -> String {
            slots.map { "in use \($0.inUse), created \($0.created), freed \($0.freed), refused \($0.refused)" } ?? "none"
        }
        let slotsBefore = sceneSlots()
        // The daemon's own memory (`RssAnon`: heap and stacks) is judged once the capture rests
        // (3 s after the last stream), when it has given its free heap back: what stays.
        func rests() -> Int { desk.logText.components(separatedBy: "app capture: nothing plays on the capture sink: resting").count - 1 }
        func ownMemoryAtRest(after restsBefore: Int) -> Int {
            #expect(waitUntil(timeoutSeconds: 15) { rests() > restsBefore }, "\(desk.logText.suffix(1500))")
            return ProcessMemory.kilobytes(desk.daemon.pid, ProcessMemory.own)
        }
        let ownMemoryBefore = ownMemoryAtRest(after: 0)
        /// Twenty a second, each playing 0.3 s: several at once, starting and ending all the time;
        /// returns the streams it captured, and the daemon's own memory at the rest after it.
        func burst(_ name: String) throws -> (captured: Int, ownMemoryKilobytes: Int) {
            let restsBefore = rests()
            // The whole burst's time is the machine's too (a hundred processes started on two
            // CPUs): judged against it. ci64 on PipeWire took 10.17 s where 5.3 is usual, one
            // stream of the hundred not captured: the player that lasted longest is named, to be
            // found in the daemon's log.
            let watch = MachineStallWatch(thresholdSeconds: 0.002)
            defer { watch.stop() }
            let started = Date()
            var players: [(index: Int, startedAt: Date, process: ChildProcess)] = [], lasted: [(index: Int, seconds: Double)] = []
            func noteEnded() {
                for player in players where !player.process.isRunning { lasted.append((player.index, Date().timeIntervalSince(player.startedAt))) }
                players.removeAll { !$0.process.isRunning }
            }
            for index in 0 ..< 100 {
                let due = started.addingTimeInterval(Double(index) * 0.05)
                if due > Date() { Thread.sleep(until: due) }
                players.append((index, Date(), try desk.server.startClient("/usr/bin/paplay", ["--client-name=\(name)-\(index)", file.path])))
                noteEnded()
            }
            #expect(waitUntil(timeoutSeconds: 20) { noteEnded(); return players.isEmpty })
            let playedSeconds = Date().timeIntervalSince(started)
            watch.stop()
            let longest = lasted.max { $0.seconds < $1.seconds }
            print("\(name): the 100 players (5.3 s of sound) done \(String(format: "%.2f", playedSeconds)) s after the first started, the longest "
                  + "\(name)-\(longest?.index ?? -1) after \(String(format: "%.2f", longest?.seconds ?? 0)) s (0.3 s of sound); "
                  + watch.summary(from: 0, to: MachineStallWatch.nowSeconds()))
            watch.expectTimely(playedSeconds < 10, "the 100 players were done \(playedSeconds) s after the first started; the longest, "
                               + "\(name)-\(longest?.index ?? -1), lasted \(longest?.seconds ?? 0) s: \(desk.logText.suffix(3000))")
            // Every stream taken is let go again: each player captured has its "ended" line. (One
            // left on the real sink — "not capturing", said why — was never taken.)
            func capturedAndKept() -> (captured: Int, kept: [String]) {
                var captured = 0, open: [String: Int] = [:]
                for line in desk.logText.split(separator: "\n") where !line.contains("not capturing ") {
                    if let player = Self.player(name, in: line, after: "capturing ") {
                        captured += 1
                        open[player, default: 0] += 1
                    } else if line.contains(" ended: "), let player = Self.player(name, in: line, after: "captured stream of ") {
                        open[player, default: 0] -= 1
                    }
                }
                return (captured, open.filter { $0.value != 0 }.keys.sorted())
            }
            let allLetGo = waitUntil(timeoutSeconds: 10) { capturedAndKept().kept.isEmpty }
            let (captured, kept) = capturedAndKept()
            let keptLines = desk.logText.split(separator: "\n").filter { line in kept.contains { line.contains($0 + " ") } }
            #expect(allLetGo, "taken and never let go: \(kept); what the log says of them:\n\(keptLines.joined(separator: "\n"))")
            let leftAlone = desk.logText.split(separator: "\n").filter { $0.contains("not capturing \(name)-") }
            if !leftAlone.isEmpty { print("\(name): left on the real sink:\n" + leftAlone.joined(separator: "\n")) }
            return (captured, ownMemoryAtRest(after: restsBefore))
        }
        let (captured, ownMemoryAfter) = try burst("burst")
        // The daemon lives on, with nothing on our sink.
        #expect(captured >= 50, "only \(captured) of 100 streams were captured")
        #expect(desk.daemon.isRunning)
        let captureSink = try desk.server.sinkIndex(named: CaptureSinkProperties.sinkName)
        #expect(try desk.server.sinkInputs().filter { $0.sink == captureSink }.isEmpty)
        // Every scene the streams made was freed again: the count is back where it was.
        var slotsAfter = sceneSlots()
        #expect(waitUntil(timeoutSeconds: 10) { slotsAfter = sceneSlots(); return slotsAfter != nil && slotsAfter?.inUse == slotsBefore?.inUse },
                "scene slots \(described(slotsBefore)) → \(described(slotsAfter))")
        let created = (slotsAfter?.created ?? 0) - (slotsBefore?.created ?? 0)
        let freed = (slotsAfter?.freed ?? 0) - (slotsBefore?.freed ?? 0)
        #expect(created >= 50 && freed == created && slotsAfter?.refused == 0,
                "scene slots \(described(slotsBefore)) → \(described(slotsAfter))")
        // A leak grows with every burst; what the first one costs (pages of buffers made at
        // start touched for the first time, the allocator's pools) stays for the next. At rest,
        // with the free heap given back, the second burst's growth is a few hundred kB either way
        // (without it, up to 34 MB a burst on PipeWire, the heap kept at its peak): a leak of
        // 20 kB a stream would grow it by that much a captured stream, 8 kB is the bar.
        let (capturedAgain, ownMemoryAfterAgain) = try burst("again")
        let laterGrowth = ownMemoryAfterAgain - ownMemoryAfter
        print("\(kind): \(captured), \(capturedAgain) of 100 short streams captured; daemon's own memory at rest \(ownMemoryBefore) → \(ownMemoryAfter) → \(ownMemoryAfterAgain) kB after each 100 (resident in all \(ProcessMemory.kilobytes(desk.daemon.pid, ProcessMemory.resident)) kB); scene slots \(described(slotsBefore)) → \(described(slotsAfter))")
        let givenBack = desk.logText.split(separator: "\n").compactMap { line in
            line.range(of: "free heap given back: ").map { String(line[$0.upperBound...]) }
        }
        print("\(kind): at each rest, \(givenBack.joined(separator: "; "))")
        #expect(ownMemoryAfter - ownMemoryBefore < 10_000, "the daemon's memory grew \(ownMemoryAfter - ownMemoryBefore) kB")
        #expect(capturedAgain >= 50 && laterGrowth < 8 * capturedAgain,
                "the daemon's memory grew \(laterGrowth) kB over the second burst's \(capturedAgain) captured streams")
    }

    @Test(arguments: PrivateSoundServer.Kind.allCases)
    func anAppExcludedFromTheCommandLineIsLeftAloneAcrossRestarts(kind: PrivateSoundServer.Kind) throws {
        let desk = try Desk(kind)
        let file = try Self.noiseFile()
        defer { try? FileManager.default.removeItem(at: file) }
        let outIndex = try #require(try desk.server.sinkIndex(named: PrivateSoundServer.sinkName))
        try desk.start("/usr/bin/paplay", ["--client-name=noisy", file.path])
        #expect(desk.waitForCaptures(1), "\(desk.logText)")
        #expect(try desk.server.sinkOf(application: "noisy") != outIndex)

        let (status, output) = desk.cli(["apps", "exclude", "noisy"])
        #expect(status == 0, "\(output)")
        // The running daemon lets it go: back on the real sink.
        #expect(try waitUntil(timeoutSeconds: 5) { try desk.server.sinkOf(application: "noisy") == outIndex })
        let (listed, text) = desk.cli(["apps", "--socket", desk.socket])
        #expect(listed == 0 && text.contains("excluded: noisy"), "\(text)")

        // Kept across a restart: a new instance is not taken.
        try desk.restartDaemon()
        try desk.start("/usr/bin/paplay", ["--client-name=noisy", file.path])
        #expect(try waitUntil(timeoutSeconds: 5) { try desk.server.sinkInputs().filter { $0.application == "noisy" }.count == 2 })
        Thread.sleep(forTimeInterval: 1)  // a negative check: nothing may take it in this second
        #expect(try desk.server.sinkInputs().filter { $0.application == "noisy" }.allSatisfy { $0.sink == outIndex })

        // Included again: taken again.
        #expect(desk.cli(["apps", "include", "noisy"]).0 == 0)
        #expect(desk.waitForCaptures(2), "\(desk.logText)")
        let (missing, message) = desk.cli(["apps", "include", "noisy"])
        #expect(missing == 1 && message.hasPrefix("scenesound: noisy is not in"), "\(message)")
    }

    /// The player (`name-N`) a daemon log line names right after `marker`, if it does.
    static func player(_ name: String, in line: Substring, after marker: String) -> String? {
        guard let start = line.range(of: marker + name + "-")?.upperBound else { return nil }
        let number = line[start...].prefix { $0.isNumber }
        return number.isEmpty ? nil : "\(name)-\(number)"
    }

    /// Cues until `predicate` holds (the window may be found a moment after the sound starts).
    func waitForCues(_ desk: Desk, timeoutSeconds: Double = 10, _ predicate: (BinauralCues) -> Bool) throws -> BinauralCues {
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        var cues = try desk.cuesOnTheSink(seconds: 0.5)
        while !predicate(cues), Date() < deadline { cues = try desk.cuesOnTheSink(seconds: 0.5) }
        if !predicate(cues) { print("cues \(cues) short of what was awaited; the sound's way:\n\(desk.soundPathText)") }
        return cues
    }
}
