import SceneSoundTestSupport
import Foundation
import Synchronization
import Testing
@testable import SceneSoundPulse

/// Against real PulseAudio servers (scripts/testenv), one at a time: they share two cores
/// with the build, and parallel servers would only add scheduling noise to the audio.
@Suite(.serialized) struct PulseOutputPlaybackTests {
    static let rateHz = PrivatePulseServer.rateHz
    static let toneHz = 1_000.0
    static let leftAmplitude: Float = 0.5
    static let rightAmplitude: Float = 0.25
    /// 0.4 s = a whole number of periods of the tone, so the Goertzel sees no leakage.
    static let analysedFrames = 19_200
    static let timeoutSeconds = 5.0

    static func configuration(for server: PrivatePulseServer, sinkName: String? = PrivatePulseServer.sinkName)
        -> PulseOutput.Configuration
    {
        PulseOutput.Configuration(
            sinkName: sinkName, rateHz: rateHz, blockFrames: 256, targetLatencySeconds: 0.020,
            applicationName: "SceneSoundPulseTests", streamName: "1 kHz test tone",
            serverAddress: server.serverAddress)
    }

    /// Records what reached the server's sink and checks it is our tone, at our levels. A
    /// recording during which our stream underran (the server played silence for it, an event
    /// the output counts and reports) is taken once more: judged here is what the stream
    /// carries; underruns have their own bars (SoakTests, EndToEndLatencyTests). In fresh-clone
    /// CI runs, right after the build, the first server's stream underran once in a few runs
    /// and the recording held the hole (a tone 8 Hz low); ci57 had it underrun in two in a row
    /// on a host stealing up to 19 %. Three at most; the third underrun too while the machine
    /// disturbed it, its checks are a known issue, said; on a still machine they are judged.
    static func expectToneReachesSink(of server: PrivatePulseServer, label: String, output: PulseOutput) throws {
        let expectedLeftRMS = Double(leftAmplitude) / 2.squareRoot()
        let expectedRightRMS = Double(rightAmplitude) / 2.squareRoot()
        for attempt in 1 ... 3 {
            let watch = MachineStallWatch(thresholdSeconds: 0.002)
            defer { watch.stop() }
            let underrunsBefore = output.underrunCount
            let file = server.directory.appendingPathComponent("recording-\(label)-\(attempt).raw")
            let recorder = try SinkRecorder(serverAddress: server.serverAddress, file: file)
            let recorded = try #require(
                recorder.record(frameCount: analysedFrames, timeoutSeconds: timeoutSeconds),
                "parec recorded nothing from \(label)")
            let underranDuringIt = output.underrunCount > underrunsBefore

            let left = ChannelAnalysis(interleaved: recorded, channel: 0, rateHz: rateHz)
            let right = ChannelAnalysis(interleaved: recorded, channel: 1, rateHz: rateHz)
            let leftTone = left.toneAmplitude(atFrequencyHz: toneHz)
            print("""
                [\(label)] left RMS \(left.rms) (expected \(expectedLeftRMS)), right RMS \(right.rms) \
                (expected \(expectedRightRMS)), frequency \(left.zeroCrossingFrequencyHz) Hz, \
                1 kHz amplitude \(leftTone) (expected \(leftAmplitude))\(underranDuringIt ? ", the stream underran meanwhile" : "")
                """)
            let checks = [
                (abs(left.rms / expectedLeftRMS - 1) < 0.05, "left level off on \(label): RMS \(left.rms), expected \(expectedLeftRMS)"),
                (abs(right.rms / expectedRightRMS - 1) < 0.05, "right level off on \(label): RMS \(right.rms), expected \(expectedRightRMS)"),
                (abs(left.zeroCrossingFrequencyHz - toneHz) < 2, "frequency off on \(label): \(left.zeroCrossingFrequencyHz) Hz"),
                // A dropout or a phase jump inside the window would pull this well below the amplitude.
                (abs(leftTone / Double(leftAmplitude) - 1) < 0.05, "tone not clean on \(label): 1 kHz amplitude \(leftTone), expected \(leftAmplitude)"),
            ]
            if attempt < 3, underranDuringIt, checks.contains(where: { !$0.0 }) { continue }
            watch.stop()
            let judge = { for (holds, message) in checks { #expect(holds, Comment(rawValue: message)) } }
            if underranDuringIt, checks.contains(where: { !$0.0 }), let why = watch.disturbance() {
                print("[\(label)] the stream underran in every recording, the last while \(why): a known issue")
                withKnownIssue("[\(label)] underran in every recording, the last while \(why)", isIntermittent: true) { judge() }
            } else {
                judge()
            }
            return
        }
    }

    static func expectLatencyReported(by output: PulseOutput, label: String) {
        let reported = waitUntil(timeoutSeconds: timeoutSeconds) { output.measuredLatencySeconds != nil }
        #expect(reported, "no measured latency on \(label)")
        guard let latency = output.measuredLatencySeconds else { return }
        print("[\(label)] measured output latency \(latency * 1000) ms, underruns \(output.underrunCount)")
        #expect(latency > 0 && latency < 0.060, "latency \(latency) s on \(label)")
    }

    /// A private server (not started yet), an output to its sink, and the test tone.
    struct ToneSetup {
        let directory: URL
        let server: PrivatePulseServer
        let events = EventLog()
        let output: PulseOutput
        let tone = SineSource(frequencyHz: PulseOutputPlaybackTests.toneHz, leftAmplitude: PulseOutputPlaybackTests.leftAmplitude,
                              rightAmplitude: PulseOutputPlaybackTests.rightAmplitude, rateHz: PulseOutputPlaybackTests.rateHz)

        init() throws {
            directory = try makeShortTemporaryDirectory(prefix: "ssp")
            server = PrivatePulseServer(directory: directory)
            output = PulseOutput(configuration: PulseOutputPlaybackTests.configuration(for: server), events: events.append)
        }

        func tearDown() {
            output.stop()
            server.stopAll()
            try? FileManager.default.removeItem(at: directory)
        }
    }

    @Test func playsAToneAndGoesOnAfterTheServerIsKilledAndRestarted() throws {
        let setup = try ToneSetup()
        let (server, events, output, tone) = (setup.server, setup.events, setup.output, setup.tone)
        defer { setup.tearDown() }

        try server.start()
        try output.start(render: { tone.render($0, frameCount: $1) })
        #expect(events.wait(timeoutSeconds: Self.timeoutSeconds) { $0.contains(.connected(sinkName: "out")) })
        // Recorded once the stream's timing is known (its first latency measured), not from
        // its first moment: in one CI run right after the build, the stream's start underran
        // once and the recording that began with it held the gap.
        Self.expectLatencyReported(by: output, label: "first server")
        try Self.expectToneReachesSink(of: server, label: "first server", output: output)

        // The crash: no goodbye from the server, the socket file stays behind.
        try server.killCurrent()
        #expect(events.wait(timeoutSeconds: Self.timeoutSeconds) { $0.contains { $0.isDisconnected } })
        try server.start()
        #expect(events.wait(timeoutSeconds: Self.timeoutSeconds) { $0.count { $0.isConnected } == 2 })
        #expect(output.reconnectCount == 1)
        #expect(events.count { $0.isReconnecting } >= 1)
        #expect(events.count { $0.isDisconnected } == 1, "one outage, reported once: \(events.events)")

        try Self.expectToneReachesSink(of: server, label: "restarted server", output: output)
        Self.expectLatencyReported(by: output, label: "restarted server")

        output.stop()
        let blocksAtStop = tone.renderedBlocks
        output.stop()  // idempotent
        #expect(output.measuredLatencySeconds == nil)
        #expect(tone.renderedBlocks == blocksAtStop, "render called after stop()")
    }

    /// A render held up for 100 ms (a busy machine) underflows the stream: its buffer doubles
    /// (20 → 40 ms) and the output says by how many frames at once, on the thread that renders,
    /// so that the engine's captured streams give them as a stretch (`RingInput.stretch`).
    @Test func anUnderflowGrowsTheBufferAndSaysByHowMuch() throws {
        let setup = try ToneSetup()
        let (server, output, tone) = (setup.server, setup.output, setup.tone)
        defer { setup.tearDown() }
        let growths = Mutex<[Int]>([])
        let stallAtBlock = Atomic<Int>(Int.max)
        try server.start()
        try output.start(renderChannels: { buffer, frames, _ in
            tone.render(buffer, frameCount: frames)
            if tone.renderedBlocks == stallAtBlock.load(ordering: .relaxed) { usleep(100_000) }
        }, bufferGrew: { frames in growths.withLock { $0.append(frames) } })
        Self.expectLatencyReported(by: output, label: "before the stall")
        #expect(growths.withLock { $0 }.isEmpty, "no growth before an underflow: \(growths.withLock { $0 })")
        let underrunsBefore = output.underrunCount, stallArmedSeconds = MachineStallWatch.nowSeconds()
        stallAtBlock.store(tone.renderedBlocks + 20, ordering: .relaxed)
        let grew = waitUntil(timeoutSeconds: Self.timeoutSeconds) { !growths.withLock { $0 }.isEmpty }
        print("after a 100 ms stall: underruns \(output.underrunCount), the buffer grew by \(growths.withLock { $0 }) frames")
        #expect(grew && output.underrunCount >= 1)
        // Each underflow's moment is kept (status's `recent_underflows_at_monotonic_seconds`),
        // newest first: the ones since the stall was armed, and none before it.
        let moments = output.recentUnderrunsAtMonotonicSeconds, now = MachineStallWatch.nowSeconds()
        let sinceStall = moments.filter { $0 >= stallArmedSeconds && $0 <= now }
        #expect(sinceStall.count == min(8, output.underrunCount - underrunsBefore) && moments == moments.sorted(by: >),
                "underflows at \(moments), the stall armed at \(stallArmedSeconds), now \(now)")
        #expect(growths.withLock { $0 }.first == Int(0.020 * Double(Self.rateHz)), "20 ms more, once")
    }

    @Test func keepsRetryingUntilAServerAppears() throws {
        let directory = try makeShortTemporaryDirectory(prefix: "ssp")
        let server = PrivatePulseServer(directory: directory)
        let events = EventLog()
        let output = PulseOutput(configuration: Self.configuration(for: server), events: events.append)
        defer {
            output.stop()
            server.stopAll()
            try? FileManager.default.removeItem(at: directory)
        }

        try output.start(render: { buffer, frames in buffer.update(repeating: 0, count: frames * 2) })
        #expect(events.wait(timeoutSeconds: Self.timeoutSeconds) { $0.count { $0.isReconnecting } >= 2 })
        #expect(events.events.first?.isDisconnected == true, "\(events.events)")
        try server.start()
        #expect(events.wait(timeoutSeconds: Self.timeoutSeconds) { $0.contains { $0.isConnected } })
        #expect(output.reconnectCount == 0, "never played before, so not a reconnection")
    }

    @Test func unknownSinkIsReportedWithTheSinksThatExist() throws {
        let directory = try makeShortTemporaryDirectory(prefix: "ssp")
        let server = PrivatePulseServer(directory: directory)
        let events = EventLog()
        let output = PulseOutput(
            configuration: Self.configuration(for: server, sinkName: "no-such-sink"), events: events.append)
        defer {
            output.stop()
            server.stopAll()
            try? FileManager.default.removeItem(at: directory)
        }

        try server.start()
        try output.start(render: { buffer, frames in buffer.update(repeating: 0, count: frames * 2) })
        #expect(events.wait(timeoutSeconds: Self.timeoutSeconds) { $0.contains { $0.failureMessage != nil } })
        let message = try #require(events.events.compactMap(\.failureMessage).first)
        #expect(message.contains("\"no-such-sink\"") && message.contains("available sinks: out"), "\(message)")
        // Retries go on (the sink may appear later) without repeating the report.
        #expect(events.wait(timeoutSeconds: Self.timeoutSeconds) { $0.count { $0.isReconnecting } >= 2 })
        #expect(events.count { $0.failureMessage != nil } == 1)
    }

    @Test func stopFromTheEventHandlerOnThePulseThread() throws {
        let directory = try makeShortTemporaryDirectory(prefix: "ssp")
        let server = PrivatePulseServer(directory: directory)
        let events = EventLog()
        let outputBox = OutputBox()
        let output = PulseOutput(configuration: Self.configuration(for: server)) { event in
            events.append(event)
            if event.isConnected { outputBox.output?.stop() }
        }
        outputBox.output = output
        defer {
            output.stop()
            server.stopAll()
            try? FileManager.default.removeItem(at: directory)
        }

        try server.start()
        try output.start(render: { buffer, frames in buffer.update(repeating: 0, count: frames * 2) })
        #expect(events.wait(timeoutSeconds: Self.timeoutSeconds) { $0.contains { $0.isConnected } })
        output.stop()  // joins the thread that stopped itself
        // After stop the output can start again.
        try output.start(render: { buffer, frames in buffer.update(repeating: 0, count: frames * 2) })
        #expect(events.wait(timeoutSeconds: Self.timeoutSeconds) { $0.count { $0.isConnected } == 2 })
        outputBox.output = nil
    }
}

/// Lets an event handler reach the output it belongs to (created after the handler).
final class OutputBox: @unchecked Sendable {
    weak var output: PulseOutput?
}

/// `pin(toSink:)`: the app capture makes its own sink the default, and the mix must not follow
/// it there. PulseAudio moves every stream without a sink of its own choosing to a new default.
@Suite(.serialized) struct PinnedOutputTests {
    @discardableResult
    func pactl(_ server: PrivatePulseServer, _ arguments: [String]) throws -> String {
        try runHelper(URL(fileURLWithPath: "/usr/bin/env"),
                      ["PULSE_COOKIE=\(server.directory.path)/cookie", "/usr/bin/pactl", "--server=\(server.serverAddress)"] + arguments)
    }

    /// Application name → the name of the sink its stream plays on.
    func sinksOfStreams(_ server: PrivatePulseServer) throws -> [String: String] {
        let parse = { (text: String) in (try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]]) ?? [] }
        let sinks = Dictionary(uniqueKeysWithValues: parse(try pactl(server, ["-f", "json", "list", "sinks"])).compactMap { sink in
            (sink["index"] as? Int).flatMap { index in (sink["name"] as? String).map { (index, $0) } }
        })
        return Dictionary(parse(try pactl(server, ["-f", "json", "list", "sink-inputs"])).compactMap { input in
            guard let sink = input["sink"] as? Int, let name = (input["properties"] as? [String: Any])?["application.name"] as? String
            else { return nil }
            return (name, sinks[sink] ?? "?")
        }) { first, _ in first }
    }

    @Test func aPinnedOutputStaysOnItsSinkWhenTheDefaultChanges() throws {
        let directory = try makeShortTemporaryDirectory(prefix: "ssp")
        let server = PrivatePulseServer(directory: directory)
        try server.start()
        func output(_ name: String) -> (PulseOutput, EventLog) {
            var configuration = PulseOutputPlaybackTests.configuration(for: server, sinkName: nil)
            configuration.applicationName = name
            let events = EventLog()
            return (PulseOutput(configuration: configuration, events: events.append), events)
        }
        let (pinned, pinnedEvents) = output("pinned"), (control, _) = output("control")
        defer {
            pinned.stop()
            control.stop()
            server.stopAll()
            try? FileManager.default.removeItem(at: directory)
        }
        try pactl(server, ["load-module", "module-null-sink", "sink_name=other", "rate=48000"])
        let silence: (UnsafeMutablePointer<Float>, Int) -> Void = { buffer, frames in buffer.update(repeating: 0, count: frames * 2) }
        try pinned.start(render: silence)
        try control.start(render: silence)
        #expect(pinnedEvents.wait(timeoutSeconds: 5) { $0.contains { $0.isConnected } })
        pinned.pin(toSink: PrivatePulseServer.sinkName)
        // Pinning opens the stream again, on that sink.
        #expect(pinnedEvents.wait(timeoutSeconds: 5) { $0.count { $0.isConnected } >= 2 })
        #expect(waitUntil(timeoutSeconds: 5) { (try? sinksOfStreams(server)) == ["pinned": "out", "control": "out"] })

        try pactl(server, ["set-default-sink", "other"])
        // The unpinned control follows the new default; the pinned one stays.
        #expect(waitUntil(timeoutSeconds: 5) { (try? sinksOfStreams(server))?["control"] == "other" })
        #expect(try sinksOfStreams(server)["pinned"] == "out")

        // Unpinned: it follows the default again.
        pinned.pin(toSink: nil)
        #expect(waitUntil(timeoutSeconds: 5) { (try? sinksOfStreams(server))?["pinned"] == "other" })
        #expect(pinned.reconnectCount == 0, "a pin is not a reconnection")
    }
}
