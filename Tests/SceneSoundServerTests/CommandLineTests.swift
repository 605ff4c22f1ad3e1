import Foundation
import Testing
import SceneSoundDSP
import SceneSoundMedia
import SceneSoundProtocol
import SceneSoundTestSupport

/// The CLI verbs of the sound server issue, run as a user runs them against the real daemon.
@Suite(.serialized) struct CommandLineTests {
    static func runCLI(_ arguments: [String], input: Data? = nil, directory: String? = nil) throws
        -> (status: Int32, output: String, error: String)
    {
        let process = Process()
        process.executableURL = Daemon.binaries.appendingPathComponent("scenesound")
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let out = Pipe(), err = Pipe(), stdin = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = stdin
        try process.run()
        if let input { stdin.fileHandleForWriting.write(input) }
        try stdin.fileHandleForWriting.close()
        let output = out.fileHandleForReading.readDataToEndOfFile(), error = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self), String(decoding: error, as: UTF8.self))
    }

    @Test func playAFileAndRawStdinExactlyWithSpatialOff() throws {
        let daemon = try Daemon()
        var noise = WhiteNoise(seed: 12)
        let samples = (0..<(48000 * 2)).map { _ in noise.next(amplitude: 0.5) }.map { $0 == 0 ? 0.01 : $0 }
        let file = daemon.directory + "/in.wav"
        let writer = try AudioFileWriter(path: file, sampleRateHz: 48000, channelCount: 2)
        try writer.write(samples)
        try writer.finish()

        let played = try Self.runCLI(["play", file, "--spatial", "off", "--socket", daemon.socketPath])
        #expect(played.status == 0, "\(played.error)")
        #expect(played.error.isEmpty, "no progress line when stderr is not a terminal: \(played.error)")
        let first = try AudioFileReader.read(path: daemon.wavPath)
        let start = LosslessStreamTests.locate(samples, in: first)
        #expect(start != nil, "\(LosslessStreamTests.divergence(samples, in: first))")

        let raw = (0..<24000).map { i -> Int16 in Int16(truncatingIfNeeded: (i * 37) % 20000 - 10000) | 1 }
        let piped = try Self.runCLI(["play", "-", "--format", "s16le", "--rate", "48000", "--channels", "1",
                                     "--spatial", "off", "--socket", daemon.socketPath],
                                    input: Data(LosslessStreamTests.bytes(raw)))
        #expect(piped.status == 0, "\(piped.error)")
        let second = try AudioFileReader.read(path: daemon.wavPath)
        let expected = raw.flatMap { v -> [Float] in let f = Float(v) / 32768; return [f, f] }
        #expect(LosslessStreamTests.locate(expected, in: second, after: (start ?? 0) + samples.count / 2) != nil)
    }

    /// `scenesound play` of surround files through the daemon: a 5.1 file's BL channel sounds
    /// from behind on the left (KEMAR at 110°: ITD 675 µs), a 7.1 file's SR from the right
    /// (at −90°: −706 µs).
    @Test func surroundFilesPlayAsVirtualSpeakers() throws {
        let daemon = try Daemon()
        var noise = WhiteNoise(seed: 5)
        let signal = noise.samples(24000, amplitude: 0.3)
        var previousFrames = 0
        for (channels, index, name) in [(6, 4, "5.1 BL"), (8, 7, "7.1 SR")] {
            let file = daemon.directory + "/surround\(channels).wav"
            let writer = try AudioFileWriter(path: file, sampleRateHz: 48000, channelCount: channels)
            var interleaved = [Float](repeating: 0, count: signal.count * channels)
            for n in 0..<signal.count { interleaved[n * channels + index] = signal[n] }
            try writer.write(interleaved)
            try writer.finish()
            let played = try Self.runCLI(["play", file, "--socket", daemon.socketPath])
            #expect(played.status == 0, "\(played.error)")
            let out = try AudioFileReader.read(path: daemon.wavPath)
            let left = Array(out.channel(0)[previousFrames...]), right = Array(out.channel(1)[previousFrames...])
            previousFrames = out.frameCount
            let cues = CueAnalysis.cues(left: left, right: right, sampleRateHz: out.sampleRateHz)
            print("play \(name): ITD \(cues.itdMicroseconds) µs, ILD \(cues.interauralLevelDifferenceDecibels) dB")
            if channels == 6 {
                #expect(cues.itdMicroseconds > 640 && cues.itdMicroseconds < 710 && cues.interauralLevelDifferenceDecibels > 10)
            } else {
                #expect(cues.itdMicroseconds < -670 && cues.interauralLevelDifferenceDecibels < -8)
            }
        }
    }

    @Test func scenesAndStatus() throws {
        let daemon = try Daemon()
        let socket = ["--socket", daemon.socketPath]
        #expect(try Self.runCLI(["scene", "place", "music", "--azimuth", "30", "--distance", "2"] + socket).status == 0)
        let list = try Self.runCLI(["scene", "list", "--json"] + socket)
        #expect(list.status == 0)
        let scenes = try JSONSerialization.jsonObject(with: Data(list.output.utf8)) as? [[String: Any]] ?? []
        let music = scenes.first { $0["id"] as? String == "music" }
        #expect(abs((music?["azimuth_degrees"] as? Double ?? 0) - 30) < 1e-3)
        #expect(abs((music?["distance_metres"] as? Double ?? 0) - 2) < 1e-3)

        let json = try Self.runCLI(["status", "--json"] + socket)
        #expect(json.status == 0)
        // The server's text, unchanged: it reads through the schema, which needs every section
        // (server, output, hrtf, head, scenes, streams, render, health) and fails on unknown keys.
        _ = try StatusSchema.decode(json.output)
        let human = try Self.runCLI(["status"] + socket)
        #expect(human.status == 0 && human.output.contains("music"))
    }

    /// A scene placed by hand waits at its place across sounds and connections until `scene
    /// unbind`; a scene only a sound used is freed when the sound ends.
    @Test func aHandPlacedSceneOutlivesItsSoundsUntilSceneUnbind() throws {
        let daemon = try Daemon()
        let socket = ["--socket", daemon.socketPath]
        var noise = WhiteNoise(seed: 3)
        let file = daemon.directory + "/short.wav"
        let writer = try AudioFileWriter(path: file, sampleRateHz: 48000, channelCount: 1)
        try writer.write((0..<4800).map { _ in noise.next(amplitude: 0.3) })
        try writer.finish()
        func scene(_ id: String) throws -> StatusDocument.Scene? {
            try StatusSchema.decode(try Self.runCLI(["status", "--json"] + socket).output).scenes.first { $0.id == id }
        }

        #expect(try Self.runCLI(["scene", "place", "music", "--azimuth", "30"] + socket).status == 0)
        for id in ["music", "passing"] {
            let played = try Self.runCLI(["play", file, "--scene", id] + socket)
            #expect(played.status == 0, "\(played.error)")
        }
        try waitUntil(timeoutSeconds: 5, "the passing scene to be freed") { try scene("passing") == nil }
        let music = try #require(try scene("music"))
        #expect(music.kept == "placed" && music.streams == 0, "\(music)")
        #expect(abs(music.azimuthDegrees - 30) < 1e-3, "\(music)")

        let unbound = try Self.runCLI(["scene", "unbind", "music"] + socket)
        #expect(unbound.status == 0, "\(unbound.error)")
        #expect(try Self.runCLI(["scene", "list"] + socket).output.contains("no scenes"))
        let human = try Self.runCLI(["status"] + socket).output
        #expect(human.contains("scenes   0 (of 1023 slots; 2 freed since start)"), "\(human)")
        let again = try Self.runCLI(["scene", "unbind", "music"] + socket)
        #expect(again.status == 1 && again.error.contains("no binding"), "\(again.error)")
    }

    /// `scenesound play -` with `--channel-map`: raw 5.1 in the order FL FR SL SR FC LFE, noise in
    /// its third channel, sounds from the left surround (in WAVE's order that channel is the
    /// centre); a name it does not know is one line naming it and the accepted ones.
    @Test func rawStdinWithAChannelMapPlaysEachChannelAtItsSpeaker() throws {
        let daemon = try Daemon()
        var noise = WhiteNoise(seed: 8)
        let signal = noise.samples(24000, amplitude: 0.3)
        var raw = [Int16](repeating: 0, count: signal.count * 6)
        for n in 0..<signal.count { raw[n * 6 + 2] = Int16(signal[n] * 32767) }
        let piped = try Self.runCLI(["play", "-", "--format", "s16le", "--rate", "48000",
                                     "--channel-map", "front-left,front-right,side-left,side-right,front-center,lfe",
                                     "--socket", daemon.socketPath], input: Data(LosslessStreamTests.bytes(raw)))
        #expect(piped.status == 0, "\(piped.error)")
        let out = try AudioFileReader.read(path: daemon.wavPath)
        let cues = CueAnalysis.cues(left: out.channel(0), right: out.channel(1), sampleRateHz: out.sampleRateHz)
        print("play - --channel-map FL,FR,SL,SR,FC,LFE, channel 3 (SL): ITD \(cues.itdMicroseconds) µs, ILD \(cues.interauralLevelDifferenceDecibels) dB")
        #expect(cues.itdMicroseconds > 500 && cues.interauralLevelDifferenceDecibels > 3, "\(cues)")

        let unknown = try Self.runCLI(["play", "-", "--format", "s16le", "--rate", "48000", "--channel-map", "FL,FR,top"])
        #expect(unknown.status == 2)
        #expect(unknown.error.split(separator: "\n").first?.contains("--channel-map: channel 'top' is not supported (accepted: FL (front-left)") == true,
                "\(unknown.error)")
        let mismatch = try Self.runCLI(["play", "-", "--format", "s16le", "--rate", "48000", "--channels", "2", "--channel-map", "FL,FR,FC"])
        #expect(mismatch.status == 2 && mismatch.error.contains("--channel-map names 3 channels, --channels says 2"), "\(mismatch.error)")
        let withAFile = try Self.runCLI(["play", "file.wav", "--channel-map", "FL,FR"])
        #expect(withAFile.status == 2 && withAFile.error.contains("go only with '-'"), "\(withAFile.error)")
    }

    @Test func errorsAreOneLineWithTheRightExitCode() throws {
        let missing = try Self.runCLI(["status", "--socket", "/nonexistent/socket"])
        #expect(missing.status == 1)
        #expect(missing.error.contains("cannot reach the SceneSound server at /nonexistent/socket"))
        #expect(missing.error.split(separator: "\n").count == 1)
        let badFormat = try Self.runCLI(["play", "-", "--format", "u8", "--rate", "48000", "--channels", "1"])
        #expect(badFormat.status == 2)
        #expect(badFormat.error.split(separator: "\n").count == 1)
        let noFormat = try Self.runCLI(["play", "-"])
        #expect(noFormat.status == 2)
    }
}
