import Testing
@testable import SceneSoundPulse

@Suite struct ReconnectBackoffTests {
    @Test func doublesFromFiftyMillisecondsUpToOneSecondAndResets() {
        var backoff = ReconnectBackoff()
        let delays = (0 ..< 7).map { _ in backoff.nextDelaySeconds() }
        #expect(delays == [0.05, 0.1, 0.2, 0.4, 0.8, 1.0, 1.0])
        backoff.reset()
        #expect(backoff.nextDelaySeconds() == 0.05)
    }
}
