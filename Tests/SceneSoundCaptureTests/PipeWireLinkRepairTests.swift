import Foundation
import SceneSoundCapture
import SceneSoundTestSupport
import Testing

/// On PipeWire, wrong links around a captured stream: the app's port linked into our node with
/// left and right crossed (its ports announced again with other channels while WirePlumber sets
/// them up), or the app left linked by WirePlumber (0.4.13) to the sink it played on besides
/// ours. The node and the capture watch the links (PipeWire's registry) and put both right;
/// here the wrong links are made by hand with pw-link.
@Suite(.serialized) struct PipeWireLinkRepairTests {
    /// The fixture capturing one app (paplay, stereo noise) that has played half a second.
    static func capturingMusic() throws -> (CaptureOnServerTests.Fixture, [Int16], UInt32) {
        let fixture = try CaptureOnServerTests.Fixture(.pipeWire)
        try fixture.startCapturing()
        #expect(try waitUntil(timeoutSeconds: 5) { try fixture.server.defaultSinkName() == CaptureSinkProperties.sinkName })
        let music = try fixture.noise(seconds: 30, seed: 7)
        _ = try fixture.play(music.file)
        let stream = try fixture.firstCapturedStream()
        try #require(fixture.consumer.wait(timeoutSeconds: 10) { $0.framesWhileLocked(stream.streamIndex) >= 24_000 })
        return (fixture, music.samples, stream.streamIndex)
    }

    @Test func aLinkIntoTheNodeWithItsChannelsCrossedIsUndone() throws {
        let (fixture, music, index) = try Self.capturingMusic()
        let consumer = fixture.consumer
        let ours = try #require(try fixture.server.pipeWireLinks().first {
            $0.output == "paplay:output_FL" && $0.input.hasPrefix("scenesound-capture:in_") && $0.input.hasSuffix("_FL")
        }, "the app is not linked into the node:\n\(fixture.server.pipeWireGraphText())").input.dropLast("FL".count)
        let crossedInput = String(ours) + "FR"
        let crossed = { try fixture.server.pipeWireLinks().contains { $0.output == "paplay:output_FL" && $0.input == crossedInput } }
        // PipeWire 1.4's pw-link waits for the link it made to settle and calls a link destroyed
        // before then a failure ("Invalid argument"): the node may undo it that fast.
        let madeAt = Date()
        let made = Result { try fixture.server.pwLink(["paplay:output_FL", crossedInput]) }
        if case .failure(let error) = made { print("pw-link of the crossed link: \(error)") }
        let undone = try waitUntil(timeoutSeconds: 3) { try !crossed() }
        #expect(undone, "still linked crossed:\n\(fixture.server.pipeWireGraphText())")
        // What is captured from then on is the file, left as left: half a second of it.
        let framesAtRepair = consumer.audio(of: index).count / 2
        try #require(consumer.wait(timeoutSeconds: 5) { $0.framesWhileLocked(index) >= framesAtRepair + 36_000 })
        let after = Array(consumer.audio(of: index).suffix(2 * 24_000))
        let match = try #require(TestSignal.match(captured: after, source: music), "the capture since the repair is not the file")
        print(String(format: "a link crossed by hand into the node: undone within %.2f s; the capture since: the file at frame %d, residual %.1f dB",
                     Date().timeIntervalSince(madeAt), match.sourceFrame, match.residualDecibels))
        fixture.expectExact("the capture since the repair", match)
        #expect(consumer.leftStreams.isEmpty)
    }

    @Test func anAppAlsoLinkedToTheRealSinkIsUnlinkedFromIt() throws {
        let (fixture, _, _) = try Self.capturingMusic()
        let real = PrivateSoundServer.sinkName
        for channel in ["FL", "FR"] { try fixture.server.pwLink(["paplay:output_\(channel)", "\(real):playback_\(channel)"]) }
        let dry = { try fixture.server.pipeWireLinks().filter { $0.output.hasPrefix("paplay:") && $0.input.hasPrefix("\(real):") } }
        #expect(try !dry().isEmpty, "the links by hand were not made")
        let made = Date()
        let undone = try waitUntil(timeoutSeconds: 4) { try dry().isEmpty }
        print(String(format: "an app linked by hand to the real sink besides ours: unlinked %@ %.1f s later; %@",
                     undone ? "" : "NOT", Date().timeIntervalSince(made), fixture.consumer.repairs.description))
        #expect(undone, "still linked: \((try? dry()) ?? [])")
        #expect(fixture.consumer.repairs.contains { $0.contains("also linked to another sink") }, "repairs: \(fixture.consumer.repairs)")
        // Still captured, and still linked to ours.
        #expect(try fixture.server.pipeWireLinks().contains { $0.output == "paplay:output_FL" && $0.input.hasPrefix(CaptureSinkProperties.sinkName) })
        #expect(fixture.consumer.endedStreams.isEmpty)
    }
}
