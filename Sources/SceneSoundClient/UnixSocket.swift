import Glibc

/// The one place that makes socket syscalls: a connected `SOCK_STREAM` Unix socket.
///
/// The descriptor is closed only in `deinit`, when neither the reader thread nor a writer can
/// still use it; `shutdown()` is what stops both. So a descriptor number is never reused
/// under a thread that still holds it.
final class UnixSocket: @unchecked Sendable {
    let descriptor: Int32

    /// Connects to `path`. The failure reason is `strerror(errno)`.
    init(connectingTo path: String) throws(ClientError) {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let pathBytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard !pathBytes.isEmpty, pathBytes.count < capacity else {
            throw .cannotConnect(path: path, reason: "socket path longer than \(capacity - 1) bytes")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: pathBytes)
            raw[pathBytes.count] = 0
        }
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw .cannotConnect(path: path, reason: Self.errnoText()) }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            let reason = Self.errnoText()
            close(descriptor)
            throw .cannotConnect(path: path, reason: reason)
        }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Writes all of `bytes`. MSG_NOSIGNAL: a vanished server is an error, not SIGPIPE.
    func sendAll(_ bytes: UnsafeRawBufferPointer) throws(ClientError) {
        var offset = 0
        while offset < bytes.count {
            let sent = send(descriptor, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            if sent < 0 {
                if errno == EINTR { continue }
                throw .disconnected(reason: "sending failed (\(Self.errnoText()))")
            }
            offset += sent
        }
    }

    func sendAll(_ bytes: [UInt8]) throws(ClientError) {
        // withUnsafeBytes rethrows untyped errors; a Result carries the typed one through.
        try bytes.withUnsafeBytes { raw in Result { () throws(ClientError) in try sendAll(raw) } }.get()
    }

    /// Reads into `buffer[offset...]`; see `receive(into:timeoutSeconds:)`.
    func receive(into buffer: inout [UInt8], at offset: Int = 0, timeoutSeconds: Double? = nil) throws(ClientError) -> Int {
        try buffer.withUnsafeMutableBytes { raw in
            Result { () throws(ClientError) in
                try receive(into: UnsafeMutableRawBufferPointer(rebasing: raw[offset...]), timeoutSeconds: timeoutSeconds)
            }
        }.get()
    }

    /// Reads what is available into `buffer`, waiting at most `timeoutSeconds` (nil: forever).
    /// Returns 0 at end of stream; throws on errors and timeouts.
    func receive(into buffer: UnsafeMutableRawBufferPointer, timeoutSeconds: Double? = nil) throws(ClientError) -> Int {
        if let timeoutSeconds {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(clamping: Int((max(0, timeoutSeconds) * 1000).rounded(.up)))
            var ready: Int32
            repeat { ready = poll(&poller, 1, milliseconds) } while ready < 0 && errno == EINTR
            if ready < 0 { throw .disconnected(reason: "waiting for the server failed (\(Self.errnoText()))") }
            if ready == 0 { throw .timedOut(operation: "waiting for the server", seconds: timeoutSeconds) }
        }
        while true {
            let received = recv(descriptor, buffer.baseAddress, buffer.count, 0)
            if received >= 0 { return received }
            if errno == EINTR { continue }
            throw .disconnected(reason: "receiving failed (\(Self.errnoText()))")
        }
    }

    /// Stops both directions: a blocked `receive` returns 0, later sends fail. Safe to repeat.
    func shutdownBothDirections() {
        shutdown(descriptor, Int32(SHUT_RDWR))
    }

    static func errnoText(_ code: Int32 = errno) -> String {
        String(cString: strerror(code))
    }
}
