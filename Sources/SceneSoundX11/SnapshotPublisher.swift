import Synchronization

/// Hands snapshots from the tracker thread to consumers. The lock guards one struct copy (a
/// few reference-count operations) and is never held across X I/O or a callback, so a reader
/// waits at most that long; readers that must never wait at all (the render thread) get
/// positions from the server through the engine's command queue instead.
final class SnapshotPublisher: Sendable {
    private let latest = Mutex<WindowSnapshot?>(nil)
    private let onSnapshot: (@Sendable (WindowSnapshot) -> Void)?

    init(onSnapshot: (@Sendable (WindowSnapshot) -> Void)?) {
        self.onSnapshot = onSnapshot
    }

    var snapshot: WindowSnapshot? { latest.withLock { $0 } }

    func publish(_ snapshot: WindowSnapshot) {
        latest.withLock { $0 = snapshot }
        onSnapshot?(snapshot)
    }
}
