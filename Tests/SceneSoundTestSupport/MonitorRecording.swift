import Foundation

/// Records a sink's monitor with parec into a raw float file. Kept on that sink: a recording
/// linked while its sink is the default follows the default on PipeWire (WirePlumber, as
/// PulseAudio does), and the capture makes its own sink the default.
public final class MonitorRecording {
    private let child: ChildProcess
    private let file: URL

    public init(server: PrivateSoundServer, sink: String = PrivateSoundServer.sinkName, file: URL) throws {
        self.file = file
        child = try server.startClient("/usr/bin/parec", [
            "--device=\(sink).monitor", "--property=node.dont-reconnect=true", "--format=float32le", "--channels=2", "--rate=48000", "--raw",
            "--latency-msec=20", file.path,
        ])
    }

    public var frameCount: Int {
        var status = stat()
        return stat(file.path, &status) == 0 ? Int(status.st_size) / 8 : 0
    }

    /// `body`'s result, with `sink` kept running meanwhile by a recording of its monitor. The
    /// pipewire-pulse of PipeWire 1.4 keeps a volume set on a suspended sink (it is heard once
    /// the sink runs) but reports it, and signals the change, only once the sink runs again: a
    /// test that reads a sink's volume while nothing plays on it reads it so.
    public static func keepingRunning<Result>(_ sink: String = PrivateSoundServer.sinkName, on server: PrivateSoundServer,
                                              _ body: () throws -> Result) throws -> Result {
        let recording = try MonitorRecording(server: server, sink: sink, file: temporaryFile("\(sink)-kept-running.raw"))
        defer { _ = recording.finish(afterFrames: 0, timeoutSeconds: 0) }
        return try body()
    }

    /// A frame the file held and the moment it was seen there (CLOCK_MONOTONIC seconds), from
    /// `finish`: parec writes each fragment (20 ms) as the monitor delivers it, so frame N was
    /// played about `(frame − N) / rate` before that moment, give or take a fragment.
    public private(set) var anchor: (frame: Int, atMonotonicSeconds: Double)?

    /// When frame `frame` of the recording was played at the sink (CLOCK_MONOTONIC seconds), as
    /// `anchor` places it; nil before `finish`.
    public func monotonicSeconds(ofFrame frame: Int, rateHz: Int) -> Double? {
        anchor.map { $0.atMonotonicSeconds - Double($0.frame - frame) / Double(rateHz) }
    }

    /// Waits for `frames` frames, stops parec, returns all it recorded.
    public func finish(afterFrames frames: Int, timeoutSeconds: Double) -> [Float] {
        _ = waitUntil(timeoutSeconds: timeoutSeconds) { frameCount >= frames }
        anchor = (frameCount, MachineStallWatch.nowSeconds())
        child.kill()
        defer { try? FileManager.default.removeItem(at: file) }
        guard let data = try? Data(contentsOf: file) else { return [] }
        return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }
}
