#if canImport(Glibc)
import Glibc
#endif

/// One connected Unix stream socket to a compositor, with the few blocking and non-blocking
/// operations its protocols need. Thread-confined to the window source's thread.
final class UnixStreamSocket {
    let descriptor: Int32

    /// Connects to `path`; throws `.disconnected` when nothing listens there.
    init(path: String) throws(CompositorError) {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .disconnected("socket(): \(String(cString: strerror(errno)))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.utf8.count < capacity else {
            close(fd)
            throw .disconnected("socket path too long: \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: path.utf8)
            raw[path.utf8.count] = 0
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw .disconnected("\(path): \(reason)")
        }
        descriptor = fd
    }

    deinit { close(descriptor) }

    func setNonBlocking() {
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
    }

    /// Writes everything, waiting at most `timeoutSeconds` for room.
    func writeAll(_ bytes: [UInt8], timeoutSeconds: Double = 2) throws(CompositorError) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written > 0 { offset += written; continue }
            if written < 0 && (errno == EAGAIN || errno == EINTR) {
                try waitReadable(events: Int16(POLLOUT), timeoutSeconds: timeoutSeconds)
                continue
            }
            throw .disconnected("write: \(String(cString: strerror(errno)))")
        }
    }

    /// Exactly `count` bytes, waiting at most `timeoutSeconds` for each part (a compositor
    /// that stops answering counts as gone).
    func readExactly(_ count: Int, timeoutSeconds: Double = 2) throws(CompositorError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        var offset = 0
        while offset < count {
            let got = buffer[offset...].withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if got > 0 { offset += got; continue }
            if got == 0 { throw .disconnected("the compositor closed the connection") }
            if errno == EAGAIN || errno == EINTR {
                try waitReadable(events: Int16(POLLIN), timeoutSeconds: timeoutSeconds)
                continue
            }
            throw .disconnected("read: \(String(cString: strerror(errno)))")
        }
        return buffer
    }

    /// Everything until the peer closes (Hyprland's request socket answers, then closes).
    func readToEnd(timeoutSeconds: Double = 2, maximumBytes: Int = 16 << 20) throws(CompositorError) -> [UInt8] {
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let got = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if got > 0 {
                result.append(contentsOf: chunk[0..<got])
                guard result.count <= maximumBytes else { throw .malformed("a reply longer than \(maximumBytes) bytes") }
                continue
            }
            if got == 0 { return result }
            if errno == EAGAIN || errno == EINTR {
                try waitReadable(events: Int16(POLLIN), timeoutSeconds: timeoutSeconds)
                continue
            }
            throw .disconnected("read: \(String(cString: strerror(errno)))")
        }
    }

    /// What is readable now without waiting; nil at end of stream.
    func readAvailable() throws(CompositorError) -> [UInt8]? {
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let got = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if got > 0 { result.append(contentsOf: chunk[0..<got]); continue }
            if got == 0 { return result.isEmpty ? nil : result }
            if errno == EAGAIN || errno == EWOULDBLOCK { return result }
            if errno == EINTR { continue }
            throw .disconnected("read: \(String(cString: strerror(errno)))")
        }
    }

    private func waitReadable(events: Int16, timeoutSeconds: Double) throws(CompositorError) {
        var entry = pollfd(fd: descriptor, events: events, revents: 0)
        let ready = poll(&entry, 1, Int32(timeoutSeconds * 1000))
        if ready == 0 { throw .disconnected("no answer within \(timeoutSeconds) s") }
    }
}
