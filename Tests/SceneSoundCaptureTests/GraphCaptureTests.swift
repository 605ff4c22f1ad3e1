import Foundation
import SceneSoundCapture
import SceneSoundTestSupport
import Testing

/// On PipeWire with its own output (the default there), `scenesoundd --capture-apps` links each
/// captured app's output ports into its graph node's input ports, as `pw-link -l` shows a user:
/// no record stream of pipewire-pulse and no `pw_stream` of ours records the app; the capture
/// sink only parks it. Unmodified `paplay`.
@Suite(.serialized) struct GraphCaptureTests {
    final class Daemon {
        let server: PrivateSoundServer
        let process: ChildProcess
        let log: URL

        init() throws {
            server = try PrivateSoundServer(.pipeWire)
            log = temporaryFile("daemon.log")
            process = try ChildProcess(
                BuiltProducts.directory.appendingPathComponent("scenesoundd").path,
                ["--socket", server.directory.appendingPathComponent("ss.sock").path, "--output", "pipewire",
                 "--display", "none", "--opentrack", "off", "--room", "none", "--capture-apps", "--log-level", "debug"],
                display: nil, errorPath: log.path,
                environment: server.clientEnvironment.merging(["XDG_CACHE_HOME": NSTemporaryDirectory() + "scenesound-test-cache"]) { $1 })
            guard waitUntil(timeoutSeconds: 20, { logText.contains("taking other apps' streams") }) else {
                throw ToolFailure(command: "scenesoundd", status: 0, output: logText)
            }
        }

        var logText: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

        deinit {
            kill(process.pid, SIGTERM)
            _ = waitUntil(timeoutSeconds: 5) { !process.isRunning }
            process.kill()
            server.tearDown()
            try? FileManager.default.removeItem(at: log)
        }

        /// A stereo noise file that `paplay` plays for 30 s.
        func playNoise() throws -> ChildProcess {
            let file = temporaryFile("noise.wav")
            try TestSignal.writeWAV(TestSignal.stereoNoise(seconds: 30, seed: 3), channels: 2, to: file)
            return try server.startClient("/usr/bin/paplay", [file.path])
        }
    }

    @Test func aCapturedAppsPortsAreLinkedToSceneSoundsNodeAndNothingRecordsIt() throws {
        let daemon = try Daemon()
        let app = try daemon.playNoise()
        defer { app.kill() }
        try #require(waitUntil(timeoutSeconds: 10) { daemon.logText.contains("capturing ") }, "not captured: \(daemon.logText)")
        // Ours: paplay's FL and FR into one of our node's input sets, channel by channel.
        let ourInputs = { try daemon.server.pipeWireLinks().filter { $0.output.hasPrefix("paplay:") && $0.input.hasPrefix("scenesound:in_") } }
        #expect(try waitUntil(timeoutSeconds: 5) { try ourInputs().count == 2 })
        let links = try daemon.server.pipeWireLinks()
        let listing = try daemon.server.pwLink(["-l"])
        print("pw-link -l, paplay captured on PipeWire:\n" + listing.split(separator: "\n").filter {
            $0.contains("paplay") || $0.contains("scenesound:in_") }.joined(separator: "\n"))
        for channel in ["FL", "FR"] {
            #expect(links.contains { $0.output == "paplay:output_\(channel)" && $0.input.hasPrefix("scenesound:in_") && $0.input.hasSuffix("_\(channel)") },
                    "paplay:output_\(channel) is not linked to our node's \(channel): \(links)")
        }
        // Nothing else takes its audio: only the (silent, parking) capture sink and our node.
        let elsewhere = links.filter { $0.output.hasPrefix("paplay:") && !$0.input.hasPrefix("scenesound:") && !$0.input.hasPrefix(CaptureSinkProperties.sinkName + ":") }
        #expect(elsewhere.isEmpty, "paplay also linked to \(elsewhere)")
        // No pipewire-pulse record stream, no pw_stream recording of ours.
        let recordings = try daemon.server.list("source-outputs")
        #expect(recordings.isEmpty, "record streams: \(recordings.map { ($0["properties"] as? [String: Any])?["media.name"] ?? "?" })")
        #expect(!listing.contains("SceneSound capture of"), "a recording of ours is in the graph")
        // And it is heard: the real sink plays it through our node.
        let recording = try MonitorRecording(server: daemon.server, file: temporaryFile("sink.raw"))
        let heard = recording.finish(afterFrames: 48_000, timeoutSeconds: 10)
        let level = (heard.reduce(0) { $0 + $1 * $1 } / Float(max(1, heard.count))).squareRoot()
        print(String(format: "the real sink through our node: RMS %.3f over %d samples", level, heard.count))
        #expect(level > 0.01)
    }

    @Test func anAppAlsoLinkedToTheRealSinkIsUnlinkedFromIt() throws {
        let daemon = try Daemon()
        let app = try daemon.playNoise()
        defer { app.kill() }
        try #require(waitUntil(timeoutSeconds: 10) { (try? daemon.server.pipeWireLinks().contains { $0.output.hasPrefix("paplay:") && $0.input.hasPrefix("scenesound:in_") }) == true })
        let real = PrivateSoundServer.sinkName
        for channel in ["FL", "FR"] { try daemon.server.pwLink(["paplay:output_\(channel)", "\(real):playback_\(channel)"]) }
        let dry = { try daemon.server.pipeWireLinks().filter { $0.output.hasPrefix("paplay:") && $0.input.hasPrefix("\(real):") } }
        #expect(try !dry().isEmpty, "the links by hand were not made")
        let made = Date()
        let undone = try waitUntil(timeoutSeconds: 4) { try dry().isEmpty }
        print(String(format: "graph path: an app linked by hand to the real sink besides ours: unlinked %@ %.1f s later",
                     undone ? "" : "NOT", Date().timeIntervalSince(made)))
        #expect(undone, "still linked: \((try? dry()) ?? [])")
        #expect(daemon.logText.contains("also linked to another sink"))
        #expect(try daemon.server.pipeWireLinks().contains { $0.output == "paplay:output_FL" && $0.input.hasPrefix("scenesound:in_") })
    }
}
