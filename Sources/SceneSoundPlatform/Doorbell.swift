import Glibc
import Synchronization

/// Wakes a thread that waits on file descriptors (an event loop) from any thread, the real-time
/// ones included: `ring` neither allocates, locks nor waits — an atomic exchange, and for the
/// first ring since the last answer one byte written to a non-blocking pipe (as JACK's clients
/// wake each other). Rings before the answer cost the exchange alone, so a data thread may ring
/// every cycle. The waiting side watches `readDescriptor` and calls `answer()` when it is
/// readable, before acting on the ring: a ring that races the answer is then never lost.
public final class Doorbell: @unchecked Sendable {
    /// Readable once rung; the waiting side watches it (an event loop that takes descriptors
    /// over takes a `dup` of it: reads from either drain the same pipe).
    public let readDescriptor: CInt
    private let writeDescriptor: CInt
    private let rung = Atomic<Bool>(false)

    public init() throws(Errno) {
        var ends: [CInt] = [-1, -1]
        guard pipe(&ends) == 0 else { throw Errno(errno) }
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        readDescriptor = ends[0]
        writeDescriptor = ends[1]
    }

    deinit {
        close(writeDescriptor)
        close(readDescriptor)
    }

    /// From any thread. Whether this ring was the one that wrote (the rest only coalesce).
    @discardableResult
    public func ring() -> Bool {
        guard !rung.exchange(true, ordering: .acquiringAndReleasing) else { return false }
        var byte: UInt8 = 1
        // EAGAIN: the pipe is full, so a byte is there to be read already.
        _ = write(writeDescriptor, &byte, 1)
        return true
    }

    /// Whether a ring waits to be answered.
    public var isRung: Bool { rung.load(ordering: .acquiring) }

    /// On the waiting side, once `readDescriptor` is readable (or to poll): drains the pipe and
    /// re-arms; whether it had been rung. Act on the ring after this, not before.
    @discardableResult
    public func answer() -> Bool {
        var bytes: (UInt64, UInt64) = (0, 0)
        while withUnsafeMutableBytes(of: &bytes, { read(readDescriptor, $0.baseAddress, $0.count) }) > 0 {}
        return rung.exchange(false, ordering: .acquiringAndReleasing)
    }

    /// A C library's error number.
    public struct Errno: Error, CustomStringConvertible {
        public let code: CInt
        public init(_ code: CInt) { self.code = code }
        public var description: String { String(cString: strerror(code)) }
    }
}
