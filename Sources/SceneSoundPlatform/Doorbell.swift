import Glibc
import Synchronization

/// Wakes a thread that waits on file descriptors (an event loop) from any thread, the real-time
/// ones included: `ring` neither allocates, locks nor waits — an atomic exchange, and for the
/// first ring since the last answer one byte written to a non-blocking pipe (as JACK's clients
/// wake each other). Rings before the answer cost the exchange alone, so a data thread may ring
/// every cycle. The waiting side watches `readDescriptor` and calls `answer()` when it is
/// readable, before acting on the ring: a ring that races the answer is then never lost.
public final class Doorbell: @unchecked Sendable {
    private let pipe = WakePipe()
    private let rung = Atomic<Bool>(false)

    public init() {}

    /// Readable once rung; the waiting side watches it (an event loop that takes descriptors
    /// over takes a `dup` of it: reads from either drain the same pipe).
    public var readDescriptor: CInt { pipe.readDescriptor }

    /// From any thread. Whether this ring was the one that wrote (the rest only coalesce).
    @discardableResult
    public func ring() -> Bool {
        guard !rung.exchange(true, ordering: .acquiringAndReleasing) else { return false }
        pipe.wake()
        return true
    }

    /// Whether a ring waits to be answered.
    public var isRung: Bool { rung.load(ordering: .acquiring) }

    /// On the waiting side, once `readDescriptor` is readable (or to poll): drains the pipe and
    /// re-arms; whether it had been rung. Act on the ring after this, not before.
    @discardableResult
    public func answer() -> Bool {
        pipe.drain()
        return rung.exchange(false, ordering: .acquiringAndReleasing)
    }
}
