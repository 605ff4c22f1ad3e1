import Foundation

/// A private PulseAudio server with a null sink named "out", run through scripts/testenv.
/// Every server it starts is remembered, so `stopAll` (called from the test's `defer`) stops
/// them by PID even after a failure halfway.
final class PrivatePulseServer {
    static let sinkName = "out"
    static let rateHz = 48_000

    let directory: URL
    private let scripts: URL
    private var startedPIDs: [pid_t] = []

    init(directory: URL) {
        self.directory = directory
        scripts = repositoryRoot().appendingPathComponent("scripts/testenv")
    }

    /// libpulse's server string for this directory's socket; stays the same across restarts.
    var serverAddress: String { "unix:\(directory.path)/pulse/native" }

    /// The PID of the server started last.
    var currentPID: pid_t? { startedPIDs.last }

    /// Starts a server (returns once `pactl info` answers) and returns its PID.
    @discardableResult
    func start() throws -> pid_t {
        let output = try runHelper(scripts.appendingPathComponent("pulse-start"), [directory.path])
        guard let pid = pid_t(output.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw HelperFailure(command: "pulse-start", status: 0, stderr: "no PID in output: \(output)")
        }
        startedPIDs.append(pid)
        return pid
    }

    /// Kills the current server the hard way (SIGKILL, as a crash would) and waits until it is gone.
    func killCurrent() throws {
        guard let pid = currentPID else { return }
        kill(pid, SIGKILL)
        try stop(pid: pid)
    }

    func stop(pid: pid_t) throws {
        try runHelper(scripts.appendingPathComponent("pulse-stop"), [String(pid)])
    }

    func stopAll() {
        for pid in startedPIDs.reversed() { try? stop(pid: pid) }
        startedPIDs.removeAll()
    }
}
