import Foundation
import SceneSoundTestSupport
import SceneSoundWindows
import SceneSoundX11

/// Every snapshot a tracker published (they arrive on its thread); lets a test wait for a
/// condition, woken by each new snapshot rather than polling.
final class SnapshotLog: @unchecked Sendable {
    private let condition = NSCondition()
    private var recorded: [WindowSnapshot] = []

    func append(_ snapshot: WindowSnapshot) {
        condition.lock()
        recorded.append(snapshot)
        condition.broadcast()
        condition.unlock()
    }

    var all: [WindowSnapshot] {
        condition.lock()
        defer { condition.unlock() }
        return recorded
    }

    var latest: WindowSnapshot? { all.last }

    /// The first snapshot (from now on, or already there) satisfying `predicate`; nil on timeout.
    @discardableResult
    func wait(timeoutSeconds: Double = 5, until predicate: (WindowSnapshot) -> Bool) -> WindowSnapshot? {
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let last = recorded.last, predicate(last) { return last }
            if !condition.wait(until: deadline) { return recorded.last.flatMap { predicate($0) ? $0 : nil } }
        }
    }
}
