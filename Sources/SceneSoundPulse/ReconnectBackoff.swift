/// Delays between reconnection attempts: short at first (a restarted server is usually back
/// within tens of milliseconds), doubling up to a ceiling so a server that stays away costs
/// one attempt per second.
public struct ReconnectBackoff: Sendable {
    public let initialSeconds: Double
    public let maximumSeconds: Double
    private var upcomingSeconds: Double

    public init(initialSeconds: Double = 0.050, maximumSeconds: Double = 1.0) {
        precondition(initialSeconds > 0 && maximumSeconds >= initialSeconds)
        self.initialSeconds = initialSeconds
        self.maximumSeconds = maximumSeconds
        self.upcomingSeconds = initialSeconds
    }

    /// The delay before the next attempt; each call doubles the following one.
    public mutating func nextDelaySeconds() -> Double {
        let delay = upcomingSeconds
        upcomingSeconds = min(upcomingSeconds * 2, maximumSeconds)
        return delay
    }

    /// After a successful connection the next loss starts again from the shortest delay.
    public mutating func reset() {
        upcomingSeconds = initialSeconds
    }
}
