#if canImport(Glibc)
import Glibc
#endif

/// Lets other threads interrupt a thread's poll() (a window source's, an event loop's): a
/// non-blocking self-pipe. `wake` and `drain` neither allocate nor lock.
package final class WakePipe: Sendable {
    package let readDescriptor: Int32
    private let writeDescriptor: Int32

    package init() {
        var descriptors: [Int32] = [-1, -1]
        precondition(pipe(&descriptors) == 0, "pipe() failed: \(errno)")
        for descriptor in descriptors {
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        }
        readDescriptor = descriptors[0]
        writeDescriptor = descriptors[1]
    }

    deinit {
        close(readDescriptor)
        close(writeDescriptor)
    }

    /// Never blocks: a full pipe already means "wake up".
    package func wake() {
        var byte: UInt8 = 1
        _ = write(writeDescriptor, &byte, 1)
    }

    package func drain() {
        var buffer: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        while withUnsafeMutableBytes(of: &buffer, { read(readDescriptor, $0.baseAddress, $0.count) }) > 0 {}
    }

    /// Waits until `descriptor` (if any) is readable, a wake arrives, or the timeout passes.
    package func wait(also descriptor: Int32?, timeoutNanoseconds: UInt64?) {
        var descriptors = [pollfd(fd: readDescriptor, events: Int16(POLLIN), revents: 0)]
        if let descriptor { descriptors.append(pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)) }
        // Rounded up: waking a fraction of a millisecond early would only spin once more.
        let timeoutMilliseconds = timeoutNanoseconds.map { Int32(min(($0 + 999_999) / 1_000_000, 60_000)) } ?? -1
        _ = poll(&descriptors, nfds_t(descriptors.count), timeoutMilliseconds)
        drain()
    }
}
