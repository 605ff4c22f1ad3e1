import Foundation
import SceneSoundCapture
import SceneSoundCaptureGraph
import SceneSoundPipeWire
import SceneSoundPulse
import SceneSoundTestSupport
import Testing

/// The capture against real servers, PulseAudio and PipeWire (pipewire-pulse), as desktops
/// run them, with real clients (paplay).
@Suite(.serialized) struct CaptureOnServerTests {
    /// One server and one capture in this process; the capture undoes itself and the server
    /// stops by PID whatever happens.
    final class Fixture {
        let kind: PrivateSoundServer.Kind
        let server: PrivateSoundServer
        let consumer = RecordingConsumer()
        let capture: AppCapture
        var clients: [ChildProcess] = []
        private var files: [URL] = []
        /// The machine over the fixture's life: a quantum the graph lost while it was
        /// disturbed is the machine's (`expectExact`).
        let stallWatch = MachineStallWatch(thresholdSeconds: 0.002)

        init(_ kind: PrivateSoundServer.Kind, excluded: Set<String> = [], guarded: Bool = true,
             restAfterSeconds: Double = AppCapture.Configuration().restAfterSeconds) throws {
            self.kind = kind
            server = try PrivateSoundServer(kind)
            var configuration = AppCapture.Configuration(
                serverAddress: server.serverAddress, excludedBinaries: excluded,
                guardExecutable: guarded ? BuiltProducts.guardExecutable : nil)
            configuration.fragmentSeconds = 0.010
            configuration.restAfterSeconds = restAfterSeconds
            // On PipeWire the apps are linked into a node of the graph, as the daemon does.
            var graph: GraphCapture?
            if kind == .pipeWire {
                let made = GraphCapture()
                let node = CaptureNode(remote: PipeWireSession.socketPath(environment: server.clientEnvironment),
                                       rateHz: 48_000, quantumFrames: Self.nodeQuantumFrames)
                made.nodeSource = { node.node }
                try node.start(capture: made)
                configuration.graph = made
                graph = made
                captureNode = node
            }
            capture = AppCapture(configuration: configuration, consumer: consumer)
            consumer.graph = graph
        }
        private var captureNode: CaptureNode?
        /// The quantum the capture's node asks for on PipeWire, as the daemon's does.
        static let nodeQuantumFrames = 256

        func startCapturing() throws {
            try capture.start()
            guard consumer.wait(timeoutSeconds: 10, until: { $0.statesWhileLocked.contains { $0.isCapturing } }) else {
                throw ToolFailure(command: "capture", status: 0, output: "not capturing: \(consumer.states)")
            }
        }

        /// That a capture is the file exactly. On PipeWire, whole cycles skipped, played twice
        /// or replaced in place (up to four), no more often than the node recorded late cycles,
        /// are the known weakness
        /// (docs/CAPTURE.md, "Scale": a driver a period late runs the next cycle at once,
        /// without our node, and that cycle's input is gone; a fresh-clone run also saw a quantum
        /// played again, later in the same capture): recorded as a known issue, not a
        /// pass; so are such breaks, however many, while the machine disturbed the fixture
        /// (`MachineStallWatch.disturbance`: another node of the graph — the app's stream in
        /// pipewire-pulse — held off its cycle; a fresh-clone run on 1 Dec 2026 lost one quantum
        /// so with none of our cycles late). Any other difference fails.
        /// `lateCycles`: the node's late cycles while the copy was made (all so far when nil).
        func expectExact(_ what: String, _ match: TestSignal.Match, lateCycles: Int? = nil,
                         sourceLocation: SourceLocation = #_sourceLocation) {
            let lateCycles = lateCycles ?? lateCycleCount
            let machine = kind == .pipeWire ? stallWatch.disturbance() : nil
            let context = nodeAndMachine(lateCycles: lateCycles)
            let exact = {
                #expect(match.residualDecibels < -60, "\(what) differs from the file by \(match.residualDecibels) dB; \(match.mismatch)\(context)",
                        sourceLocation: sourceLocation)
            }
            guard Self.isLateDriversLoss(match, lateCycles: lateCycles, machineDisturbed: machine != nil,
                                         quantumFrames: lateCycleQuantumFrames) else { return exact() }
            let told = TestSignal.CopyBreak.describe(match.breaks)
            print("\(kind): \(what) has \(told); the node had \(lateCycles) late cycle(s)\(machine.map { "; \($0)" } ?? "")")
            withKnownIssue("a cycle of the graph lost to a late driver or the machine: \(what) has \(told)", isIntermittent: true) { exact() }
        }

        /// A failure's words for a capture in which the file is not found at all: how much was
        /// taken and how loud, how much of it silent, and what the node and the machine did.
        func notTheFile(_ what: String, _ captured: [Float]) -> Comment {
            let frames = captured.count / 2
            let silent = (0 ..< frames).filter { captured[2 * $0] == 0 && captured[2 * $0 + 1] == 0 }.count
            let context = nodeAndMachine(lateCycles: lateCycleCount)
            return "\(what) is not the file: \(frames) frames taken at \(TestSignal.rmsDecibels(captured[...])) dB, \(silent) of them silent\(context)"
        }

        /// What the node and the machine did over the fixture, for a failure to be read by (PipeWire).
        private func nodeAndMachine(lateCycles: Int) -> String {
            kind == .pipeWire ? "; the node had \(lateCycles) late cycle(s); \(stallWatch.summary(from: 0, to: .infinity))" : ""
        }

        /// Whether a copy differs from its file only as the known weakness does (above): whole
        /// quanta of `quantumFrames`, with `lateCycles` late cycles of the node to account for
        /// its breaks, or any number of them while the machine was disturbed.
        static func isLateDriversLoss(_ match: TestSignal.Match, lateCycles: Int, machineDisturbed: Bool = false,
                                      quantumFrames: Int = nodeQuantumFrames) -> Bool {
            let breaks = match.breaks
            return match.residualDecibels >= -60 && !breaks.isEmpty && (breaks.count <= lateCycles || machineDisturbed)
                && breaks.allSatisfy { $0.jumpFrames % quantumFrames == 0 && $0.exactFromFrame - $0.firstDifferingFrame <= 4 * quantumFrames }
        }

        /// The late cycles the capture's node has recorded (PipeWire; 0 on PulseAudio).
        var lateCycleCount: Int { captureNode?.node.lateCycleCount ?? 0 }

        /// The quantum the graph ran at in the node's latest late cycles (the least of them), or
        /// the node's own: an app that asks for less than the node (`paplay --latency-msec=10`)
        /// has PipeWire 1.4 run the whole graph at 128 frames, and a cycle lost then is 128.
        var lateCycleQuantumFrames: Int {
            let quanta = captureNode?.node.recentLateCycles.map { Int(($0.quantumSeconds * 48_000).rounded()) } ?? []
            return quanta.filter { $0 > 0 }.min() ?? Self.nodeQuantumFrames
        }

        /// A file of stereo noise, removed with the fixture, and its samples.
        func noise(seconds: Double, seed: UInt64) throws -> (file: URL, samples: [Int16]) {
            let samples = TestSignal.stereoNoise(seconds: seconds, seed: seed)
            let file = temporaryFile("noise.wav")
            try TestSignal.writeWAV(samples, to: file)
            files.append(file)
            return (file, samples)
        }

        /// The first stream the capture took, once it has taken exactly one.
        func firstCapturedStream() throws -> CapturedStreamIdentity {
            #expect(consumer.wait(timeoutSeconds: 10) { $0.startedWhileLocked.count == 1 })
            return try #require(consumer.startedStreams.first)
        }

        /// For "nothing happens" checks: true once the capture has handled every server event
        /// so far. The real sink's volume is set to `percent`, which the capture mirrors onto
        /// its own sink only after answering the events before it (one connection: events,
        /// and the answers to what it asked about them, come in order), so whatever it did
        /// about those (a stream moved back) has reached the server by then.
        func captureHasCaughtUp(settingRealSinkVolumeTo percent: Int) throws -> Bool {
            // The real sink may rest: kept running, so that its change is signalled at once.
            try MonitorRecording.keepingRunning(on: server) {
                try server.pactl(["set-sink-volume", PrivateSoundServer.sinkName, "\(percent)%"])
                return try waitUntil(timeoutSeconds: 5) {
                    try VolumeForwardingTests.volume(of: CaptureSinkProperties.sinkName, on: server).percent == percent
                }
            }
        }

        func play(_ file: URL, _ arguments: [String] = []) throws -> ChildProcess {
            let client = try server.startClient("/usr/bin/paplay", arguments + [file.path])
            clients.append(client)
            return client
        }

        deinit {
            clients.forEach { $0.kill() }
            capture.stop()
            captureNode?.stop()
            server.tearDown()
            files.forEach { try? FileManager.default.removeItem(at: $0) }
        }
    }

    @Test(arguments: PrivateSoundServer.Kind.allCases)
    func aPlayingAppIsCapturedExactlyAndSilencedOnTheRealSink(kind: PrivateSoundServer.Kind) throws {
        let fixture = try Fixture(kind)
        try fixture.startCapturing()
        let (file, source) = try fixture.noise(seconds: 4, seed: 7)
        _ = try fixture.play(file)

        let consumer = fixture.consumer
        let stream = try fixture.firstCapturedStream()
        #expect(stream.applicationName == "paplay")
        #expect(stream.processID != nil)
        // One second of it captured, then listen to the real sink for half a second.
        #expect(consumer.wait(timeoutSeconds: 10) { $0.framesWhileLocked(stream.streamIndex) >= 48_000 })
        let recording = try MonitorRecording(server: fixture.server, file: temporaryFile("out.raw"))
        let dry = recording.finish(afterFrames: 24_000, timeoutSeconds: 10)
        #expect(consumer.wait(timeoutSeconds: 10) { $0.framesWhileLocked(stream.streamIndex) >= 2 * 48_000 })
        let captured = consumer.audio(of: stream.streamIndex)

        let match = try #require(TestSignal.match(captured: captured, source: source), fixture.notTheFile("the capture", captured))
        fixture.expectExact("the capture", match)
        let capturedLevel = TestSignal.rmsDecibels(captured[...])
        let dryLevel = TestSignal.rmsDecibels(dry[...])
        #expect(dry.count >= 2 * 24_000)
        #expect(dryLevel - capturedLevel <= -60, "dry copy at \(dryLevel) dB, captured at \(capturedLevel) dB")

        // The app's own volume still works: 50 % (cubic) is -18 dB in the capture.
        let input = try #require(try fixture.server.sinkInputs().first { $0.application == "paplay" })
        let before = consumer.audio(of: stream.streamIndex).count
        try fixture.server.pactl(["set-sink-input-volume", String(input.index), "50%"])
        #expect(consumer.wait(timeoutSeconds: 10) { $0.framesWhileLocked(stream.streamIndex) >= before / 2 + 48_000 })
        let after = consumer.audio(of: stream.streamIndex)
        let quieter = TestSignal.rmsDecibels(after[(after.count - 24_000)...]) - TestSignal.rmsDecibels(captured[(captured.count / 2)...])
        #expect(abs(quieter - -18.06) < 1.5, "50 % volume changed the capture by \(quieter) dB")
    }

    /// The capture sink offers 7.1: a 5.1 app keeps its six channels (its rear-left, the only
    /// one sounding, arrives in its own channel sample for sample, the others silent), while
    /// a stereo app beside it is still taken in its own two channels (not the server's fake
    /// surround folded back) and a mono one as before (the same in both).
    @Test(arguments: PrivateSoundServer.Kind.allCases)
    func aSurroundAppKeepsItsChannelsWhileStereoAndMonoAppsStayAsTheyWere(kind: PrivateSoundServer.Kind) throws {
        let fixture = try Fixture(kind)
        try fixture.startCapturing()
        let (stereoFile, stereoSource) = try fixture.noise(seconds: 6, seed: 7)
        let rearLeft = try fixture.noise(seconds: 6, seed: 12).samples.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)
        let surroundFile = temporaryFile("rear-left.wav"), monoFile = temporaryFile("mono.wav")
        defer { [surroundFile, monoFile].forEach { try? FileManager.default.removeItem(at: $0) } }
        var six = [Int16](repeating: 0, count: 6 * rearLeft.count)
        for frame in rearLeft.indices { six[6 * frame + 4] = rearLeft[frame] }
        try TestSignal.writeWAV(six, channels: 6, to: surroundFile)
        let mono = try fixture.noise(seconds: 6, seed: 21).samples.enumerated().filter { $0.offset % 2 == 1 }.map(\.element)
        try TestSignal.writeWAV(mono, channels: 1, to: monoFile)
        let map51 = ["front-left", "front-right", "front-center", "lfe", "rear-left", "rear-right"]
        _ = try fixture.play(surroundFile, ["--client-name=surround-app", "--channel-map=" + map51.joined(separator: ",")])
        _ = try fixture.play(stereoFile, ["--client-name=stereo-app"])
        _ = try fixture.play(monoFile, ["--client-name=mono-app"])

        let consumer = fixture.consumer
        #expect(consumer.wait(timeoutSeconds: 10) { $0.startedWhileLocked.count == 3 },
                "started \(consumer.startedStreams), left \(consumer.leftStreams.map { "\($0.stream.applicationName ?? "?"): \($0.reason)" }), sink inputs \((try? fixture.server.sinkInputs()) ?? [])")
        let streams = Dictionary(consumer.startedStreams.map { ($0.applicationName ?? "", $0) }) { a, _ in a }
        let surround = try #require(streams["surround-app"]), stereo = try #require(streams["stereo-app"])
        let monoStream = try #require(streams["mono-app"])
        #expect(surround.channels.channelNames == map51)
        #expect(stereo.channels == .stereo && monoStream.channels == .stereo)
        #expect(consumer.wait(timeoutSeconds: 10) { consumer in
            [surround, stereo, monoStream].allSatisfy { consumer.framesWhileLocked($0.streamIndex) >= 2 * 48_000 }
        })

        // The stereo app: its own two channels, exactly.
        let stereoMatch = try #require(TestSignal.match(captured: consumer.audio(of: stereo.streamIndex), source: stereoSource),
                                       "the stereo capture is not the file")
        fixture.expectExact("the stereo app's capture", stereoMatch)
        // The mono app: the file in both channels, as a stereo sink made it before.
        let monoAsStereo = mono.flatMap { [$0, $0] }
        let monoMatch = try #require(TestSignal.match(captured: consumer.audio(of: monoStream.streamIndex), source: monoAsStereo),
                                     "the mono capture is not the file in both channels")
        fixture.expectExact("the mono app's capture", monoMatch)

        // The 5.1 app: rear-left (channel 4) is the file, every other channel silent.
        let captured = consumer.audio(of: surround.streamIndex)
        let frames = captured.count / 6
        func channel(_ index: Int) -> [Float] { (0 ..< frames).map { captured[6 * $0 + index] } }
        let rear = channel(4)
        let rearAsPair = rear.flatMap { [$0, $0] }, sourceAsPair = rearLeft.flatMap { [$0, $0] }
        let rearMatch = try #require(TestSignal.match(captured: rearAsPair, source: sourceAsPair), "rear-left is not the file")
        fixture.expectExact("the 5.1 app's rear-left", rearMatch)
        let rearLevel = TestSignal.rmsDecibels(rear[...])
        for index in [0, 1, 2, 3, 5] {
            let level = TestSignal.rmsDecibels(channel(index)[...])
            #expect(level - rearLevel < -60, "channel \(map51[index]) at \(level) dB beside rear-left at \(rearLevel) dB")
        }
        print("\(kind) capture: 5.1 rear-left residual \(rearMatch.residualDecibels) dB, stereo \(stereoMatch.residualDecibels) dB, "
              + "mono \(monoMatch.residualDecibels) dB")
    }

    /// An app linked to our sink only after the capture has answered every event about it is
    /// taken, whole: WirePlumber does not link this one (`node.autoconnect=false`), it is linked
    /// to the park sink by hand. (The race it stands for — on a busy machine the app's last
    /// event comes before pipewire-pulse knows its link — cannot be made here at will: linking
    /// by hand brings an event of its own, so this passes without the capture's looking again,
    /// `awaitFirstLink`; docs/CAPTURE.md gives what showed that race.)
    @Test func anAppLinkedAfterItsLastEventIsCaptured() throws {
        let fixture = try Fixture(.pipeWire)
        let server = fixture.server, consumer = fixture.consumer
        try fixture.startCapturing()
        let (file, source) = try fixture.noise(seconds: 6, seed: 9)
        _ = try fixture.play(file, ["--client-name=linked-late", "--property=node.autoconnect=false"])
        #expect(try waitUntil(timeoutSeconds: 5) { try server.sinkInputs().contains { $0.application == "linked-late" } })
        #expect(try fixture.captureHasCaughtUp(settingRealSinkVolumeTo: 80))
        #expect(consumer.startedStreams.isEmpty)
        let parkPorts = try server.pwLink(["-i"]).split(separator: "\n").map(String.init)
            .filter { $0.hasPrefix(CaptureSinkProperties.sinkName + ":") }
        for channel in ["FL", "FR"] {
            let port = try #require(parkPorts.first { $0.hasSuffix("_" + channel) }, "\(parkPorts)")
            // PipeWire 1.4's pw-link waits for its link to settle and calls one changed before
            // then a failure: here "Invalid argument", then "No such file or directory" for the
            // other channel, and the app captured whole all the same (4 Dec 2026). What is
            // judged is the capture, below.
            let made = Result { try server.pwLink(["linked-late:output_" + channel, port]) }
            if case .failure(let error) = made { print("pw-link of linked-late's \(channel): \(error)") }
        }
        #expect(consumer.wait(timeoutSeconds: 5) { $0.startedWhileLocked.count == 1 },
                "left \(consumer.leftStreams.map(\.reason)), sink inputs \((try? server.sinkInputs()) ?? [])")
        let stream = try #require(consumer.startedStreams.first)
        #expect(consumer.wait(timeoutSeconds: 10) { $0.framesWhileLocked(stream.streamIndex) >= 48_000 })
        let captured = consumer.audio(of: stream.streamIndex)
        let match = try #require(TestSignal.match(captured: captured, source: source), fixture.notTheFile("the capture", captured))
        fixture.expectExact("the capture", match)
    }

    @Test(arguments: PrivateSoundServer.Kind.allCases)
    func streamsThatAreNotAppsOnTheDefaultSinkAreLeftAlone(kind: PrivateSoundServer.Kind) throws {
        let fixture = try Fixture(kind, excluded: ["excluded-app"])
        let server = fixture.server
        try server.pactl(["load-module", "module-null-sink", "sink_name=aux", "rate=48000"])
        let outIndex = try #require(try server.sinkIndex(named: PrivateSoundServer.sinkName))
        let auxIndex = try #require(try server.sinkIndex(named: "aux"))
        // A module's stream on the default sink.
        try server.pactl(["load-module", "module-loopback", "source=aux.monitor", "sink=out", "latency_msec=50"])
        // This process's own output, as the daemon's would be: pinned to the real sink, since
        // ours becomes the default. The capture never moves it (a move would be remembered).
        let ownOutput = PulseOutput(configuration: .init(streamName: "own output", serverAddress: server.serverAddress)) { _ in }
        try ownOutput.start { buffer, frames in buffer.update(repeating: 0, count: 2 * frames) }
        defer { ownOutput.stop() }
        fixture.consumer.onRealSink = { ownOutput.pin(toSink: $0) }
        try fixture.startCapturing()

        let file = try fixture.noise(seconds: 20, seed: 3).file
        _ = try fixture.play(file, ["--client-name=phone-call", "--property=media.role=phone"])
        _ = try fixture.play(file, ["--client-name=excluded-app"])
        _ = try fixture.play(file, ["--client-name=on-aux", "--device=aux"])
        _ = try fixture.play(file, ["--client-name=an-app"])

        let consumer = fixture.consumer
        #expect(consumer.wait(timeoutSeconds: 10) { $0.startedWhileLocked.contains { $0.applicationName == "an-app" } })
        // Everything else is in place and stays there: give the capture time to (wrongly) act.
        #expect(try waitUntil(timeoutSeconds: 10) { try server.sinkInputs().count >= 6 })
        Thread.sleep(forTimeInterval: 1.0)  // a negative check: nothing may happen in this second
        #expect(consumer.startedStreams.map(\.applicationName) == ["an-app"])
        let inputs = try server.sinkInputs()
        #expect(inputs.first { $0.application == "phone-call" }?.sink == outIndex)
        #expect(inputs.first { $0.application == "excluded-app" }?.sink == outIndex)
        #expect(inputs.first { $0.application == "on-aux" }?.sink == auxIndex)
        #expect(inputs.filter { $0.sink == outIndex }.count == 4, "\(inputs)")  // phone, excluded, loopback, own output

        // Excluding a captured app sends it back.
        fixture.capture.setExcludedBinaries(["excluded-app", "an-app"])
        #expect(try waitUntil(timeoutSeconds: 5) { try server.sinkOf(application: "an-app") == outIndex },
                "\((try? server.sinkInputs()) ?? []) \((try? server.pactl(["list", "short", "sinks"])) ?? "")")
        #expect(consumer.wait(timeoutSeconds: 5) { _ in consumer.endedStreamsWhileLocked.count == 1 })
    }

    /// PulseAudio only. On PipeWire (0.3.65, WirePlumber 0.4.13) the move happens in about one
    /// try of two here, the stream otherwise staying on our sink (pactl reports success); when
    /// it happens, pipewire-pulse sends no event for it, and the capture lets the stream go at
    /// its once-a-second look.
    @Test(arguments: [PrivateSoundServer.Kind.pulseAudio])
    func aStreamTheUserMovesElsewhereStaysWhereTheyPutIt(kind: PrivateSoundServer.Kind) throws {
        let fixture = try Fixture(kind)
        let server = fixture.server
        try server.pactl(["load-module", "module-null-sink", "sink_name=headset", "rate=48000"])
        let headset = try #require(try server.sinkIndex(named: "headset"))
        try fixture.startCapturing()
        let file = try fixture.noise(seconds: 20, seed: 4).file
        _ = try fixture.play(file, ["--client-name=moved-by-hand"])
        let consumer = fixture.consumer
        #expect(consumer.wait(timeoutSeconds: 10) { $0.startedWhileLocked.count == 1 })
        let captureSink = try server.sinkIndex(named: CaptureSinkProperties.sinkName)
        #expect(try waitUntil(timeoutSeconds: 5) { try server.sinkOf(application: "moved-by-hand") == captureSink })
        let input = try #require(try server.sinkInputs().first { $0.application == "moved-by-hand" })
        // Moved while it is heard through the capture, as a user would.
        #expect(consumer.wait(timeoutSeconds: 5) { $0.framesWhileLocked(UInt32(input.index)) >= 4800 })
        try server.pactl(["move-sink-input", String(input.index), "headset"])
        #expect(consumer.wait(timeoutSeconds: 5) { _ in consumer.endedStreamsWhileLocked.count == 1 })
        #expect(try fixture.captureHasCaughtUp(settingRealSinkVolumeTo: 70))  // and did not take it back:
        #expect(try server.sinkOf(application: "moved-by-hand") == headset)
        #expect(consumer.startedStreams.count == 1)
        #expect(consumer.leftStreams.map(\.reason) == ["moved to sink \(headset) by the user or a policy; it plays there until it ends"])
    }

    /// A stream whose recording keeps ending (here killed by hand, as a mixer app can) is given
    /// up after three tries: sent back to the real sink, said why, and not taken again (before,
    /// it bounced between the two sinks for as long as it played). PulseAudio only: its
    /// recordings are all libpulse source outputs, which pactl can kill.
    @Test(arguments: [PrivateSoundServer.Kind.pulseAudio])
    func aStreamWhoseRecordingKeepsFailingIsGivenUpOnceAndPlaysOnTheRealSink(kind: PrivateSoundServer.Kind) throws {
        let fixture = try Fixture(kind)
        let server = fixture.server
        try fixture.startCapturing()
        _ = try fixture.play(try fixture.noise(seconds: 20, seed: 5).file, ["--client-name=hard-to-record"])
        let consumer = fixture.consumer
        _ = try fixture.firstCapturedStream()
        // The stream's own recording, not the capture sink's whole mix (the pacer).
        func recording() throws -> Int? {
            try server.list("source-outputs").first { output in
                (output["properties"] as? [String: Any])?["media.name"] as? String == "SceneSound capture of hard-to-record"
            }?["index"] as? Int
        }
        var killed: Set<Int> = []
        for _ in 0 ..< 3 {
            var index: Int?
            try #require(waitUntil(timeoutSeconds: 5) {
                index = try recording().flatMap { killed.contains($0) ? nil : $0 }
                return index != nil
            })
            try #require(server.killSourceOutput(index!))
            killed.insert(index!)
        }
        #expect(consumer.wait(timeoutSeconds: 5) { $0.leftWhileLocked.count == 1 })
        #expect(consumer.leftStreams.first?.reason.hasPrefix("its recording failed after 3 tries (Entity killed)") == true,
                "\(consumer.leftStreams.map(\.reason))")
        let real = try server.sinkIndex(named: PrivateSoundServer.sinkName)
        #expect(try waitUntil(timeoutSeconds: 5) { try server.sinkOf(application: "hard-to-record") == real })
        #expect(try fixture.captureHasCaughtUp(settingRealSinkVolumeTo: 70))  // and did not take it back:
        #expect(try server.sinkOf(application: "hard-to-record") == real)
        #expect(try recording() == nil)
        #expect(consumer.leftStreams.count == 1)
    }

    /// While capturing, ours is the default sink (new streams start on it) and the real one
    /// stands behind it. The user choosing another default (a headset plugged in) makes that
    /// the real sink, ours the default again, and it is the default once the capture stops;
    /// the real sink going away hands over to another.
    @Test(arguments: PrivateSoundServer.Kind.allCases)
    func theUsersChoiceOfDefaultBecomesTheRealSink(kind: PrivateSoundServer.Kind) throws {
        let fixture = try captureBesideAHeadset(kind)
        let server = fixture.server, consumer = fixture.consumer
        try chooseTheHeadset(fixture)
        // An app excluded now is let go to the real sink, the headset.
        let file = try fixture.noise(seconds: 20, seed: 6).file
        _ = try fixture.play(file, ["--client-name=let-go"])
        #expect(consumer.wait(timeoutSeconds: 10) { $0.startedWhileLocked.count == 1 })
        fixture.capture.setExcludedBinaries(["let-go"])
        let headset = try server.sinkIndex(named: "headset")
        #expect(try waitUntil(timeoutSeconds: 5) { try server.sinkOf(application: "let-go") == headset })

        // The real sink unplugged: another takes over.
        let sinksBefore = try server.pactl(["list", "short", "sinks"]), module = try headsetModule(server)
        try server.pactl(["unload-module", String(module)])
        #expect(consumer.wait(timeoutSeconds: 5) { $0.realSinks.last == PrivateSoundServer.sinkName }, "\(consumer.realSinks)")
        #expect(try waitUntil(timeoutSeconds: 5) { try server.sinkOf(application: "let-go") == server.sinkIndex(named: PrivateSoundServer.sinkName) },
                "\((try? server.sinkInputs()) ?? []) \((try? server.pactl(["list", "short", "sinks"])) ?? "") before: \(sinksBefore), unloaded \(module); \(consumer.statesWhileLockedCopy) \(consumer.realSinks)")

        // Stopped: the user's last choice is the default, ours gone.
        #expect(fixture.capture.stop())
        #expect(try server.defaultSinkName() == PrivateSoundServer.sinkName)
        #expect(try server.captureSinks().isEmpty)
    }

    /// On PipeWire, with every older binding of the `default` metadata deaf to its changes (a
    /// client gone while its binding waited: `leaveMetadataBindingsDeaf`), pipewire-pulse's copy
    /// for the capture's connection never hears the user's choice; the graph node, which reads
    /// the metadata again after each client, does, and the capture follows it.
    @Test func theUsersChoiceHiddenFromOlderBindingsBecomesTheRealSink() throws {
        let fixture = try captureBesideAHeadset(.pipeWire)
        try fixture.server.leaveMetadataBindingsDeaf()
        try chooseTheHeadset(fixture)
        #expect(fixture.capture.stop())
        #expect(try fixture.server.defaultSinkName() == "headset")
    }

    /// Capturing, ours the default, the real sink "out", and a sink "headset" beside it.
    func captureBesideAHeadset(_ kind: PrivateSoundServer.Kind) throws -> Fixture {
        let fixture = try Fixture(kind)
        try fixture.server.pactl(["load-module", "module-null-sink", "sink_name=headset", "rate=48000"])
        try fixture.startCapturing()
        // (WirePlumber applies a new default a moment after pipewire-pulse has said yes.)
        #expect(try waitUntil(timeoutSeconds: 5) { try fixture.server.defaultSinkName() == CaptureSinkProperties.sinkName })
        #expect(fixture.consumer.wait(timeoutSeconds: 5) { $0.realSinks == [PrivateSoundServer.sinkName] }, "\(fixture.consumer.realSinks)")
        return fixture
    }

    /// The user makes the headset the default: it becomes the real sink, ours the default again.
    func chooseTheHeadset(_ fixture: Fixture) throws {
        let server = fixture.server
        try server.pactl(["set-default-sink", "headset"])
        #expect(fixture.consumer.wait(timeoutSeconds: 5) { $0.realSinks.last == "headset" },
                "\(fixture.consumer.realSinks); \(defaults(server))")
        #expect(try waitUntil(timeoutSeconds: 5) { try server.defaultSinkName() == CaptureSinkProperties.sinkName },
                "\(defaults(server))")
    }

    /// What the server says of its default sink, for a failure's message: on PipeWire the
    /// `default` metadata (the user's choice and the one WirePlumber applied).
    func defaults(_ server: PrivateSoundServer) -> String {
        let told = (try? server.defaultSinkName()) ?? "?"
        guard server.kind == .pipeWire else { return "default sink \(told)" }
        return "default sink \(told), metadata: " + ((try? server.pipeWireTool("pw-metadata", ["-n", "default", "0"])) ?? "?")
    }

    /// The index of the module that loaded the "headset" null sink.
    func headsetModule(_ server: PrivateSoundServer) throws -> Int {
        let line = try server.pactl(["list", "short", "modules"]).split(separator: "\n").first { $0.contains("sink_name=headset") }
        return try #require(line.flatMap { Int($0.split(separator: "\t").first ?? "") })
    }

    @Test(arguments: PrivateSoundServer.Kind.allCases)
    func aStartingCaptureSweepsWhatACrashedOneLeft(kind: PrivateSoundServer.Kind) throws {
        let fixture = try Fixture(kind, guarded: false)
        let server = fixture.server
        // What a crashed daemon (a process that is gone) leaves: our sink, an app on it.
        let gone = try ChildProcess("/bin/true", [], display: nil)
        let deadPID = gone.pid
        _ = gone.waitForExit()
        try server.pactl(["load-module", "module-null-sink", "sink_name=\(CaptureSinkProperties.sinkName)",
                          "sink_properties=\"\(CaptureSinkProperties.sessionKey)=crashed \(CaptureSinkProperties.ownerPIDKey)=\(deadPID)\""])
        let file = try fixture.noise(seconds: 20, seed: 3).file
        _ = try fixture.play(file, ["--device=\(CaptureSinkProperties.sinkName)"])
        #expect(try waitUntil(timeoutSeconds: 5) { try server.sinkInputs().count == 1 })
        let stale = try #require(try server.captureModules().first)

        try fixture.startCapturing()
        #expect(fixture.consumer.wait(timeoutSeconds: 10) { $0.startedWhileLocked.count == 1 })
        let modules = try server.captureModules()
        // The stale module unloaded; ours is a module's on PulseAudio, on PipeWire our node's
        // park sink. (pipewire-pulse reuses module indices: the sinks' marks say which is which.)
        #expect(modules.count == (kind == .pipeWire ? 0 : 1), "capture modules loaded: \(modules), the stale one was \(stale)")
        let sinks = try server.captureSinks()
        #expect(sinks.count == 1)
        #expect((sinks.first?["properties"] as? [String: Any])?[CaptureSinkProperties.sessionKey] as? String != "crashed")

        // And a clean stop leaves nothing behind.
        #expect(fixture.capture.stop())
        #expect(try server.captureSinks().isEmpty)
        #expect(try server.captureModules().isEmpty)
        #expect(try server.sinkInputs().first?.sink == server.sinkIndex(named: PrivateSoundServer.sinkName))
        #expect(try server.defaultSinkName() == PrivateSoundServer.sinkName)
    }
}

extension RecordingConsumer {
    var endedStreamsWhileLocked: [UInt32] { ended }
    var leftWhileLocked: [(stream: CapturedStreamIdentity, reason: String)] { left }
}
