/// Delays between reconnection attempts to a server that went away (X, PulseAudio): short at
/// first, since a restarted server is usually back within tens of milliseconds, doubling up to
/// a ceiling so a server that stays away costs one attempt per `maximumSeconds`.
package struct ReconnectBackoff: Sendable {
    package let initialSeconds: Double
    package let maximumSeconds: Double
    private var upcomingSeconds: Double

    package init(initialSeconds: Double, maximumSeconds: Double) {
        precondition(initialSeconds > 0, "a reconnect delay must be positive")
        self.initialSeconds = initialSeconds
        self.maximumSeconds = max(maximumSeconds, initialSeconds)
        upcomingSeconds = initialSeconds
    }

    /// The delay before the next attempt; each call doubles the following one.
    package mutating func nextDelaySeconds() -> Double {
        defer { upcomingSeconds = min(upcomingSeconds * 2, maximumSeconds) }
        return upcomingSeconds
    }

    /// After a successful connection the next loss starts again from the shortest delay.
    package mutating func reset() { upcomingSeconds = initialSeconds }
}
