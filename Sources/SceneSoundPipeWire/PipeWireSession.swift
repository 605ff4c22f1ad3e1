import CPipeWireGraph
import Glibc

/// Whether the session's sound server is PipeWire, and where its core socket is.
public enum PipeWireSession {
    /// The PipeWire core socket the session uses, if one answers:
    /// - `$PIPEWIRE_REMOTE` when it is an absolute path;
    /// - with `$PULSE_SERVER` set (a chosen pulse server), the PipeWire beside it when that
    ///   server is pipewire-pulse in its usual place (`DIR/pulse/native` beside `DIR/pipewire-0`),
    ///   else none: the user picked a PulseAudio;
    /// - else `pipewire-0` (or `$PIPEWIRE_REMOTE`) in `$PIPEWIRE_RUNTIME_DIR` or `$XDG_RUNTIME_DIR`.
    public static func socketPath(environment: [String: String]) -> String? {
        let candidate: String?
        if let remote = environment["PIPEWIRE_REMOTE"], remote.hasPrefix("/") {
            candidate = remote
        } else if let pulse = environment["PULSE_SERVER"], !pulse.isEmpty {
            guard pulse.hasPrefix("unix:"), pulse.hasSuffix("/pulse/native") else { return nil }
            let directory = pulse.dropFirst("unix:".count).dropLast("/pulse/native".count)
            candidate = directory + "/pipewire-0"
        } else if let runtime = environment["PIPEWIRE_RUNTIME_DIR"] ?? environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
            candidate = runtime + "/" + (environment["PIPEWIRE_REMOTE"].flatMap { $0.isEmpty ? nil : $0 } ?? "pipewire-0")
        } else {
            candidate = nil
        }
        guard let candidate, answers(socketPath: candidate) else { return nil }
        return candidate
    }

    /// A Unix stream socket there accepts a connection (a stale socket file does not).
    static func answers(socketPath: String) -> Bool {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(socketPath.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        return result == 0
    }
}

extension PipeWireSession {
    /// Disconnects every client of process `pid` from the PipeWire server at `socketPath`, as
    /// the process's death would: its nodes, ports and links go with them. The capture guard's
    /// cure for a hung daemon, whose node, never finishing a cycle, would hold every node of its
    /// driver's group (the user's sink among them) silent. How many clients it had, or an error
    /// in words.
    public static func disconnectClients(ofProcess pid: pid_t, socketPath: String, timeoutSeconds: Double) -> Result<Int, DisconnectError> {
        let result = ss_pw_disconnect_process(socketPath, pid, Int32(max(1, (timeoutSeconds * 1000).rounded())))
        return result >= 0 ? .success(Int(result)) : .failure(DisconnectError(code: -result))
    }

    public struct DisconnectError: Error, CustomStringConvertible {
        public let code: Int32
        public var description: String { String(cString: strerror(code)) }
    }
}
