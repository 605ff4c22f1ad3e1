import Foundation

/// Collects an output's events (they arrive on its own thread: PulseAudio's mainloop,
/// PipeWire's loop) and lets a test wait for a condition on them, woken by each new event
/// rather than polling.
public final class EventLog<Event: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var recorded: [Event] = []

    public init() {}

    public func append(_ event: Event) {
        condition.lock()
        recorded.append(event)
        condition.broadcast()
        condition.unlock()
    }

    public var events: [Event] {
        condition.lock()
        defer { condition.unlock() }
        return recorded
    }

    /// Waits until `predicate` holds for the events so far; false on timeout.
    public func wait(timeoutSeconds: Double, until predicate: ([Event]) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        condition.lock()
        defer { condition.unlock() }
        while !predicate(recorded) {
            if !condition.wait(until: deadline) { return predicate(recorded) }
        }
        return true
    }

    public func count(where matches: (Event) -> Bool) -> Int { events.filter(matches).count }
}
