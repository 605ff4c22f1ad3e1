#if canImport(Glibc)
import Glibc
#endif

/// Calls `body` with a Unix socket address for `path` (as bind(2) and connect(2) take it).
/// Paths longer than sun_path holds are cut, and fail to bind or connect.
public func withUnixSocketAddress<T>(_ path: String,
                                     _ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        let bytes = path.utf8.prefix(raw.count - 1)
        raw.copyBytes(from: bytes)
        raw[bytes.count] = 0
    }
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
}
