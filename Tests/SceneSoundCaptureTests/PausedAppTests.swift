import Foundation
import SceneSoundCapture
import SceneSoundTestSupport
import Testing

/// An app that pauses lets the capture rest and our sink suspend (nothing of ours records a
/// paused stream), and when it resumes it is captured from its first sample: the capture is
/// the app's file, sample for sample, across the pause. The app is mpv, paused over its IPC
/// socket as a user's media keys do: it corks its stream, which stays.
@Suite(.serialized) struct PausedAppTests {
    /// Frames of `captured` (interleaved stereo, its silent gaps removed) that are `source`'s
    /// sample for sample, counted from `firstFrame` on, aligned where they match there.
    static func contiguousFrames(_ captured: [Float], source: [Int16], from firstFrame: Int) -> Int {
        run(captured, source: source, from: firstFrame).frames
    }

    /// The run of `contiguousFrames`, and where in the file it starts.
    static func run(_ captured: [Float], source: [Int16], from firstFrame: Int) -> (frames: Int, sourceFrame: Int) {
        let reference = source.map { Float($0) / 32768 }
        let frames = captured.count / 2, sourceFrames = reference.count / 2
        guard firstFrame + 16 < frames else { return (0, -1) }
        func same(_ c: Int, _ s: Int) -> Bool {
            abs(captured[2 * c] - reference[2 * s]) < 1e-3 && abs(captured[2 * c + 1] - reference[2 * s + 1]) < 1e-3
        }
        // Where in the file the captured frame is: 16 frames of noise in a row match only there.
        guard let offset = (0 ..< sourceFrames - 16).first(where: { s in (0 ..< 16).allSatisfy { same(firstFrame + $0, s + $0) } })
        else { return (0, -1) }
        var count = 0
        while firstFrame + count < frames, offset + count < sourceFrames, same(firstFrame + count, offset + count) { count += 1 }
        return (count, offset)
    }

    /// On PulseAudio the block its suspended sink renders before the monitor has resumed: one
    /// fragment of the capture's recordings (10 ms here, the fixture's fragment).
    static let pulseAudioBlockFrames = 480
    /// On PipeWire the node's quantum: at most the one cycle the app could run before its
    /// link is ready again (nothing was missing in the runs so far).
    static let pipeWireQuantumFrames = CaptureOnServerTests.Fixture.nodeQuantumFrames

    @Test(arguments: PrivateSoundServer.Kind.allCases)
    func aPausedAppLetsTheSinkSuspendAndIsCapturedFromItsFirstSampleWhenItResumes(kind: PrivateSoundServer.Kind) throws {
        let fixture = try CaptureOnServerTests.Fixture(kind, restAfterSeconds: 0.5)
        if kind == .pulseAudio { _ = try fixture.server.pactl(["load-module", "module-suspend-on-idle", "timeout=1"]) }
        try fixture.startCapturing()
        #expect(try waitUntil(timeoutSeconds: 5) { try fixture.server.defaultSinkName() == CaptureSinkProperties.sinkName })
        let (file, source) = try fixture.noise(seconds: 20, seed: 11)
        let socket = temporaryFile("mpv.sock").path
        defer { try? FileManager.default.removeItem(atPath: socket) }
        fixture.clients.append(try fixture.server.startClient("/usr/bin/mpv", [
            "--no-config", "--no-video", "--ao=pulse", "--input-ipc-server=\(socket)", "--audio-client-name=resuming-app", file.path,
        ]))
        let consumer = fixture.consumer
        let stream = try fixture.firstCapturedStream()
        #expect(consumer.wait(timeoutSeconds: 10) { $0.framesWhileLocked(stream.streamIndex) >= 24_000 })

        let restsBefore = consumer.rests
        try setMPVPaused(true, ipcSocketPath: socket)
        try #require(consumer.wait(timeoutSeconds: 10) { $0.restsWhileLocked > restsBefore }, "\(kind): the capture did not rest under the paused app")
        let ourSinkState = { try fixture.server.list("sinks").first { $0["name"] as? String == CaptureSinkProperties.sinkName }?["state"] as? String }
        #expect(try waitUntil(timeoutSeconds: 15) { try ourSinkState() == "SUSPENDED" }, "\(kind): our sink did not suspend under the paused app")
        #expect(try fixture.server.sinkInputs().contains { $0.application == "resuming-app" }, "\(kind): the paused app's stream is gone")
        let beforePause = ShortSoundTests.withoutGaps(consumer.audio(of: stream.streamIndex)).count / 2

        try setMPVPaused(false, ipcSocketPath: socket)
        let framesAtResume = consumer.audio(of: stream.streamIndex).count / 2
        #expect(consumer.wait(timeoutSeconds: 10) { $0.framesWhileLocked(stream.streamIndex) >= framesAtResume + 48_000 })
        #expect(consumer.endedStreams.isEmpty, "\(kind): the app's capture ended")
        let captured = ShortSoundTests.withoutGaps(consumer.audio(of: stream.streamIndex))
        // From 0.1 s before the pause to 0.5 s after it: the file, sample for sample, with
        // nothing of it missing where the pause was but, at most, on PulseAudio one block (its
        // suspended sink resumes before its monitor, see docs/CAPTURE.md), on PipeWire one quantum. Only around the pause: on a
        // loaded machine the app may run dry elsewhere, and PulseAudio then skips what it
        // wrote late, whoever records it.
        let windowStart = max(2_048, beforePause - 4_800), windowEnd = min(captured.count / 2, beforePause + 24_000)
        let first = Self.run(captured, source: source, from: windowStart)
        var skippedFrames = 0, breakFrame: Int?
        if windowStart + first.frames < windowEnd {
            breakFrame = windowStart + first.frames
            let next = Self.run(captured, source: source, from: windowStart + first.frames)
            skippedFrames = next.sourceFrame - (first.sourceFrame + first.frames)
            let whole = { #expect(windowStart + first.frames + next.frames >= windowEnd,
                                  "\(kind): after a break at captured frame \(windowStart + first.frames), the capture is the file for \(next.frames) frames only") }
            // A second break while the machine disturbed the fixture: the graph's cycles lost
            // to it (`Fixture.expectExact`), a known issue, said; on an undisturbed machine it fails.
            if kind == .pipeWire, windowStart + first.frames + next.frames < windowEnd, let why = fixture.stallWatch.disturbance() {
                withKnownIssue("\(kind): a second break around the pause while \(why)", isIntermittent: true) { whole() }
            } else {
                whole()
            }
        }
        print("\(kind) paused app: the capture rested and our sink SUSPENDED under the paused app; \(beforePause) frames captured before the pause; resumed \(breakFrame.map { "with \(skippedFrames) frames of the file missing at captured frame \($0)" } ?? "with nothing missing")")
        let allowedFrames = kind == .pulseAudio ? Self.pulseAudioBlockFrames : Self.pipeWireQuantumFrames
        let skipped = { #expect(skippedFrames >= 0 && skippedFrames <= allowedFrames,
                                "\(kind): \(skippedFrames) frames of the file missing after the pause (at captured frame \(breakFrame ?? -1); \(beforePause) before the pause), \(allowedFrames) allowed") }
        // Whole quanta more while the machine disturbed the fixture (ci61: 512 frames at a 12.6 ms
        // stall, 4096 frames after the resume): the graph's cycles lost to it, as above.
        if kind == .pipeWire, skippedFrames > allowedFrames, skippedFrames % allowedFrames == 0, let why = fixture.stallWatch.disturbance() {
            withKnownIssue("\(kind): \(skippedFrames) frames missing around the pause while \(why)", isIntermittent: true) { skipped() }
        } else {
            skipped()
        }
    }
}
