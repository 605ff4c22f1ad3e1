import SceneSoundTestSupport
import Foundation

/// Records what reaches a private server's null sink with `parec` (from its monitor source)
/// into a raw float32le stereo file.
final class SinkRecorder {
    static let bytesPerFrame = 2 * MemoryLayout<Float>.size
    private let process = Process()
    private let file: URL

    init(serverAddress: String, file: URL) throws {
        self.file = file
        process.executableURL = URL(fileURLWithPath: "/usr/bin/parec")
        process.arguments = [
            "--server=\(serverAddress)", "--device=\(PrivatePulseServer.sinkName).monitor",
            "--format=float32le", "--channels=2", "--rate=\(PrivatePulseServer.rateHz)", "--raw",
            // Small fragments, so recorded audio lands in the file promptly.
            "--latency-msec=20", file.path,
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    deinit { stop() }

    private var recordedFrames: Int {
        var status = stat()
        guard stat(file.path, &status) == 0 else { return 0 }
        return Int(status.st_size) / Self.bytesPerFrame
    }

    /// Waits until `frameCount` frames are recorded, stops parec and returns the last
    /// `frameCount` frames, interleaved; nil on timeout.
    func record(frameCount: Int, timeoutSeconds: Double) -> [Float]? {
        guard waitUntil(timeoutSeconds: timeoutSeconds, { recordedFrames >= frameCount }) else {
            stop()
            return nil
        }
        stop()
        guard let data = try? Data(contentsOf: file) else { return nil }
        let samples = data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        let usableSamples = samples.count - samples.count % 2
        return Array(samples[(usableSamples - frameCount * 2) ..< usableSamples])
    }

    /// Stops parec by its PID and reaps it. Idempotent.
    ///
    /// SIGKILL, not SIGTERM: children spawned from Swift Testing's worker threads inherit
    /// their blocked signal mask, so a SIGTERM would stay pending forever. Nothing is lost:
    /// parec writes the raw file with plain write(2), no buffering of its own.
    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
