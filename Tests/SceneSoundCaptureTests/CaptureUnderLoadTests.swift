import Foundation
import SceneSoundProtocol
import SceneSoundTestSupport
import Testing

/// Under load, on PulseAudio and on PipeWire: 8 unmodified apps (`paplay`) captured by
/// `scenesoundd --capture-apps` and 8 played straight to the sink (excluded from the capture),
/// each a tone of its own, while two busy loops at normal priority take the 2-core machine's
/// CPUs — a compile in the background, a game. The real sink is recorded for
/// SCENESOUND_CAPTURE_LOAD_SECONDS (60 by default). A gap: a 10 ms window in which a tone falls
/// below half its median level, not where the machine itself stalled (`MachineStallWatch`). The
/// captured apps may not have more gaps than the direct ones; that is not met every run yet,
/// and is a known issue only where the machine is seen to have caused it (see the bar below).
/// The daemon plays through its default output on each server (the graph node on PipeWire).
@Suite(.serialized) struct CaptureUnderLoadTests {
    static let seconds = ProcessInfo.processInfo.environment["SCENESOUND_CAPTURE_LOAD_SECONDS"].flatMap(Double.init) ?? 60
    static let rateHz = 48_000, windowFrames = 480
    /// Whole cycles in every 10 ms window: each tone's level is read without leakage from the others.
    static let directHertz = [200, 400, 600, 800, 1000, 1200, 1400, 1600]
    static let capturedHertz = [300, 500, 700, 900, 1100, 1300, 1500, 1700]

    @Test(arguments: PrivateSoundServer.Kind.allCases)
    func capturedAppsHaveNoMoreGapsThanAppsPlayedDirectly(kind: PrivateSoundServer.Kind) throws {
        let server = try PrivateSoundServer(kind)
        defer { server.tearDown() }
        let log = temporaryFile("daemon.log")
        let configHome = server.directory.appendingPathComponent("config-home")
        // The captured tones unspatialized (bit-exact at unity), so each is read at its level.
        try FileManager.default.createDirectory(at: configHome.appendingPathComponent("scenesound"), withIntermediateDirectories: true)
        try "off captured\n".write(to: configHome.appendingPathComponent("scenesound/capture-spatial"), atomically: true, encoding: .utf8)
        let daemon = try ChildProcess(
            BuiltProducts.directory.appendingPathComponent("scenesoundd").path,
            ["--socket", server.directory.appendingPathComponent("ss.sock").path, "--display", "none", "--opentrack", "off",
             "--room", "none", "--capture-apps", "--capture-exclude", "direct"],
            display: nil, errorPath: log.path,
            environment: server.clientEnvironment.merging([
                "XDG_CACHE_HOME": NSTemporaryDirectory() + "scenesound-test-cache", "XDG_CONFIG_HOME": configHome.path,
            ]) { $1 })
        var apps: [ChildProcess] = [], loops: [ChildProcess] = []
        defer {
            apps.forEach { $0.kill() }
            loops.forEach { $0.kill() }
            kill(daemon.pid, SIGTERM)
            _ = waitUntil(timeoutSeconds: 5) { !daemon.isRunning }
            daemon.kill()
            try? FileManager.default.removeItem(at: log)
        }
        func daemonLog() -> String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }
        try #require(waitUntil(timeoutSeconds: 20) { daemonLog().contains("taking other apps' streams") }, "\(daemonLog())")

        // Every file first, then the apps; each file long enough for the wait for the capture
        // and the whole recording.
        let rate = Self.rateHz
        let files = try (Self.directHertz + Self.capturedHertz).map { hertz -> URL in
            let file = temporaryFile("tone\(hertz).wav")
            try TestSignal.writeWAV(TestSignal.tone(hertz: hertz, amplitude: 1600, seconds: Self.seconds + 40, rateHz: rate), channels: 1, to: file)
            return file
        }
        // One at a time, each seen on the server before the next: sixteen clients connecting
        // at once can overrun PulseAudio's queue of connections waiting to be accepted on a
        // busy machine (the rest are refused, and paplay does not try again).
        for (index, file) in files.enumerated() {
            let name = index < Self.directHertz.count ? "direct" : "captured"
            let app = try server.startClient("/usr/bin/paplay", ["--client-name=\(name)", file.path])
            apps.append(app)
            let started = index < Self.directHertz.count ? index + 1 : index + 1 - Self.directHertz.count
            try #require(waitUntil(timeoutSeconds: 10) {
                !app.isRunning || ((try? server.sinkInputs().filter { $0.application == name }.count) ?? 0) >= started
            } && app.isRunning, "\(name) app \(started) did not start playing")
        }
        let socket = server.directory.appendingPathComponent("ss.sock").path
        let appsStarted = MachineStallWatch.nowSeconds()
        var capturedNames: [String] = []
        try #require(waitUntil(timeoutSeconds: 15) {
            capturedNames = ((try? daemonStatus(socket: socket, environment: server.clientEnvironment))?.apps?.streams ?? [])
                .map { $0.application ?? "?" }
            return capturedNames.filter { $0 == "captured" }.count == Self.capturedHertz.count
        }, "not every app is captured: \(capturedNames); the daemon said: \(daemonLog().suffix(3000))")
        print("\(kind): every app captured \(String(format: "%.2f", MachineStallWatch.nowSeconds() - appsStarted)) s after they started")
        // Settled, as CaptureScaleTests settles: the apps started as the daemon's output first
        // woke, which the test's null sink takes up to 2 s late; their backlog trimmed (0.05–0.75 s
        // of each app's start, and once a gap, fell in the measured run) is not what the load is
        // judged by. Not settled while the machine disturbed the wait: said, and measured from there
        // (`settleCapturedStreams`).
        let settleWatch = MachineStallWatch(thresholdSeconds: 0.002)
        let settledSeconds = try settleCapturedStreams("\(kind)", watch: settleWatch) {
            try? daemonStatus(socket: socket, environment: server.clientEnvironment)
        }
        settleWatch.stop()
        if let settledSeconds { print("\(kind): the captured streams settled \(String(format: "%.1f", settledSeconds)) s after all were captured") }
        for _ in 0 ..< 2 { loops.append(try ChildProcess("/bin/sh", ["-c", "while :; do :; done"], display: nil)) }
        // Wakes 2 ms late, as the soak watches: a cycle of 5.3 ms is missed when the host takes
        // a few milliseconds from a thread of the chain, and the captured chain has one more.
        let stallWatch = MachineStallWatch(thresholdSeconds: 0.002)
        defer { stallWatch.stop() }
        let started = MachineStallWatch.nowSeconds()
        let statusBefore = try daemonStatus(socket: socket, environment: server.clientEnvironment)
        let recordingStarted = MachineStallWatch.nowSeconds()
        let spells = DrySpellCollector(status: { [environment = server.clientEnvironment] in
            try? daemonStatus(socket: socket, environment: environment)
        })
        defer { spells.stop() }
        let recordingThreads = try MissedCycles.RecordingThreads.watch(server, daemon: daemon.pid)
        defer { recordingThreads?.watch.stop() }
        let recording = try MonitorRecording(server: server, file: temporaryFile("load.raw"))
        let heard = recording.finish(afterFrames: Int(Self.seconds) * rate, timeoutSeconds: Self.seconds + 15)
        spells.stop()
        recordingThreads?.watch.stop()
        if let recordingThreads {
            print("\(kind): waited for a CPU over the recording: \(recordingThreads.watch.summary)")
        }
        loops.forEach { $0.kill() }
        // Where the captured apps' gaps would come from: the output's underruns (the sound
        // server's record), or a captured stream starved or dropped before the render.
        let status = try daemonStatus(socket: socket, environment: server.clientEnvironment)
        let captured = (status.apps?.streams ?? []).filter { $0.application == "captured" }
        let cycleSeconds = Double(status.output.blockFrames) / status.output.rateHz
        let late = MissedCycles(status.output.recentUnderruns ?? [], blockSeconds: cycleSeconds, watch: stallWatch)
        print("\(kind): recording started \(recordingStarted); output \(status.output.kind) underruns \(status.output.underruns) (of the latest \(late.all.count), \(late.unwatched.count) before the load, \(late.unexplained.count) during it with no stall of the machine\(late.unexplained.isEmpty ? "" : ": " + late.describe(late.unexplained)); overloaded \(status.output.overloadedBlocks ?? -1), slowest \(status.output.slowestBlockCPUSeconds ?? -1) s CPU), latency \(status.output.latencySeconds ?? -1) s; captured streams starved \(captured.map(\.starvedSeconds)) s, dropped \(captured.map(\.droppedSeconds)) s, slipped \(captured.map { $0.slippedSeconds ?? .nan }) s, stretched \(captured.map { $0.stretchedSeconds ?? .nan }) s")

        let windows = heard.count / 2 / Self.windowFrames
        func levels(_ hertz: Int) -> [Double] {
            ToneLevels.perWindow(heard, channelCount: 2, channels: [0], hertz: Double(hertz), rateHz: rate, windowFrames: Self.windowFrames)
        }
        let levelsByHertz = Dictionary(uniqueKeysWithValues: (Self.directHertz + Self.capturedHertz).map { ($0, levels($0)) })
        let medianByHertz = levelsByHertz.mapValues { $0.sorted()[$0.count / 2] }
        // The recording starts where every tone sounds (parec joins the monitor mid-chunk: its
        // first window can hold less of any tone, direct or captured alike).
        let firstWindow = (0 ..< windows).first { w in levelsByHertz.allSatisfy { $0.value[w] >= medianByHertz[$0.key]! / 2 } } ?? 0
        func gapWindows(_ hertz: Int) -> [Int] {
            let levels = levelsByHertz[hertz]!, median = medianByHertz[hertz]!
            // A gap in a window where the machine itself stalled (the stall watch, within 50 ms:
            // the recording's own start and lag are known only that well) is the host's, not
            // the path's; those are counted apart, on both sides alike.
            return (firstWindow ..< windows).filter { w in
                let at = recordingStarted + Double(w) * Double(Self.windowFrames) / Double(rate)
                return levels[w] < median / 2 && stallWatch.stalledSeconds(from: at - 0.05, to: at + 0.06) == 0
            }
        }
        let directWindows = Self.directHertz.map(gapWindows), capturedWindows = Self.capturedHertz.map(gapWindows)
        let directGaps = directWindows.map(\.count), capturedGaps = capturedWindows.map(\.count)
        // When: one moment for every captured app at once is the shared path (the output, the
        // server's thread), moments of their own are each stream's queue.
        let seconds = { (windows: [[Int]]) in
            Set(windows.joined()).sorted().map { String(format: "%.2f", Double($0 * Self.windowFrames) / Double(rate)) }.joined(separator: " ")
        }
        print("\(kind): the captured apps' gaps at [\(seconds(capturedWindows))] s of the recording, the direct ones' at [\(seconds(directWindows))] s")
        // Each captured tone's gaps beside the spells its queue ran dry (the render's clock,
        // which is ahead of the recording by the output's latency): a gap without a spell is
        // lost after the render, one with a spell longer than the concealment's fade is the
        // queue's lateness, one with a short spell is the concealment's.
        for (hertz, gaps) in zip(Self.capturedHertz, capturedWindows) {
            let pid = apps[Self.directHertz.count + Self.capturedHertz.firstIndex(of: hertz)!].pid
            let spellText = spells.seen(pid: Int(pid)).map {
                String(format: "%.2f s %.1f ms", $0.startedMonotonicSeconds - recordingStarted, $0.seconds * 1000)
            }
            print("\(kind): \(hertz) Hz gaps at [\(gaps.map { String(format: "%.2f", Double($0 * Self.windowFrames) / Double(rate)) }.joined(separator: " "))] s, its dry spells at [\(spellText.joined(separator: ", "))]")
        }
        print("""
            \(kind), two busy loops, \(windows) windows of 10 ms: gaps outside the machine's stalls per app played directly \(directGaps) \
            (\(directGaps.reduce(0, +)) in all), captured \(capturedGaps) (\(capturedGaps.reduce(0, +))); \
            \(stallWatch.summary(from: started, to: MachineStallWatch.nowSeconds()))
            """)
        #expect(windows - firstWindow >= Int(Self.seconds) * 95, "the recording's first \(firstWindow) windows lack a tone")
        let noMoreGaps = { #expect(capturedGaps.reduce(0, +) <= directGaps.reduce(0, +), "\(kind): captured \(capturedGaps) against direct \(directGaps)") }
        // Not met on every run yet, on either server (issue 28, item 3, open), and excused only
        // where every captured gap lies at a moment the output underran, not by our render, or
        // the node raised its quantum for, or where its queue ran dry with other apps' in a run
        // the output underran, or where a direct app had one (`excuseForCapturedGaps`): a gap
        // elsewhere is the capture's own, and fails.
        // - PulseAudio: its main thread, not real-time, is late for our recordings and our output
        //   alike. A captured queue run dry is bridged by the stream's own continuation
        //   (`DrySpellConcealer`: the spells are printed beside the gaps), one grown long is
        //   trimmed by whole periods, the two sinks' clocks running apart are followed
        //   (`slipped` above). What is left: the server's main thread late for several of our
        //   recordings at once, their queues dry together while the output underruns too; and
        //   when the host stalls the machine for about 10 ms, the output's 20 ms buffer
        //   underflows and PulseAudio plays silence for our stream, a gap in every captured app
        //   at once, which a direct app's 2 s buffer hides (2 fresh-clone runs of 13). The buffer grows after it (a stretch of each captured stream:
        //   OutputGrowthTests); a bigger one from the start would break the ≈ 20 ms latency.
        // - PipeWire: the driver wakes late, the apps' streams after it and our node after them
        //   end past the next cycle, which goes on without us (docs/CAPTURE.md, "Scale"): the
        //   node's late cycles above, a gap for every captured app at once; the quantum is
        //   raised after it.
        let capturedGapMoments = capturedWindows.enumerated().flatMap { app, windows in
            windows.map { w in
                MissedCycles.Gap(window: w, atMonotonicSeconds: recording.monotonicSeconds(ofFrame: w * Self.windowFrames, rateHz: rate) ?? .nan,
                                 app: app)
            }
        }
        let capturedDrySpells = Dictionary(uniqueKeysWithValues: Self.capturedHertz.indices.map { app in
            (app, spells.seen(pid: Int(apps[Self.directHertz.count + app].pid)).map { ($0.startedMonotonicSeconds, $0.seconds) })
        })
        let excuse = MissedCycles.excuseForCapturedGaps(before: statusBefore.output, after: status.output, watch: stallWatch,
                                                        capturedGaps: capturedGapMoments, windowSeconds: Double(Self.windowFrames) / Double(rate),
                                                        drySpells: capturedDrySpells,
                                                        directGapWindows: Set(directWindows.joined()), recordingThreads: recordingThreads)
        print("\(kind): gaps beyond the direct apps' excused: \(excuse ?? "no")")
        withKnownIssue("\(kind): a gap in every captured app where \(excuse ?? "")", isIntermittent: true) { noMoreGaps() } when: { excuse != nil }
    }
}
