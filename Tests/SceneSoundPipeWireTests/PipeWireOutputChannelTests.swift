import SceneSoundTestSupport
import Testing
@testable import SceneSoundPipeWire

/// The stream reopened with a speaker layout's channels, on a private PipeWire with a 5.1 sink.
@Suite(.serialized) struct PipeWireOutputChannelTests {
    @Test func aStreamReopenedForSixChannelsFeedsEachSpeakerItsOwnChannel() throws {
        let server = try PrivateSoundServer(.pipeWire)
        defer { server.tearDown() }
        try SurroundSink.load(on: server)
        let events = EventLog()
        let output = PipeWireOutput(configuration: PipeWireOutputTests.configuration(server, target: SurroundSink.name),
                                    events: events.append)
        let tone = ChannelTaggedTone()
        defer { output.stop() }
        try output.start(renderChannels: { tone.render($0, frames: $1, channels: $2) })
        #expect(events.wait(timeoutSeconds: 5) { $0.contains { $0.isConnected } }, "\(events.events)")
        #expect(waitUntil(timeoutSeconds: 5) { tone.channelCount == 2 })

        try output.useChannels(speakerNumbers: Array(0..<6))
        #expect(waitUntil(timeoutSeconds: 5) { tone.channelCount == 6 }, "still rendering \(tone.channelCount) channels")
        #expect(events.wait(timeoutSeconds: 5) { $0.count { $0.isConnected } >= 2 }, "\(events.events)")
        try SurroundSink.expectChannelsLandInPlace(on: server, label: "PipeWire 5.1")
        #expect(output.reconnectCount == 0, "a reopen is not a reconnection")
        #expect(throws: PipeWireOutputError.self) { try output.useChannels(speakerNumbers: [0, 9]) }
    }
}
