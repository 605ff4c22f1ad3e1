import Foundation
import SceneSoundTestSupport

/// A real `scenesoundd` writing its mix to a WAV file, on a private socket.
final class LiveDaemon: @unchecked Sendable {
    let directory = Paths.temporaryDirectory("clib-daemon")
    var socketPath: String { directory + "/socket" }
    var wavPath: String { directory + "/out.wav" }
    private let daemon: RunningProcess

    /// `display`: an X display to follow windows on (none by default).
    init(display: String = "none") throws {
        daemon = try RunningProcess(Paths.binaries + "/scenesoundd", [
            "--socket", directory + "/socket", "--output", "wav:" + directory + "/out.wav",
            "--room", "none", "--display", display, "--opentrack", "off",
        ], environment: ["XDG_CACHE_HOME": NSTemporaryDirectory() + "scenesound-test-cache"])
        let deadline = Date().addingTimeInterval(20)
        while !Self.accepts(socketPath) {
            guard daemon.process.isRunning, Date() < deadline else {
                let output = stop()
                throw DaemonFailure(description: "scenesoundd did not start: \(output.text)")
            }
            usleep(20_000)
        }
    }

    var pid: Int32 { daemon.process.processIdentifier }
    var environment: [String: String] { ["SCENESOUND_SOCKET": socketPath] }

    /// SIGTERM and wait: the WAV file is complete afterwards.
    @discardableResult
    func stop() -> ProcessResult {
        if daemon.process.isRunning { kill(daemon.process.processIdentifier, SIGTERM) }
        return daemon.finish()
    }

    /// The whole mix, after stopping the daemon.
    func stopAndReadMix() throws -> StereoMix {
        stop()
        return try StereoMix(wavPath: wavPath)
    }

    private static func accepts(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        return withUnixSocketAddress(path) { connect(fd, $0, $1) } == 0
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

struct DaemonFailure: Error, CustomStringConvertible {
    let description: String
}
