import SceneSoundTestSupport
import Foundation
import SceneSoundClient
import SceneSoundProtocol
import Testing

extension IdiomTests {
    /// A 44.1 kHz file (converted to the server's 48 kHz) plays once, then three times with
    /// `numberOfLoops = 2`; after each end `currentTime` is back at 0.
    @Test func playerPlaysToTheEndAndLoopsAsAsked() throws {
        let daemon = try RealDaemon()
        daemon.becomeDefault()
        let url = try writeTone(directory: daemon.directory, name: "tone.wav", seconds: 0.25, rateHz: 44100)
        let player = try SceneSoundPlayer(contentsOf: url)
        #expect(abs(player.duration - 0.25) < 1e-6)
        player.intendedSpatialExperience = .bypassed
        try player.play()
        #expect(try player.waitUntilFinished(timeoutSeconds: 10))
        #expect(!player.isPlaying)
        #expect(player.currentTime == 0)
        try daemon.waitForRenderedAudio(seconds: 0.1)
        player.numberOfLoops = 2
        try player.play()
        #expect(try player.waitUntilFinished(timeoutSeconds: 10))

        let segments = audibleSegments(try daemon.stopAndReadMix())
        #expect(segments.map { Double($0.count) / 48000 }.count == 2, "\(segments)")
        guard segments.count == 2 else { return }
        #expect(abs(segments[0].count - 12000) < 480, "once: \(segments[0].count) frames")
        #expect(abs(segments[1].count - 36000) < 480, "three times: \(segments[1].count) frames; \(segments)")
    }

    /// `play()` after `pause()` goes on where it paused (the two parts add up to the file, not
    /// more), and the position holds while paused. `currentTime` is what the server's credit
    /// says it took (a grant every 4 ms tick, at least a block), and the pause reaches the render
    /// a message later: a trial the machine stalled in between measures the host (ci58: 35 ms
    /// more played than `currentTime` said) and is taken again when it misses (`takeTrials`).
    @Test func playerResumesAfterPause() throws {
        try MachineStallWatch.takeMeasuredTrials("a player paused and resumed") { _ in
            var trial = MeasuredTrial()
            let daemon = try RealDaemon()
            daemon.becomeDefault()
            let url = try writeTone(directory: daemon.directory, name: "tone.wav", seconds: 1, rateHz: 48000)
            let player = try SceneSoundPlayer(contentsOf: url)
            player.intendedSpatialExperience = .bypassed
            try player.play()
            try waitUntil(timeoutSeconds: 10, "0.4 s played") { player.currentTime >= 0.4 }
            player.pause()
            let pausedAt = player.currentTime
            trial.expect(!player.isPlaying, "playing after pause()")
            trial.expect((0.4..<0.8).contains(pausedAt), "paused at \(pausedAt) s")  // late under load, never early
            try daemon.waitForRenderedAudio(seconds: 0.2)
            trial.expect(player.currentTime == pausedAt, "the position moved while paused: \(pausedAt) → \(player.currentTime) s")
            try player.play()
            trial.expect(try player.waitUntilFinished(timeoutSeconds: 10), "not finished after resuming")

            let segments = audibleSegments(try daemon.stopAndReadMix())
            guard segments.count == 2 else { return trial.failing("\(segments.count) sounding segments, 2 expected: \(segments)") }
            let first = Double(segments[0].count) / 48000, total = Double(segments[0].count + segments[1].count) / 48000
            trial.print("played \(first) s before the pause (currentTime said \(pausedAt) s), \(total) s in all")
            trial.expect(abs(first - pausedAt) < 0.03, "played \(first) s before the pause, currentTime said \(pausedAt) s")
            trial.expect(abs(total - 1) < 0.03, "played \(total) s of a 1 s file")
            return trial
        }
    }

    /// `numberOfLoops = -1` plays until `stop()`, at the volume and scene asked; `stop()` keeps
    /// the position, as AVAudioPlayer's does, and frees the server's stream. A 2 s file stopped
    /// in its second pass: the position is then well inside the file (a short file could be
    /// stopped right at a pass boundary, its position rightly 0).
    @Test func playerLoopsForeverUntilStopped() throws {
        let daemon = try RealDaemon()
        daemon.becomeDefault()
        let url = try writeTone(directory: daemon.directory, name: "tone.wav", seconds: 2, rateHz: 48000, channels: 2)
        let player = try SceneSoundPlayer(contentsOf: url)
        player.numberOfLoops = -1
        player.volume = -12
        player.intendedSpatialExperience = .headTracked(.scene(identifier: "player"))
        try player.play()
        try daemon.waitForRenderedAudio(seconds: 2.5)
        #expect(player.isPlaying)
        #expect(try !player.waitUntilFinished(timeoutSeconds: 0.1))
        let stream = try #require(try daemon.status().streams.first { $0.scene == "player" })
        #expect(stream.volumeDecibels == -12)
        #expect(stream.spatial == "anchored")
        #expect(stream.state == "playing")
        player.stop()
        #expect(!player.isPlaying)
        #expect(try player.waitUntilFinished(timeoutSeconds: 0))
        let stoppedAt = player.currentTime
        #expect(stoppedAt > 0.3 && stoppedAt < 1.9, "stopped at \(stoppedAt) s")
        #expect(try daemon.status().streams.isEmpty)

        let segments = audibleSegments(try daemon.stopAndReadMix())
        #expect(segments.count == 1 && segments[0].count > 48000 * 5 / 2, "\(segments)")
    }
}
