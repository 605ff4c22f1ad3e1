import Foundation
import SceneSoundClient
import SceneSoundProtocol
import Testing

extension IdiomTests {
    /// A theme name and a file both play through the default connection; the second play of a
    /// file comes from the server's cache: the file is garbled in between (same size and
    /// modification time, so the same cache name), and it still plays as it was.
    @Test func systemAndAlertSoundsPlayOnceUploadedFromTheCache() throws {
        let daemon = try RealDaemon()
        daemon.becomeDefault()
        let bell = try #require(try SceneSound.playSystemSound("bell", spatialExperience: .bypassed))
        #expect(try bell.waitUntilFinished(timeoutSeconds: 10) == .completed)
        try daemon.waitForRenderedAudio(seconds: 0.1)

        let tone = try writeTone(directory: daemon.directory, name: "tone.wav", seconds: 0.3, rateHz: 44100)
        let alert = try #require(try SceneSound.playAlertSound(tone.path, spatialExperience: .headTracked(.front)))
        #expect(try alert.waitUntilFinished(timeoutSeconds: 10) == .completed)
        try daemon.waitForRenderedAudio(seconds: 0.1)

        let attributes = try FileManager.default.attributesOfItem(atPath: tone.path)
        let garbage = Data(repeating: 0x55, count: (attributes[.size] as! NSNumber).intValue)
        try garbage.write(to: tone)
        try FileManager.default.setAttributes([.modificationDate: attributes[.modificationDate]!], ofItemAtPath: tone.path)
        let again = try #require(try SceneSound.playSystemSound(tone.path, spatialExperience: .bypassed))
        #expect(try again.waitUntilFinished(timeoutSeconds: 10) == .completed)

        #expect(throws: ClientError.self) { try SceneSound.playSystemSound("no-such-event-id-anywhere") }

        let segments = audibleSegments(try daemon.stopAndReadMix())
        // The bell (its loud part about 0.1 s), then the tone twice, 0.3 s each.
        #expect(segments.count == 3, "\(segments)")
        guard segments.count == 3 else { return }
        #expect(segments[0].count > 48000 / 20, "the bell lasted \(segments[0].count) frames")
        for tone in segments[1...] { #expect(abs(tone.count - 14400) < 960, "tone lasted \(tone.count) frames") }
    }
}
