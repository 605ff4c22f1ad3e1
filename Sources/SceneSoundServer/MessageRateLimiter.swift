import NIOCore

/// A token bucket: `messagesPerSecond` on average, bursts of up to one second's worth.
struct MessageRateLimiter {
    let messagesPerSecond: Int
    private var tokens: Double
    private var last: NIODeadline

    init(messagesPerSecond: Int) {
        self.messagesPerSecond = messagesPerSecond
        tokens = Double(messagesPerSecond)
        last = .now()
    }

    /// True if a message may pass now.
    mutating func take() -> Bool {
        let now = NIODeadline.now()
        let elapsed = Double((now - last).nanoseconds) * 1e-9
        last = now
        tokens = min(Double(messagesPerSecond), tokens + elapsed * Double(messagesPerSecond))
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}
