import SceneSoundTestSupport
import Foundation
import SceneSoundClient
import SceneSoundProtocol
import Synchronization
import Testing

extension IdiomTests {
    /// The block fills exactly what it is asked, at the pace the server plays (beyond the
    /// server's 0.4 s buffer, a second of audio takes wall time, not a burst), and ending it
    /// plays all of it.
    @Test func sourceNodeIsPulledAtTheOutputsPace() throws {
        let daemon = try RealDaemon()
        daemon.becomeDefault()
        let rendered = Atomic<Int>(0)
        let total = 48000
        let node = try SceneSoundSourceNode(sampleRateHz: 48000, channels: 1, spatialExperience: .bypassed) { frames, buffer in
            #expect(buffer.count == frames)
            let start = rendered.load(ordering: .relaxed)
            let count = min(frames, total - start)
            for frame in 0..<count { buffer[frame] = 0.25 * Float(sin(2 * Double.pi * 1000 * Double(start + frame) / 48000)) }
            rendered.store(start + count, ordering: .relaxed)
            return count
        }
        let started = Date()
        try node.start()
        #expect(node.isRunning)
        #expect(try node.waitUntilFinished(timeoutSeconds: 10))
        let wallSeconds = Date().timeIntervalSince(started)
        #expect(!node.isRunning)
        #expect(rendered.load(ordering: .relaxed) == total)
        #expect(wallSeconds > 0.5, "one second of audio was pulled in \(wallSeconds) s")

        let segments = audibleSegments(try daemon.stopAndReadMix())
        #expect(segments.count == 1 && abs((segments.first?.count ?? 0) - total) < 480, "\(segments)")
    }

    /// `stop()` ends an endless source: the block is not called afterwards, the stream is gone.
    @Test func sourceNodeStops() throws {
        let daemon = try RealDaemon()
        daemon.becomeDefault()
        let calls = Atomic<Int>(0)
        let node = try SceneSoundSourceNode(sampleRateHz: 44100, channels: 2, spatialExperience: .fixed) { frames, buffer in
            calls.add(1, ordering: .relaxed)
            for index in buffer.indices { buffer[index] = 0.1 }
            return frames
        }
        try node.start()
        try waitUntil(timeoutSeconds: 10, "the block to be called") { calls.load(ordering: .relaxed) > 10 }
        #expect(try daemon.status().streams.map(\.spatial) == ["head-locked"])
        node.stop()
        let after = calls.load(ordering: .relaxed)
        #expect(!node.isRunning)
        try daemon.waitForRenderedAudio(seconds: 0.1)
        #expect(calls.load(ordering: .relaxed) == after)
        #expect(try daemon.status().streams.isEmpty)
        #expect(throws: ClientError.self) { try SceneSoundSourceNode(sampleRateHz: 48000, channels: 9) { frames, _ in frames } }
    }
}
