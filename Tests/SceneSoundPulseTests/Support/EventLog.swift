import Foundation
import SceneSoundPulse

/// Collects a PulseOutput's events (they arrive on the PulseAudio thread) and lets the test
/// wait for a condition on them, woken by each new event rather than polling.
final class EventLog: @unchecked Sendable {
    private let condition = NSCondition()
    private var recorded: [PulseOutput.Event] = []

    func append(_ event: PulseOutput.Event) {
        condition.lock()
        recorded.append(event)
        condition.broadcast()
        condition.unlock()
    }

    var events: [PulseOutput.Event] {
        condition.lock()
        defer { condition.unlock() }
        return recorded
    }

    /// Waits until `predicate` holds for the events so far; false on timeout.
    func wait(timeoutSeconds: Double, until predicate: ([PulseOutput.Event]) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        condition.lock()
        defer { condition.unlock() }
        while !predicate(recorded) {
            if !condition.wait(until: deadline) { return predicate(recorded) }
        }
        return true
    }

    func count(where matches: (PulseOutput.Event) -> Bool) -> Int {
        events.filter(matches).count
    }
}

extension PulseOutput.Event {
    var isConnected: Bool { if case .connected = self { true } else { false } }
    var isDisconnected: Bool { if case .disconnected = self { true } else { false } }
    var isReconnecting: Bool { if case .reconnecting = self { true } else { false } }
    var failureMessage: String? { if case .failed(let message) = self { message } else { nil } }
}
