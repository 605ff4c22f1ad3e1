import Synchronization

/// Hands snapshots from a window source's thread to consumers. The lock guards one struct copy (a
/// few reference-count operations) and is never held across X I/O or a callback, so a reader
/// waits at most that long; readers that must never wait at all (the render thread) get
/// positions from the server through the engine's command queue instead.
package final class SnapshotPublisher: Sendable {
    private let latest = Mutex<WindowSnapshot?>(nil)
    private let onSnapshot: (@Sendable (WindowSnapshot) -> Void)?

    package init(onSnapshot: (@Sendable (WindowSnapshot) -> Void)?) {
        self.onSnapshot = onSnapshot
    }

    package var snapshot: WindowSnapshot? { latest.withLock { $0 } }

    package func publish(_ snapshot: WindowSnapshot) {
        latest.withLock { $0 = snapshot }
        onSnapshot?(snapshot)
    }
}
