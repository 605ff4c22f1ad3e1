import NIOCore

/// A token bucket: `messagesPerSecond` on average, bursts of up to one second's worth. Time is
/// passed in (the event loop's `now`), so that tests on an embedded loop control it.
struct MessageRateLimiter {
    private(set) var messagesPerSecond: Int
    private var tokens: Double
    private var last: NIODeadline?

    init(messagesPerSecond: Int) {
        self.messagesPerSecond = messagesPerSecond
        tokens = Double(messagesPerSecond)
    }

    /// From now on, `messagesPerSecond` on average; a bucket fuller than the new second's worth
    /// is emptied down to it.
    mutating func setRate(_ messagesPerSecond: Int) {
        guard messagesPerSecond != self.messagesPerSecond else { return }
        self.messagesPerSecond = messagesPerSecond
        tokens = min(tokens, Double(messagesPerSecond))
    }

    /// True if a message may pass at `now`.
    mutating func take(now: NIODeadline) -> Bool {
        if let last, now > last {
            let elapsed = Double((now - last).nanoseconds) * 1e-9
            tokens = min(Double(messagesPerSecond), tokens + elapsed * Double(messagesPerSecond))
        }
        if last.map({ now > $0 }) ?? true { last = now }
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}
