import Foundation

/// A private D-Bus session bus for one test (Debian's `dbus-daemon --session`), listening in a
/// directory of its own and stopped by PID: clients find it through `address`
/// (`DBUS_SESSION_BUS_ADDRESS`), nothing of the machine's own buses is touched.
public final class PrivateSessionBus {
    public let directory: String
    public let address: String
    public private(set) var daemon: ChildProcess

    public init() throws {
        var template = Array("/tmp/sss-bus-XXXXXX".utf8CString)
        guard let path = mkdtemp(&template) else { throw ToolFailure(command: "mkdtemp", status: errno, output: "") }
        directory = String(cString: path)
        (daemon, address) = try Self.start(directory: directory)
    }

    deinit { stop() }

    /// `dbus-daemon` prints its address once it listens: that line is the readiness condition.
    private static func start(directory: String) throws -> (ChildProcess, String) {
        let addressFile = directory + "/address"
        try? FileManager.default.removeItem(atPath: addressFile)
        let daemon = try ChildProcess("/usr/bin/dbus-daemon",
                                      ["--session", "--nofork", "--nopidfile", "--print-address",
                                       "--address=unix:path=\(directory)/bus"],
                                      display: nil, outputPath: addressFile, errorPath: directory + "/daemon.log")
        var address = ""
        let ready = waitUntil(timeoutSeconds: 10) {
            guard daemon.isRunning else { return true }
            address = ((try? String(contentsOfFile: addressFile, encoding: .utf8)) ?? "")
                .trimmingCharacters(in: .whitespacesAndNewlines)
            return !address.isEmpty
        }
        guard ready, daemon.isRunning, !address.isEmpty else {
            daemon.kill()
            throw ToolFailure(command: "dbus-daemon --session", status: 1,
                              output: (try? String(contentsOfFile: directory + "/daemon.log", encoding: .utf8)) ?? "")
        }
        return (daemon, address)
    }

    /// For clients: this bus as their session bus.
    public var clientEnvironment: [String: String] { ["DBUS_SESSION_BUS_ADDRESS": address] }

    /// The bus gone, as when the session ends.
    public func kill() { daemon.kill() }

    /// Stops the daemon and removes its directory. Idempotent.
    public func stop() {
        daemon.kill()
        try? FileManager.default.removeItem(atPath: directory)
    }
}
