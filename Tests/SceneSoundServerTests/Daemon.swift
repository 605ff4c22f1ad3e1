import SceneSoundTestSupport
import Foundation
import SceneSoundProtocol

/// A real `scenesoundd` for a test: started with a private socket (and wav output by
/// default), waited for until its socket answers, stopped by PID.
final class Daemon: @unchecked Sendable {
    let directory: String
    let socketPath: String
    let wavPath: String
    let process = Process()
    private let errorPipe = Pipe()
    private var stderrData = Data()
    private let lock = NSLock()

    static var binaries: URL { URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent() }

    /// `launcher`: a command that runs the daemon (e.g. prlimit with its arguments).
    /// `output`: nil = a wav file; "" = no `--output` (the daemon's own choice).
    init(output: String? = nil, extraArguments: [String] = [], environment: [String: String] = [:],
         launcher: [String] = []) throws {
        directory = NSTemporaryDirectory() + "scenesoundd-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        socketPath = directory + "/run/socket"
        wavPath = directory + "/out.wav"
        let daemon = Self.binaries.appendingPathComponent("scenesoundd")
        process.executableURL = launcher.isEmpty ? daemon : URL(fileURLWithPath: launcher[0])
        process.arguments = Array(launcher.dropFirst()) + (launcher.isEmpty ? [] : [daemon.path]) + ["--socket", socketPath] + (output == "" ? [] : ["--output", output ?? "wav:\(wavPath)"]) + ["--room", "none",
                             "--display", "none", "--log-level", "debug"]
            + (extraArguments.contains("--opentrack") ? [] : ["--opentrack", "off"]) + extraArguments
        var env = ProcessInfo.processInfo.environment
        env["XDG_CACHE_HOME"] = NSTemporaryDirectory() + "scenesound-test-cache"
        // Its own state: an HRTF set the user chose with `hrtf use` must not change the tests'.
        env["XDG_STATE_HOME"] = directory + "/state"
        process.environment = env.merging(environment) { $1 }
        process.standardError = errorPipe
        process.standardOutput = FileHandle.nullDevice
        errorPipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            self?.lock.withLock { self?.stderrData.append(data) }
        }
        try process.run()
        try waitUntil(timeoutSeconds: 20, "the daemon's socket to accept") {
            guard process.isRunning else { throw TestFailure("scenesoundd exited: \(self.log)") }
            return (try? RawClient(socketPath: socketPath, handshake: false)) != nil
        }
    }

    var log: String { lock.withLock { String(decoding: stderrData, as: UTF8.self) } }
    var isRunning: Bool { process.isRunning }

    /// SIGTERM, then wait for the exit (the wav file is finalised by then).
    @discardableResult
    func stop() -> Int32 {
        if process.isRunning {
            kill(process.processIdentifier, SIGTERM)
            let deadline = Date().addingTimeInterval(10)
            while process.isRunning && Date() < deadline { usleep(10_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        errorPipe.fileHandleForReading.readabilityHandler = nil
        return process.terminationStatus
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// Waits until the server has rendered `seconds` more audio, by its own clock (the status's
/// `output.rendered_seconds`): for tests whose subject is sound over time — a tone playing
/// before an alert, silence before a sound, a ramp finishing — instead of a fixed sleep.
func waitForRenderedAudio(_ client: RawClient, seconds: Double, timeoutSeconds: Double = 10) throws {
    let start = try HeadTrackingTests.statusDocument(client).output.renderedSeconds
    try waitUntil(timeoutSeconds: timeoutSeconds, "\(seconds) s more of rendered audio") {
        try HeadTrackingTests.statusDocument(client).output.renderedSeconds >= start + seconds
    }
}
