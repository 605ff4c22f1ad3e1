import SceneSoundTestSupport
import Foundation
import SceneSoundClient
import SceneSoundMedia
import SceneSoundProtocol
import SceneSoundStatusJSON

/// A real `scenesoundd` for the idiom tests: a private socket, its mix written to a WAV file,
/// waited for until its socket answers, stopped by PID.
final class RealDaemon: @unchecked Sendable {
    let directory: String
    var socketPath: String { directory + "/socket" }
    var wavPath: String { directory + "/out.wav" }
    private let process = Process()
    private let log = Pipe()

    /// The test binaries' directory, where SwiftPM puts `scenesoundd` too.
    static var binaries: URL { URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent() }

    init() throws {
        directory = NSTemporaryDirectory() + "scenesound-client-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        process.executableURL = Self.binaries.appendingPathComponent("scenesoundd")
        process.arguments = ["--socket", directory + "/socket", "--output", "wav:" + directory + "/out.wav", "--room", "none",
                             "--display", "none", "--opentrack", "off"]
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CACHE_HOME"] = NSTemporaryDirectory() + "scenesound-test-cache"
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = log
        try process.run()
        try waitUntil(timeoutSeconds: 20, "scenesoundd to accept connections") {
            guard process.isRunning else { throw TestFailure("scenesoundd exited at start") }
            return (try? ClientConnection(socketPath: socketPath, clientName: "probe"))?.close() != nil
        }
    }

    /// Makes this daemon the one `SceneSound.defaultConnection()` reaches, until it is released
    /// (the other suites in this process, and the programs they start, must not inherit it).
    func becomeDefault() {
        _ = Self.originalSocketVariable
        setenv(SocketPath.environmentVariable, socketPath, 1)
    }
    /// The variable as the test process started with it: put back when its daemon goes.
    private static let originalSocketVariable = getenv(SocketPath.environmentVariable).map { String(cString: $0) }

    /// The status document, over a connection of its own.
    func status() throws -> StatusDocument {
        let connection = try ClientConnection(socketPath: socketPath, clientName: "status")
        defer { connection.close() }
        return try StatusDocument.jsonDecoder().decode(StatusDocument.self, from: Data(try connection.status().utf8))
    }

    /// Waits until the daemon has rendered `seconds` more audio, by its own clock: a silence
    /// between two sounds that the mix then shows.
    func waitForRenderedAudio(seconds: Double) throws {
        let start = try status().output.renderedSeconds
        try waitUntil(timeoutSeconds: 10 + seconds, "\(seconds) s more of rendered audio") {
            try status().output.renderedSeconds >= start + seconds
        }
    }

    /// SIGTERM and wait: the WAV file is complete afterwards. Safe to call more than once.
    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
    }

    /// Stops the daemon and reads its mix: (left + right) / 2 per frame at the output rate.
    func stopAndReadMix() throws -> [Float] {
        stop()
        let mix = try AudioFileReader.read(path: wavPath)
        return (0..<mix.frameCount).map { (mix.interleaved[2 * $0] + mix.interleaved[2 * $0 + 1]) / 2 }
    }

    deinit {
        stop()
        if let current = getenv(SocketPath.environmentVariable), String(cString: current) == socketPath {
            if let original = Self.originalSocketVariable { setenv(SocketPath.environmentVariable, original, 1) }
            else { unsetenv(SocketPath.environmentVariable) }
        }
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// Where a mix is audible: runs of 5 ms blocks whose peak is above `threshold`, as sample
/// ranges at `rateHz`; runs closer than 20 ms are one (a sine crosses zero inside a block).
func audibleSegments(_ mix: [Float], threshold: Float = 0.01, rateHz: Int = 48000) -> [Range<Int>] {
    let block = rateHz / 200
    var segments: [Range<Int>] = []
    for start in stride(from: 0, to: mix.count, by: block) {
        let end = min(start + block, mix.count)
        guard mix[start..<end].contains(where: { abs($0) > threshold }) else { continue }
        if let last = segments.last, start - last.upperBound <= rateHz / 50 {
            segments[segments.count - 1] = last.lowerBound..<end
        } else {
            segments.append(start..<end)
        }
    }
    return segments
}

/// A sine written to a float WAV file in `directory`: what the player tests play.
func writeTone(directory: String, name: String, seconds: Double, rateHz: Int, channels: Int = 1,
               frequencyHz: Double = 1000, amplitude: Float = 0.25) throws -> URL {
    let path = directory + "/" + name
    let writer = try AudioFileWriter(path: path, sampleRateHz: rateHz, channelCount: channels)
    let frames = Int(seconds * Double(rateHz))
    var samples: [Float] = []
    samples.reserveCapacity(frames * channels)
    for frame in 0..<frames {
        let value = amplitude * Float(sin(2 * .pi * frequencyHz * Double(frame) / Double(rateHz)))
        samples.append(contentsOf: repeatElement(value, count: channels))
    }
    try writer.write(samples)
    try writer.finish()
    return URL(fileURLWithPath: path)
}
