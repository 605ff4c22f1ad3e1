import Testing
@testable import SceneSoundPulse

@Suite struct ConfigurationValidationTests {
    @Test(arguments: [
        PulseOutput.Configuration(rateHz: 0),
        PulseOutput.Configuration(rateHz: 1_000_000),
        PulseOutput.Configuration(blockFrames: 0),
        PulseOutput.Configuration(targetLatencySeconds: 0),
        PulseOutput.Configuration(targetLatencySeconds: .nan),
        PulseOutput.Configuration(sinkName: ""),
        PulseOutput.Configuration(serverAddress: ""),
    ])
    func startRejectsAConfigurationThatCannotWork(_ configuration: PulseOutput.Configuration) {
        let output = PulseOutput(configuration: configuration, events: { _ in })
        #expect(throws: PulseOutputError.self) { try output.start(render: { _, _ in }) }
        output.stop()
    }
}
