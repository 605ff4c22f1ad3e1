import SceneSoundTestSupport
import Foundation
import Testing
import SceneSoundProtocol
@testable import SceneSoundServer

/// The sample cache's bounds and the burst coalescer, as units; the upload protocol's rules
/// (SPEC.md 6.6) through an in-process session.
@Suite struct SampleCacheUnitTests {
    static func sample(_ name: String, frames: Int) -> CachedSample {
        CachedSample(name: name, channelCount: 1, samples: [Float](repeating: 0.1, count: frames))
    }

    @Test func leastRecentlyUsedIsEvictedFirst() {
        var cache = SampleCache(capacityBytes: 3 * 400)  // three 100-frame samples
        cache.insert(Self.sample("a", frames: 100))
        cache.insert(Self.sample("b", frames: 100))
        cache.insert(Self.sample("c", frames: 100))
        _ = cache.use("a")  // b is now the oldest
        #expect(cache.insert(Self.sample("d", frames: 100)) == ["b"])
        #expect(cache.contains("a") && cache.contains("c") && cache.contains("d") && !cache.contains("b"))
        #expect(cache.insert(Self.sample("big", frames: 250)) == ["c", "a", "d"])
        #expect(cache.totalBytes == 1000)
    }

    @Test func replacingASampleFreesTheOldOne() {
        var cache = SampleCache(capacityBytes: 1000)
        cache.insert(Self.sample("a", frames: 200))
        cache.insert(Self.sample("a", frames: 100))
        #expect(cache.totalBytes == 400 && cache.count == 1)
    }

    @Test func burstsWithinTheWindowAreCoalesced() {
        var coalescer = BurstCoalescer(windowSeconds: 0.1)
        let admitted = [("bell", 10.0), ("bell", 10.05), ("other", 10.05), ("bell", 10.099), ("bell", 10.15)]
            .map { coalescer.admit($0.0, atSeconds: $0.1) }
        #expect(admitted == [true, false, true, false, true])
        var off = BurstCoalescer(windowSeconds: 0)
        let first = off.admit("bell", atSeconds: 1), second = off.admit("bell", atSeconds: 1)
        #expect(first && second)
    }
}

@Suite struct SampleUploadProtocolTests {
    static let format = AudioFormat(sampleFormat: .s16le, rateHz: 48000, channels: 1)

    static func chunk(_ name: String, total: Int, offset: Int, count: Int, format: AudioFormat = format) -> Message {
        .sampleUpload(SampleUpload(name: name, format: format, totalBytes: UInt32(total), offsetBytes: UInt32(offset),
                                   pcm: ArraySlice([UInt8](repeating: 1, count: count))))
    }

    static func errorCode(_ message: Message) -> ErrorCode? {
        if case .error(let reply) = message { return reply.code }
        return nil
    }

    @Test func chunkRulesLimitsAndUnknownSounds() throws {
        let server = InProcessServer()
        let client = try server.connect()
        let play = Message.samplePlay(SamplePlay(name: "s", kind: .system, sceneID: ""))
        #expect(Self.errorCode(try client.request(play)) == .unknownSound)
        // In order: OK for each chunk, playable after the last.
        #expect(try client.request(Self.chunk("s", total: 400, offset: 0, count: 200)) == .ok)
        #expect(Self.errorCode(try client.request(play)) == .unknownSound, "incomplete uploads are not playable")
        #expect(try client.request(Self.chunk("s", total: 400, offset: 200, count: 200)) == .ok)
        guard case .samplePlaying(let playing) = try client.request(play) else { throw TestFailure("the finished sample does not play") }
        // The same sound again within the coalescing window (the loop's clock stands still): it
        // is merged into the one playing, and says so at once.
        guard case .samplePlaying(let merged) = try client.request(play) else { throw TestFailure("no SAMPLE_PLAYING") }
        #expect(client.take { $0.message == .playbackEnded(PlaybackEnded(playID: merged.playID, reason: .coalesced)) } != nil)
        // The first ends once its last sample is out (200 frames and the limiter's look-ahead).
        server.render(blocks: 2)
        #expect(client.take { $0.message == .playbackEnded(PlaybackEnded(playID: playing.playID, reason: .completed)) } != nil)
        // Out of order: invalid_argument, and the upload is abandoned.
        #expect(try client.request(Self.chunk("t", total: 600, offset: 0, count: 200)) == .ok)
        #expect(Self.errorCode(try client.request(Self.chunk("t", total: 600, offset: 400, count: 200))) == .invalidArgument)
        #expect(Self.errorCode(try client.request(Self.chunk("t", total: 600, offset: 200, count: 200))) == .invalidArgument)
        // Offset 0 restarts.
        #expect(try client.request(Self.chunk("t", total: 600, offset: 0, count: 200)) == .ok)
        #expect(try client.request(Self.chunk("t", total: 400, offset: 0, count: 200)) == .ok)
        #expect(try client.request(Self.chunk("t", total: 400, offset: 200, count: 200)) == .ok)
        // More than 30 s: limit_exceeded (8 kHz mono s16 is 16000 bytes a second).
        let slow = AudioFormat(sampleFormat: .s16le, rateHz: 8000, channels: 1)
        #expect(Self.errorCode(try client.request(Self.chunk("long", total: 16000 * 31, offset: 0, count: 200, format: slow))) == .limitExceeded)
        #expect(try client.request(Self.chunk("long", total: 16000 * 30, offset: 0, count: 200, format: slow)) == .ok)
        // Playback is not a sample kind.
        let playback = Message.samplePlay(SamplePlay(name: "s", kind: .playback, sceneID: ""))
        #expect(Self.errorCode(try client.request(playback)) == .invalidArgument)
    }
}
