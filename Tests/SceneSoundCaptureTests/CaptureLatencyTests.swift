import Foundation
import SceneSoundProtocol
import SceneSoundPulse
import SceneSoundTestSupport
import Testing

/// App write → real sink, through `scenesoundd --capture-apps`, against the same app playing
/// straight to the sink. The app is this test process playing through libpulse (a
/// PulseOutput with a 20 ms buffer) — to the capture it is just another client. Each click is
/// stamped with CLOCK_MONOTONIC when its block is handed to PulseAudio; the real sink's monitor
/// is recorded by parec and each read stamped as it returns, so a click's arrival is when the
/// read that brought it returned (the recording hop only makes it later).
@Suite(.serialized) struct CaptureLatencyTests {
    static let rateHz = 48_000
    static let clickPeriodFrames = 14_400  // 300 ms
    static let clickFrames = 96            // 2 ms

    /// Plays clicks through libpulse, remembering when each was handed over.
    final class ClickingApp: @unchecked Sendable {
        private let lock = NSLock()
        private var frame = 0
        private var stamps: [Double] = []
        let output: PulseOutput

        init(server: PrivateSoundServer) {
            output = PulseOutput(configuration: .init(streamName: "clicks", serverAddress: server.serverAddress)) { _ in }
        }

        func start() throws {
            try output.start { [self] buffer, frames in
                let now = monotonicSeconds()
                for index in 0 ..< frames {
                    let phase = (frame + index) % CaptureLatencyTests.clickPeriodFrames
                    let value: Float = phase < CaptureLatencyTests.clickFrames ? 0.5 : 0
                    buffer[2 * index] = value
                    buffer[2 * index + 1] = value
                    if phase == 0 {
                        lock.lock()
                        stamps.append(now + Double(index) / Double(CaptureLatencyTests.rateHz))
                        lock.unlock()
                    }
                }
                frame += frames
            }
        }

        var clickTimes: [Double] {
            lock.lock()
            defer { lock.unlock() }
            return stamps
        }
    }

    /// parec on the real sink's monitor, every read stamped.
    final class StampedRecording: @unchecked Sendable {
        private let process = Process()
        private let lock = NSLock()
        private var samples: [Float] = []
        private var reads: [(endFrame: Int, seconds: Double)] = []
        private var reader: Thread?

        init(server: PrivateSoundServer) throws {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/parec")
            process.arguments = ["--server=\(server.serverAddress)", "--device=\(PrivateSoundServer.sinkName).monitor", "--property=node.dont-reconnect=true",
                                 "--format=float32le", "--channels=1", "--rate=48000", "--raw", "--latency-msec=5"]
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = FileHandle.nullDevice
            try process.run()
            let handle = pipe.fileHandleForReading
            let thread = Thread { [self] in
                var pending = Data()
                while true {
                    let data = handle.availableData
                    let now = monotonicSeconds()
                    if data.isEmpty { return }
                    pending.append(data)
                    let usable = pending.count - pending.count % 4
                    let floats = pending.prefix(usable).withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
                    pending.removeFirst(usable)
                    lock.lock()
                    samples += floats
                    reads.append((samples.count, now))
                    lock.unlock()
                }
            }
            reader = thread
            thread.start()
        }

        /// Arrival times of the clicks' onsets.
        func onsetTimes() -> [Double] {
            lock.lock()
            defer { lock.unlock() }
            var onsets: [Double] = []
            var index = 0
            while index < samples.count {
                if abs(samples[index]) > 0.05 {
                    if let read = reads.first(where: { $0.endFrame > index }) { onsets.append(read.seconds) }
                    index += CaptureLatencyTests.clickPeriodFrames / 2
                } else {
                    index += 1
                }
            }
            return onsets
        }

        func stop() {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
    }

    /// Each click's delay: its write matched to the first onset after it.
    static func delays(writes: [Double], arrivals: [Double]) -> [Double] {
        writes.compactMap { write in arrivals.first { $0 > write && $0 - write < 0.25 }.map { $0 - write } }
    }

    /// `sample` runs every half second while the clicks play. Says how the app's own buffer
    /// fared (it grows after an underflow, as any PulseOutput's does).
    static func measure(_ server: PrivateSoundServer, seconds: Double, sample: () -> Void = {}) throws -> [Double] {
        let recording = try StampedRecording(server: server)
        let app = ClickingApp(server: server)
        try app.start()
        let end = monotonicSeconds() + seconds
        while monotonicSeconds() < end {
            sample()
            Thread.sleep(forTimeInterval: min(0.5, max(0, end - monotonicSeconds())))  // the measurement's length
        }
        print(String(format: "\(server.kind): the clicking app underflowed %d times, its buffer %.0f ms", app.output.underrunCount,
                     (app.output.bufferTargetSeconds ?? .nan) * 1000))
        app.output.stop()
        _ = waitUntil(timeoutSeconds: 1) { recording.onsetTimes().count >= app.clickTimes.count }
        recording.stop()
        // The first second settles the buffers; it is left out.
        let writes = app.clickTimes.dropFirst(3)
        return delays(writes: Array(writes), arrivals: recording.onsetTimes())
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? .nan : sorted[sorted.count / 2]
    }

    static func milliseconds(_ values: [Double], of what: String = "clicks") -> String {
        let sorted = values.sorted()
        guard let first = sorted.first, let last = sorted.last else { return "none" }
        return String(format: "%.1f / %.1f / %.1f ms (min / median / max, %d \(what))", first * 1000, median(values) * 1000, last * 1000, values.count)
    }

    @Test(arguments: PrivateSoundServer.Kind.allCases)
    func anAppsWriteReachesTheSinkWithinFiftyMilliseconds(kind: PrivateSoundServer.Kind) throws {
        let server = try PrivateSoundServer(kind)
        defer { server.tearDown() }
        if kind == .pipeWire {
            // Both paths at one quantum, SceneSound's (256 frames): its node asks the graph for
            // one block, and the app's own path, linked with it, then runs at that quantum too —
            // an app played straight to the sink before the daemon started ran at the larger one
            // its 20 ms buffer asked for, and the captured path measured 6 ms faster than it.
            try server.pipeWireTool("pw-metadata", ["-n", "settings", "0", "clock.force-quantum", "256"])
        }
        // On PipeWire the direct path is measured twice, each with a new stream of the app, and the
        // faster taken (the stricter bar for the capture): once in ~30 fresh-clone runs its one
        // stream measured 30.6 ms where every other measured 19.9–20.0, two quanta more (its
        // queue in pipewire-pulse set up before the forced quantum reached it), and the capture
        // then read as 9 ms faster than playing directly.
        // A take of the direct path the machine disturbed (a stall long enough to underrun the
        // app — its buffer then doubles: 23 ms measured where 16 is usual — or the host's steal)
        // is taken again (`MachineStallWatch.takeTrials`).
        // A direct path disturbed in every trial (ci67, ci69: the app underflowed and its buffer
        // doubled, 24 ms where 14 is usual) is no baseline: the captured trial's bars against it
        // are then said and recorded as a known issue; its own bars are judged as ever.
        func measureDirect() throws -> (clicks: [Double], disturbed: Bool) {
            var clicks: [Double] = []
            let disturbed = try MachineStallWatch.takeTrials("\(kind): the clicks played directly") { _ in
                try Self.measure(server, seconds: 4)
            } judge: { clicks = $0 }
            return (clicks, disturbed)
        }
        let (direct, directDisturbed) = try kind == .pipeWire
            ? [measureDirect(), measureDirect()].min { Self.median($0.clicks) < Self.median($1.clicks) }!
            : measureDirect()
        /// The judged captured trial's bars against the direct path, when that was disturbed.
        var againstDisturbedDirect: [(holds: Bool, message: String)] = []

        // A trial the machine disturbed measures the host (on PulseAudio the output's buffer
        // then doubles for the minute after: a fresh-clone run measured 59 ms after a 20 → 40 ms
        // growth): taken again, with a new daemon; the bars stay as they are (`takeTrials`).
        struct Taken {
            let captured: [Double], reported: [Double], outputLatencies: [Double], shortfall: [Substring]
            /// The captured stream's dry spells (`status`), each once.
            let drySpells: [StatusDocument.DrySpell]
            /// How often the daemon's output underran over the trial (`status`).
            let outputUnderruns: Int
        }
        /// The trial's figures and bars (`MeasuredTrial`), and whether it measured the host.
        func measured(_ taken: Taken, watch: MachineStallWatch) -> MeasuredTrial {
            var trial = MeasuredTrial()
            againstDisturbedDirect = []
            func expectAgainstDirect(_ holds: Bool, _ message: String) {
                if directDisturbed { againstDisturbedDirect.append((holds, message)) } else { trial.expect(holds, message) }
            }
            let (captured, reported) = (taken.captured, taken.reported)
            // A captured stream that ran dry grows its queue's margin by what was missing (by
            // design: fewer gaps, `CapturedAppStreams.Feed`), and every later click is late by
            // that: a fresh-clone run on 1 Dec 2026 measured 52 ms on PulseAudio with no stall
            // over 10 ms. A trial whose stream ran dry only at the machine's stalls (over 2 ms,
            // within 50 ms before) measured the host; one dry spell elsewhere, the product.
            // Likewise the output: underrun, its buffer grows (on PulseAudio 20 → 40 ms, for the
            // minute after), and every later click is late by that — a fresh-clone run measured
            // 53 ms so, the output's latency 19 → 29 ms, with stalls of the machine up to 4.6 ms
            // and 2.8 % steal. Neither output keeps the time of each underrun where this reads
            // it, so a trial whose output underran while the machine stalled (over 2 ms) at all
            // is the host's; one whose output underran on a still machine, the product's.
            let spells = taken.drySpells
            if taken.outputUnderruns > 0, !watch.stalls.isEmpty {
                trial.disturbance = "the output underran \(taken.outputUnderruns) time(s) while the machine stalled (\(watch.stalls.count) stalls over 2 ms)"
            } else if !spells.isEmpty, spells.allSatisfy({ spell in
                !watch.stalls(from: spell.startedMonotonicSeconds - 0.05, to: spell.startedMonotonicSeconds + spell.seconds).isEmpty
            }) {
                trial.disturbance = "the captured stream ran dry \(spells.count) time(s), each at a stall of the machine"
            }
            trial.print("\(kind): \(taken.shortfall.map { $0.split(separator: "]").last ?? "" })")
            trial.print("\(kind): app write → sink, direct: \(Self.milliseconds(direct)); through --capture-apps: \(Self.milliseconds(captured)); "
                        + "the captured stream ran dry \(spells.count) time(s); the output underran \(taken.outputUnderruns) time(s)")
            guard captured.count >= 10, reported.count >= 8 else {
                return trial.failing("\(captured.count) clicks measured through the capture (10 at least), \(reported.count) reports sampled (8 at least)")
            }
            let measuredAdded = Self.median(captured) - Self.median(direct)
            trial.print(String(format: "\(kind): the capture adds %.1f ms measured (median against median); reported %@; output latency reported %@",
                               measuredAdded * 1000, Self.milliseconds(reported, of: "samples"), Self.milliseconds(taken.outputLatencies, of: "samples")))
            // The figure the daemon reports is what a user reads in `scenesound apps`: within
            // 8 ms of the measured difference (a block and a half; the medians of a few clicks
            // and samples, on a busy machine, differ by 0-8 ms here).
            expectAgainstDirect(abs(Self.median(reported) - measuredAdded) <= 0.008,
                                "reported \(Self.median(reported) * 1000) ms against \(measuredAdded * 1000) ms measured")
            expectAgainstDirect(Self.median(captured) > Self.median(direct), "the capture cannot be faster than the direct path")
            if kind == .pulseAudio {
                trial.expect(Self.median(captured) <= 0.050, "median \(Self.median(captured) * 1000) ms")
            } else {
                // Linked into SceneSound's node, the app is rendered in the cycle it plays: at most
                // one quantum (256 frames, 5.3 ms) later than played straight to the sink.
                expectAgainstDirect(measuredAdded <= 0.006, "the capture adds \(measuredAdded * 1000) ms on PipeWire")
            }
            return trial
        }
        try MachineStallWatch.takeMeasuredTrials("\(kind): an app's write through --capture-apps") { watch in
            let log = temporaryFile("daemon.log")
            let daemon = try ChildProcess(
                BuiltProducts.directory.appendingPathComponent("scenesoundd").path,
                // Each server's default output: on PipeWire SceneSound's own node of the graph,
                // which the captured apps are linked into.
                ["--socket", server.directory.appendingPathComponent("ss.sock").path, "--output", kind == .pipeWire ? "pipewire" : "pulse",
                 "--display", "none", "--opentrack", "off", "--room", "none", "--capture-apps"],
                display: nil, errorPath: log.path,
                environment: server.clientEnvironment.merging(["XDG_CACHE_HOME": NSTemporaryDirectory() + "scenesound-test-cache"]) { $1 })
            defer {
                kill(daemon.pid, SIGTERM)
                _ = waitUntil(timeoutSeconds: 5) { !daemon.isRunning }
                daemon.kill()
                try? FileManager.default.removeItem(at: log)
            }
            #expect(waitUntil(timeoutSeconds: 20) {
                ((try? String(contentsOf: log, encoding: .utf8)) ?? "").contains("taking other apps' streams")
            })
            // What the daemon says the capture adds, sampled while the clicks play, once the
            // stream's queue has been trimmed to its level (it is, from 1.5 s on).
            let socket = server.directory.appendingPathComponent("ss.sock").path
            let environment = server.clientEnvironment
            var reported: [Double] = [], outputLatencies: [Double] = [], drySpells: [StatusDocument.DrySpell] = [], outputUnderruns = 0
            func measureCaptured() throws -> [Double] {
                reported = []
                outputLatencies = []
                drySpells = []
                let sampleStart = monotonicSeconds() + 2
                return try Self.measure(server, seconds: 8) {
                    guard monotonicSeconds() > sampleStart,
                          let status = try? daemonStatus(socket: socket, environment: environment) else { return }
                    if let added = status.apps?.streams.first?.addedLatencySeconds {  // the clicking app is the only one
                        reported.append(added)
                    }
                    drySpells += (status.apps?.streams.first?.recentDrySpells ?? []).filter { !drySpells.contains($0) }
                    if let output = status.output.latencySeconds { outputLatencies.append(output) }
                    outputUnderruns = status.output.underruns
                }
            }
            var captured = try measureCaptured()
            if kind == .pipeWire, Self.median(captured) < Self.median(direct) {
                // Faster than the direct path, which no capture can be at the same quantum: the two
                // runs did not measure the app alike (its quantum or its queue in pipewire-pulse; 2
                // fresh-clone runs in 14: 13.4 ms against 20.0 direct, where the others measured
                // 21.3). Once more with a new stream of it; faster again fails below.
                print("\(kind): through --capture-apps \(Self.milliseconds(captured)), faster than direct: measured again")
                captured = try measureCaptured()
            }
            _ = waitUntil(timeoutSeconds: 5) { ((try? String(contentsOf: log, encoding: .utf8)) ?? "").contains("frames received") }
            let shortfall = ((try? String(contentsOf: log, encoding: .utf8)) ?? "").split(separator: "\n").filter { $0.contains("frames received") }
            return measured(Taken(captured: captured, reported: reported, outputLatencies: outputLatencies, shortfall: shortfall,
                                  drySpells: drySpells, outputUnderruns: outputUnderruns), watch: watch)
        }
        for (holds, message) in againstDisturbedDirect where !holds {
            print("\(kind): \(message): against a direct path disturbed in every trial; a known issue")
            withKnownIssue("\(kind): judged against a direct path disturbed in every trial", isIntermittent: true) {
                #expect(holds, Comment(rawValue: message))
            }
        }
    }
}

func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}
