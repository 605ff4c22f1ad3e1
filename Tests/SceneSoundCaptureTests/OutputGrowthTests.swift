import Foundation
import SceneSoundProtocol
import SceneSoundTestSupport
import Testing

/// On PulseAudio the output's buffer grows after an underflow (20 → 40 → 80 ms), and the
/// server asks for the growth at once. Taken out of the captured apps' queues, it ran every one
/// of them dry together (35–45 ms each, a gap in every captured app, CaptureScaleTests' shared
/// event); now each gives it as a stretch of its continuation (`RingInput.stretch`; what that
/// costs a stream is measured by RingInputTests). The whole server is frozen for 60 ms three
/// times, 2.5 s apart (growth is allowed once a second), while four captured apps play tones:
/// every app's `stretched_seconds` must hold the growth. The starved time is printed, not
/// judged: the freezes' own lateness (the recordings delivered after the output's request)
/// was 0–14.5 ms a stream over the three in eight runs here and 34 ms in a fresh-clone run,
/// against 72–99 ms with the stretch disabled. A take whose output had already grown before
/// the freezes (the machine underflowed it while the apps started) is taken again
/// (`MachineStallWatch.takeTrials`): its growths are the machine's, smaller or none at all.
@Suite(.serialized) struct OutputGrowthTests {
    static let hertz = [300, 700, 1100, 2900]
    static let stalls = 3, stallSeconds = 0.060

    /// One take: the apps captured and settled, the server frozen; what status said before and
    /// after the freezes.
    struct Take {
        var before: StatusDocument, after: StatusDocument
        var frozenFromSeconds: Double

        /// The captured streams in one order (by the apps' PIDs).
        static func streams(_ document: StatusDocument) -> [StatusDocument.AppStream] {
            (document.apps?.streams ?? []).sorted { ($0.pid ?? 0) < ($1.pid ?? 0) }
        }
        var underruns: Int { after.output.underruns - before.output.underruns }
        /// Over the freezes, per stream, in ms.
        var stretchedMilliseconds: [Double] {
            zip(Self.streams(after), Self.streams(before)).map { (($0.stretchedSeconds ?? 0) - ($1.stretchedSeconds ?? 0)) * 1000 }
        }
        var starvedMilliseconds: [Double] {
            zip(Self.streams(after), Self.streams(before)).map { ($0.starvedSeconds - $1.starvedSeconds) * 1000 }
        }
        /// The output's buffer grew before the first freeze (the machine underflowed it while
        /// the apps started): the growths the freezes were to cause come smaller or not at all
        /// (at 160 ms it grows no more), so the take measured the machine's event, not ours.
        var grewBeforeTheFreezes: String? {
            let latency = before.output.latencySeconds ?? 0
            return latency > 0.035 ? String(format: "the output's buffer had grown before the freezes (latency %.0f ms)", latency * 1000) : nil
        }
    }

    @Test func theOutputsGrowthAfterAnUnderflowIsAStretchInEveryCapturedApp() throws {
        // A busy machine only underflows the output more; what it can spoil is the start.
        try MachineStallWatch.takeTrials("output growth", onlyAsFound: true, take: { _ in try Self.take() },
                                         alsoDisturbed: { taken, _ in taken.grewBeforeTheFreezes }) { taken in
            let spells = Take.streams(taken.after).map { stream in
                (stream.recentDrySpells ?? []).filter { $0.startedMonotonicSeconds >= taken.frozenFromSeconds - 0.01 }.map { $0.seconds * 1000 }
            }
            let stretched = taken.stretchedMilliseconds
            print(String(format: "%d freezes of PulseAudio (%.0f ms): output underruns %d, its latency %.0f → %.0f ms; captured streams stretched %@ ms, starved %@ ms meanwhile",
                         Self.stalls, Self.stallSeconds * 1000, taken.underruns, (taken.before.output.latencySeconds ?? 0) * 1000,
                         (taken.after.output.latencySeconds ?? 0) * 1000, stretched.map { String(format: "%.1f", $0) }.joined(separator: ", "),
                         taken.starvedMilliseconds.map { String(format: "%.1f", $0) }.joined(separator: ", ")))
            print("dry spells per stream since the first freeze: \(spells.map { $0.map { String(format: "%.1f", $0) } }) ms")
            #expect(taken.underruns >= 2, "the freezes underflowed the output (the event this is about)")
            #expect((taken.after.output.latencySeconds ?? 0) > 0.035, "the output's buffer grew")
            // At least one growth (20 → 40 ms: 960 frames, stretched as four blocks of 256) in every
            // captured app.
            #expect(stretched.count == Self.hertz.count && stretched.allSatisfy { $0 >= 20 }, "stretched \(stretched) ms")
        }
    }

    static func take() throws -> Take {
        let server = try PrivateSoundServer(.pulseAudio)
        defer { server.tearDown() }
        let log = temporaryFile("daemon.log")
        let socket = server.directory.appendingPathComponent("ss.sock").path
        let daemon = try ChildProcess(
            BuiltProducts.directory.appendingPathComponent("scenesoundd").path,
            ["--socket", socket, "--display", "none", "--opentrack", "off", "--room", "none", "--capture-apps"],
            display: nil, errorPath: log.path,
            environment: server.clientEnvironment.merging(["XDG_CACHE_HOME": NSTemporaryDirectory() + "scenesound-test-cache"]) { $1 })
        var apps: [ChildProcess] = []
        defer {
            apps.forEach { $0.kill() }
            kill(daemon.pid, SIGTERM)
            _ = waitUntil(timeoutSeconds: 5) { !daemon.isRunning }
            daemon.kill()
            try? FileManager.default.removeItem(at: log)
        }
        func daemonLog() -> String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }
        func status() -> StatusDocument? { try? daemonStatus(socket: socket, environment: server.clientEnvironment) }
        try #require(waitUntil(timeoutSeconds: 20) { daemonLog().contains("taking other apps' streams") }, "\(daemonLog())")
        for hertz in Self.hertz {
            let file = temporaryFile("tone\(hertz).wav")
            try TestSignal.writeWAV(TestSignal.tone(hertz: hertz, amplitude: 1600, seconds: 60, rateHz: 48_000), channels: 1, to: file)
            apps.append(try server.startClient("/usr/bin/paplay", [file.path]))
        }
        try #require(waitUntil(timeoutSeconds: 15) { (status()?.apps?.streams ?? []).count == Self.hertz.count },
                     "not every app is captured: \(daemonLog().suffix(3000))")
        let settleWatch = MachineStallWatch(thresholdSeconds: 0.002)
        defer { settleWatch.stop() }
        _ = try settleCapturedStreams("output growth", watch: settleWatch, status: status)

        let before = try #require(status())
        let frozenFrom = MachineStallWatch.nowSeconds()
        for _ in 0 ..< Self.stalls {
            server.freeze(seconds: Self.stallSeconds)
            Thread.sleep(forTimeInterval: 2.5)
        }
        let after = try #require(status())
        return Take(before: before, after: after, frozenFromSeconds: frozenFrom)
    }
}
