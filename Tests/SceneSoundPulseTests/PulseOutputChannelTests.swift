import SceneSoundTestSupport
import Testing
@testable import SceneSoundPulse

/// The stream reopened with a speaker layout's channels, on private servers with a 5.1 sink:
/// PulseAudio, and pipewire-pulse (the pulse output is what `--output pulse` plays through there).
@Suite(.serialized) struct PulseOutputChannelTests {
    @Test(arguments: [PrivateSoundServer.Kind.pulseAudio, .pipeWire])
    func aStreamReopenedForSixChannelsFeedsEachSpeakerItsOwnChannel(kind: PrivateSoundServer.Kind) throws {
        let server = try PrivateSoundServer(kind)
        defer { server.tearDown() }
        try SurroundSink.load(on: server)
        let events = EventLog()
        let output = PulseOutput(configuration: PulseOutput.Configuration(
            sinkName: SurroundSink.name, applicationName: "PulseOutputChannelTests", streamName: "channel tone",
            serverAddress: server.serverAddress), events: events.append)
        let tone = ChannelTaggedTone()
        defer { output.stop() }
        try output.start(renderChannels: { tone.render($0, frames: $1, channels: $2) })
        #expect(events.wait(timeoutSeconds: 5) { $0.contains { $0.isConnected } }, "\(events.events)")
        #expect(waitUntil(timeoutSeconds: 5) { tone.channelCount == 2 })

        try output.useChannels(SurroundSink.channelNames)
        #expect(waitUntil(timeoutSeconds: 5) { tone.channelCount == 6 }, "still rendering \(tone.channelCount) channels")
        try SurroundSink.expectChannelsLandInPlace(on: server, label: "\(kind) 5.1")
        #expect(output.reconnectCount == 0, "a reopen is not a reconnection")
        #expect(throws: PulseOutputError.self) { try output.useChannels(["front-left", "nowhere"]) }
    }
}
