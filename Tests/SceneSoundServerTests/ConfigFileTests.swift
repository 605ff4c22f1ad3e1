import SceneSoundTestSupport
import Foundation
import Testing

/// `scenesoundd --config FILE`: every flag has a key; bad values name the key and what it
/// accepts; flags on the command line win over the file.
@Suite struct ConfigFileTests {
    static func runDaemon(_ arguments: [String], environment: [String: String] = [:]) throws -> (status: Int32, error: String) {
        let process = Process()
        process.executableURL = Daemon.binaries.appendingPathComponent("scenesoundd")
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let data = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test(arguments: [
        ("output = \"speaker\"", "key 'output'", "pipewire, pipewire:SINK, pulse, pulse:SINK, wav:PATH or null"),
        ("max_clients = \"ten\"", "key 'max_clients' must be an integer", ""),
        ("rate = 1000", "key 'rate'", "8000 to 192000"),
        ("room = \"cathedral\"", "key 'room'", "none"),
        ("windows = \"mir\"", "key 'windows'", "auto, x11, sway, hyprland, kwin, gnome, none"),
        ("hrtf_eq = \"flat\"", "key 'hrtf_eq'", "'diffuse'"),
        ("colour = 3", "unknown key 'colour'", "max_clients"),
        ("block = [", "not valid TOML", ""),
        ("duck_db = 6", "key 'duck_db'", "-60 to 0 dB"),
        ("hidden_window_cutoff_hz = 5", "key 'hidden_window_cutoff_hz'", "200 to 20000 Hz"),
        ("sample_cache_bytes = 10", "key 'sample_cache_bytes'", "1048576"),
        ("max_opentrack_packets_per_second = 5", "key 'max_opentrack_packets_per_second'", "10 to 100000"),
        ("hrtf_voices = 5000", "key 'hrtf_voices'", "0 to 2048"),
        ("hrtf_voices = -1", "key 'hrtf_voices'", "0 to 2048"),
        ("capture_exclude = \"firefox\"", "key 'capture_exclude' must be an array of strings", ""),
        ("capture_exclude = [\"mpv\", 3]", "key 'capture_exclude' must be an array of strings", ""),
        ("capture_exclude = [\" \"]", "key 'capture_exclude'", "a binary or application name"),
        ("capture_apps = \"yes\"", "key 'capture_apps' must be true or false", ""),
        ("osc = \"udp\"", "key 'osc'", "a UDP port 1 to 65535, ADDRESS:PORT, or off"),
        ("osc_address = \"head\"", "key 'osc_address'", "a path starting with '/'"),
        ("osc_axes = \"yaw,pitch\"", "key 'osc_axes'", "yaw, pitch and roll"),
        ("max_osc_packets_per_second = 5", "key 'max_osc_packets_per_second'", "10 to 100000"),
        ("head_tracking = \"pitch\"", "key 'head_tracking'", "full, yaw-only, off"),
        ("head_prediction = \"maybe\"", "key 'head_prediction'", "on, off"),
        ("head_recenter_seconds = 0", "key 'head_recenter_seconds'", "1 to 3600 seconds"),
        ("rest_after_seconds = 0", "key 'rest_after_seconds'", "0.1 to 3600 seconds"),
        ("render = \"loud\"", "key 'render'", "auto, headphones, speakers"),
        ("device_defaults = \"spatial=sideways\"", "key 'device_defaults'", "spatial=off|fixed|head-tracked"),
    ])
    func badValuesNameTheKeyAndTheAcceptedValues(line: String, names: String, accepted: String) throws {
        let dir = NSTemporaryDirectory() + "scenesound-config-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try (line + "\n").write(toFile: dir + "/config.toml", atomically: true, encoding: .utf8)
        let result = try Self.runDaemon(["--config", dir + "/config.toml"])
        #expect(result.status == 2)
        #expect(result.error.split(separator: "\n").count == 1, "\(result.error)")
        #expect(result.error.contains(names) && (accepted.isEmpty || result.error.contains(accepted)), "\(result.error)")
    }

    @Test func theDefaultFileIsReadAndFlagsOverrideIt() throws {
        let dir = NSTemporaryDirectory() + "scenesound-config-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir + "/scenesound", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // The file says a bad rate; the command line's --rate wins, so the daemon starts.
        try "rate = 1000\n".write(toFile: dir + "/scenesound/config.toml", atomically: true, encoding: .utf8)
        let refused = try Self.runDaemon(["--help"], environment: ["XDG_CONFIG_HOME": dir])
        #expect(refused.status == 2 && refused.error.contains("key 'rate'"))

        try "output = \"null\"\nopentrack = \"off\"\nmax_clients = 3\n".write(toFile: dir + "/scenesound/config.toml", atomically: true, encoding: .utf8)
        let daemon = try Daemon(environment: ["XDG_CONFIG_HOME": dir])
        // --output on the command line (wav) overrides the file's null.
        try waitUntil(timeoutSeconds: 5, "the wav output") { FileManager.default.fileExists(atPath: daemon.wavPath) }
        #expect(try HeadTrackingTests.statusDocument(RawClient(socketPath: daemon.socketPath)).output.kind == "wav")
        // max_clients = 3 from the file: the fourth concurrent client is refused.
        let clients = try (0..<3).map { _ in try RawClient(socketPath: daemon.socketPath) }
        let fourth = try RawClient(socketPath: daemon.socketPath, handshake: false)
        #expect(fourth.isClosedByServer())
        _ = clients
    }
}
