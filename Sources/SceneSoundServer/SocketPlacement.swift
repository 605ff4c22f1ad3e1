import Foundation

/// Where the socket lives and how it is protected: its directory is created 0700 (or narrowed
/// to 0700; it must belong to us and must not be a shared one like /tmp), a stale socket left
/// by a dead server is removed, a live one is an error.
enum SocketPlacement {
    static func prepare(path: String) throws {
        let directory = (path as NSString).deletingLastPathComponent
        if !FileManager.default.fileExists(atPath: directory) {
            guard mkdir(directory, 0o700) == 0 || errno == EEXIST else {
                throw ServerError("cannot create \(directory): \(String(cString: strerror(errno)))")
            }
        }
        var info = stat()
        guard stat(directory, &info) == 0 else {
            throw ServerError("cannot inspect \(directory): \(String(cString: strerror(errno)))")
        }
        guard info.st_uid == getuid() else {
            throw ServerError("\(directory) belongs to uid \(info.st_uid), not to us (uid \(getuid()))")
        }
        if info.st_mode & 0o077 != 0 {
            // A shared directory (/tmp, /dev/shm: sticky or world-writable) is never narrowed:
            // that would lock every other user and program out of it.
            if info.st_mode & (S_ISVTX | 0o002) != 0 {
                throw ServerError("\(directory) is shared with other users (mode \(String(info.st_mode & 0o7777, radix: 8))); "
                                  + "the socket needs a directory of its own, made 0700 — e.g. \(directory)/scenesound/socket")
            }
            guard chmod(directory, 0o700) == 0 else {
                throw ServerError("cannot restrict \(directory) to its owner: \(String(cString: strerror(errno)))")
            }
        }

        guard FileManager.default.fileExists(atPath: path) else { return }
        if isServing(path) {
            throw ServerError("another server is already listening on \(path)")
        }
        unlink(path)
    }

    /// True when something accepts connections on the socket.
    static func isServing(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let size = socklen_t(MemoryLayout<sockaddr_un>.size)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, size) == 0 }
        }
    }
}
