/// Delays between reconnection attempts: doubling from `initialSeconds` up to `maximumSeconds`,
/// so a restarted X server is found quickly and a gone one costs a connect every few seconds.
struct ReconnectBackoff: Sendable {
    let initialSeconds: Double
    let maximumSeconds: Double
    private var nextSeconds: Double

    init(initialSeconds: Double, maximumSeconds: Double) {
        self.initialSeconds = initialSeconds
        self.maximumSeconds = max(maximumSeconds, initialSeconds)
        nextSeconds = initialSeconds
    }

    mutating func nextDelaySeconds() -> Double {
        defer { nextSeconds = min(nextSeconds * 2, maximumSeconds) }
        return nextSeconds
    }

    mutating func reset() { nextSeconds = initialSeconds }
}
