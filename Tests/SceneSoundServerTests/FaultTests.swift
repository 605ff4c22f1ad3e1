import SceneSoundTestSupport
import Foundation
import Testing
import SceneSoundDSP
import SceneSoundMedia
import SceneSoundProtocol

/// Clients that die or stop reading: the server frees what was theirs and serves the rest.
@Suite(.serialized) struct FaultTests {
    static func streams(_ client: RawClient) throws -> [StatusDocument.Stream] {
        try HeadTrackingTests.statusDocument(client).streams
    }

    @Test func aClientKilledMidStreamIsCleanedUp() throws {
        let daemon = try Daemon()
        let observer = try RawClient(socketPath: daemon.socketPath)
        // A real CLI process playing 30 s of audio from a file.
        var noise = WhiteNoise(seed: 3)
        let file = daemon.directory + "/long.wav"
        let writer = try AudioFileWriter(path: file, sampleRateHz: 48000, channelCount: 2)
        try writer.write(noise.samples(48000 * 2 * 30, amplitude: 0.2))
        try writer.finish()
        let player = Process()
        player.executableURL = Daemon.binaries.appendingPathComponent("scenesound")
        player.arguments = ["play", file, "--socket", daemon.socketPath]
        player.standardError = FileHandle.nullDevice
        try player.run()
        try waitUntil(timeoutSeconds: 10, "the player's stream") { try Self.streams(observer).count == 1 }
        kill(player.processIdentifier, SIGKILL)
        player.waitUntilExit()
        try waitUntil(timeoutSeconds: 5, "the dead client's stream to be freed") { try Self.streams(observer).isEmpty }
        // Only the observer is left, with no stream.
        let clients = try HeadTrackingTests.statusDocument(observer).clients
        #expect(clients.map(\.name) == ["test"] && clients.map(\.streams) == [0], "\(clients)")
        // And the server still plays for others.
        let stream = try observer.openStream(format: AudioFormat(sampleFormat: .s16le, rateHz: 48000, channels: 1))
        try observer.write(stream: stream, pcm: [UInt8](repeating: 1, count: 9600), bytesPerFrame: 2)
        #expect(try observer.request(.streamDrain(StreamReference(streamID: stream))) == .ok)
    }

    @Test func aClientThatNeverReadsIsDroppedWhileOthersPlay() throws {
        let daemon = try Daemon()
        let deaf = try RawClient(socketPath: daemon.socketPath, name: "deaf")
        // Thousands of status requests whose replies it never reads.
        let request = FrameEncoder.frame(.statusRequest, requestID: 1)
        let burst = (0..<20000).flatMap { _ in request }
        Thread.detachNewThread { try? deaf.sendRaw(burst) }

        let good = try RawClient(socketPath: daemon.socketPath, name: "good")
        let stream = try good.openStream(format: AudioFormat(sampleFormat: .s16le, rateHz: 48000, channels: 1), mode: .off)
        let tone = (0..<(48000 * 8)).map { Int16(sin(2 * Double.pi * 440 * Double($0) / 48000 + 0.2) * 8000) }
        try good.write(stream: stream, pcm: LosslessStreamTests.bytes(tone), bytesPerFrame: 2)
        #expect(try good.request(.streamDrain(StreamReference(streamID: stream))) == .ok)
        let status = try HeadTrackingTests.statusDocument(good)
        #expect(status.health.stalledClientsDropped == 1, "\(status.health)")
        #expect(status.clients.map(\.name) == ["good"], "\(status.clients)")
        #expect(daemon.stop() == 0)
        let recording = try AudioFileReader.read(path: daemon.wavPath)
        let expected = tone.flatMap { v -> [Float] in let f = Float(v) / 32768; return [f, f] }
        #expect(LosslessStreamTests.locate(expected, in: recording) != nil,
                "\(LosslessStreamTests.divergence(expected, in: recording))")
    }
}

/// Faults outside the server: its HRTF file vanishing, its disk filling up.
@Suite(.serialized) struct EnvironmentFaultTests {
    @Test func theHRTFFileRemovedAfterStartChangesNothing() throws {
        let copy = NSTemporaryDirectory() + "kemar-\(UUID().uuidString.prefix(8)).sofa"
        try FileManager.default.copyItem(atPath: "/usr/share/libmysofa/MIT_KEMAR_normal_pinna.sofa", toPath: copy)
        let daemon = try Daemon(extraArguments: ["--hrtf", copy])
        try FileManager.default.removeItem(atPath: copy)
        let client = try RawClient(socketPath: daemon.socketPath)
        let stream = try client.openStream(format: AudioFormat(sampleFormat: .s16le, rateHz: 48000, channels: 1))
        try client.write(stream: stream, pcm: [UInt8](repeating: 7, count: 19200), bytesPerFrame: 2)
        #expect(try client.request(.streamDrain(StreamReference(streamID: stream))) == .ok)
        #expect(daemon.isRunning)
    }

    @Test func aFullDiskUnderTheWavOutputIsReportedAndPlaybackGoesOn() throws {
        // prlimit caps the files the daemon may write at 300 kB: the wav output hits it after
        // about 0.8 s of audio, like a disk that fills up.
        let daemon = try Daemon(launcher: ["/usr/bin/prlimit", "--fsize=300000", "--"])
        let client = try RawClient(socketPath: daemon.socketPath)
        try waitUntil(timeoutSeconds: 10, "the output to report the write error") {
            try HeadTrackingTests.statusDocument(client).output.lastError != nil
        }
        // Streams still open, play and drain: the clients never notice.
        let stream = try client.openStream(format: AudioFormat(sampleFormat: .s16le, rateHz: 48000, channels: 1))
        try client.write(stream: stream, pcm: [UInt8](repeating: 3, count: 48000), bytesPerFrame: 2)
        #expect(try client.request(.streamDrain(StreamReference(streamID: stream))) == .ok)
        let output = try HeadTrackingTests.statusDocument(client).output
        print("wav output after the disk filled: \(output.lastError ?? "-")")
        #expect(daemon.isRunning)
    }
}

/// A client flooding requests is limited to the configured message rate; others are served.
@Suite struct MessageRateTests {
    @Test func aFloodOfRequestsIsRateLimitedAndEveryRequestStillGetsOneReply() throws {
        let daemon = try Daemon(extraArguments: ["--max-messages-per-second", "100"])
        let flooder = try RawClient(socketPath: daemon.socketPath, name: "flooder")
        // 600 requests at once: about 100 pass (the bucket's burst), the rest get limit_exceeded.
        var bytes: [UInt8] = []
        for id in 1...600 { bytes += FrameEncoder.frame(.sceneList, requestID: UInt32(1000 + id)) }
        try flooder.sendRaw(bytes)
        var replies = 0, limited = 0
        while replies < 600 {
            let reply = try flooder.waitFor { message, id in id > 1000 }
            replies += 1
            if case .error(let e) = reply, e.code == .limitExceeded { limited += 1 }
        }
        print("600 requests at 100/s: \(600 - limited) carried out, \(limited) refused with limit_exceeded")
        #expect(limited > 400 && limited < 520)
        // The connection stays usable once the rate is respected: requests under 20/s (a fifth
        // of the limit; the pause paces them, time being what a rate limit is about) are carried
        // out again as soon as the bucket has a token.
        var refusedWhileRefilling = 0
        var answer: Message = .ok
        try waitUntil(timeoutSeconds: 5, "a SCENE_LIST to be carried out again") {
            answer = try flooder.request(.sceneList)
            if case .error(let e) = answer, e.code == .limitExceeded { refusedWhileRefilling += 1; usleep(50_000); return false }
            return true
        }
        guard case .sceneListReply = answer else { throw TestFailure("SCENE_LIST after the flood: \(answer)") }
        // Others were never affected, and the server counted every refusal.
        let status = try HeadTrackingTests.statusDocument(try RawClient(socketPath: daemon.socketPath))
        #expect(status.health.rateLimitedMessages == limited + refusedWhileRefilling,
                "counted \(status.health.rateLimitedMessages), refused \(limited) + \(refusedWhileRefilling)")
    }
}
