import Foundation
import SceneSoundCapture
import SceneSoundTestSupport
import Testing

/// While capturing, ours is the default sink, so the desktop's volume keys and slider act on
/// it: their volume and mute are heard on the real sink, the captures do not change, and the
/// real sink's own changes show on ours.
@Suite(.serialized) struct VolumeForwardingTests {
    /// `pactl get-sink-volume` / `get-sink-mute` of `sink`: the first channel's percentage, and the mute.
    static func volume(of sink: String, on server: PrivateSoundServer) throws -> (percent: Int, isMuted: Bool) {
        let volume = try server.pactl(["get-sink-volume", sink])
        let mute = try server.pactl(["get-sink-mute", sink])
        let percent = volume.split(separator: "/").dropFirst().first.flatMap {
            Int($0.trimmingCharacters(in: .whitespaces).dropLast())
        }
        return (percent ?? -1, mute.contains("yes"))
    }

    @Test(arguments: PrivateSoundServer.Kind.allCases)
    func theDefaultSinksVolumeAndMuteAreHeardOnTheRealSink(kind: PrivateSoundServer.Kind) throws {
        let fixture = try CaptureOnServerTests.Fixture(kind, excluded: ["direct"])
        let server = fixture.server
        try fixture.startCapturing()
        #expect(try waitUntil(timeoutSeconds: 5) { try server.defaultSinkName() == CaptureSinkProperties.sinkName })
        let real = PrivateSoundServer.sinkName
        let (file, source) = try fixture.noise(seconds: 30, seed: 11)
        // A captured app, and one playing on the real sink (excluded: let go there) that
        // stands for what is heard there, SceneSound's output.
        _ = try fixture.play(file)
        let consumer = fixture.consumer
        let stream = try fixture.firstCapturedStream()
        _ = try fixture.play(file, ["--client-name=direct"])
        let level = { (what: String) throws -> Double in
            let recording = try MonitorRecording(server: server, file: temporaryFile("\(what).raw"))
            let heard = recording.finish(afterFrames: 48_000, timeoutSeconds: 10)
            #expect(heard.count >= 2 * 48_000, "\(kind): the real sink was recorded for \(heard.count / 2) frames (\(what))")
            return TestSignal.rmsDecibels(heard[(heard.count / 2)...])
        }
        // A null sink may start a new stream up to 2 s after it connects, and a reading can
        // catch its onset (one fresh-clone run read 8.5 dB low): the level at 100 % is the
        // first reading that sounds and agrees with the one before it.
        var readings: [Double] = []
        let settled = { readings.count >= 2 && readings[readings.count - 1] > -40
            && abs(readings[readings.count - 1] - readings[readings.count - 2]) < 0.5 }
        while !settled() && readings.count < 8 { readings.append(try level("unity")) }
        try #require(settled(), "\(kind): the real sink's level did not settle: \(readings) dBFS")
        let unity = readings[readings.count - 1]
        print("\(kind): the real sink at 100 %: \(unity) dBFS")

        try server.pactl(["set-sink-volume", "@DEFAULT_SINK@", "50%"])
        #expect(try waitUntil(timeoutSeconds: 5) { try Self.volume(of: real, on: server).percent == 50 },
                "\(kind): the real sink is at \(String(describing: try? Self.volume(of: real, on: server)))")
        let halved = try level("halved") - unity
        print("\(kind): 50 % on the default sink changed the real sink by \(halved) dB")
        // 50 % is -18 dB (PulseAudio's volumes are cubic).
        #expect(abs(halved - -18.06) < 1.5, "\(kind): 50 % on the default sink changed the real sink by \(halved) dB")
        // The slider stays where it was put.
        #expect(try Self.volume(of: CaptureSinkProperties.sinkName, on: server).percent == 50)

        // The capture does not change with it: still the file, at its own level.
        let before = consumer.audio(of: stream.streamIndex).count
        #expect(consumer.wait(timeoutSeconds: 10) { $0.framesWhileLocked(stream.streamIndex) >= before / 2 + 48_000 })
        let captured = Array(consumer.audio(of: stream.streamIndex)[before...])
        let match = try #require(TestSignal.match(captured: captured, source: source), "\(kind): the capture is not the file")
        fixture.expectExact("\(kind): the capture", match)

        try server.pactl(["set-sink-mute", "@DEFAULT_SINK@", "1"])
        #expect(try waitUntil(timeoutSeconds: 5) { try Self.volume(of: real, on: server).isMuted })
        let muted = try level("muted") - unity
        print("\(kind): muting the default sink changed the real sink by \(muted) dB")
        #expect(muted < -60, "\(kind): muted, the real sink changed by \(muted) dB only")
        try server.pactl(["set-sink-mute", "@DEFAULT_SINK@", "0"])
        #expect(try waitUntil(timeoutSeconds: 5) { try !Self.volume(of: real, on: server).isMuted })

        // Another program sets the real sink: ours shows it, and nothing flips back.
        try server.pactl(["set-sink-volume", real, "30%"])
        #expect(try waitUntil(timeoutSeconds: 5) { try Self.volume(of: CaptureSinkProperties.sinkName, on: server).percent == 30 },
                "\(kind): ours shows \(String(describing: try? Self.volume(of: CaptureSinkProperties.sinkName, on: server)))")
        try server.pactl(["set-sink-volume", "@DEFAULT_SINK@", "40%"])
        #expect(try waitUntil(timeoutSeconds: 5) { try Self.volume(of: real, on: server).percent == 40 })
        #expect(!(try waitUntil(timeoutSeconds: 1) {
            try Self.volume(of: real, on: server).percent != 40 || Self.volume(of: CaptureSinkProperties.sinkName, on: server).percent != 40
        }), "\(kind): the volumes did not settle at 40 %")

        // Stopped, the real sink keeps the volume the user set.
        #expect(fixture.capture.stop())
        #expect(try waitUntil(timeoutSeconds: 5) { try server.defaultSinkName() == real })
        #expect(try Self.volume(of: real, on: server) == (40, false))
    }

    /// With the default sink at 50 %, a short sound's capture is still the sound from its first
    /// sample: the mix the onset is recovered from is recorded after our sink's volume.
    @Test(arguments: PrivateSoundServer.Kind.allCases)
    func anEventSoundIsCapturedWholeWithTheDefaultSinkTurnedDown(kind: PrivateSoundServer.Kind) throws {
        let fixture = try CaptureOnServerTests.Fixture(kind)
        try fixture.startCapturing()
        #expect(try waitUntil(timeoutSeconds: 5) { try fixture.server.defaultSinkName() == CaptureSinkProperties.sinkName })
        try fixture.server.pactl(["set-sink-volume", "@DEFAULT_SINK@", "50%"])
        // Nothing plays: the real sink is kept running while it is read (`keepingRunning`).
        #expect(try MonitorRecording.keepingRunning(on: fixture.server) {
            try waitUntil(timeoutSeconds: 5) { try Self.volume(of: PrivateSoundServer.sinkName, on: fixture.server).percent == 50 }
        }, "\(kind): the real sink is at \(String(describing: try? Self.volume(of: PrivateSoundServer.sinkName, on: fixture.server)))")
        // One sound first, not judged: on PipeWire the first sound after the change lost its
        // start once in about ten runs (3 plays each), the mix it is found in likely recorded
        // while the server was still applying the volume it had reported (a known limit).
        let warmUp = try fixture.play(fixture.noise(seconds: 0.1, seed: 12).file, ["--property=media.role=event"])
        #expect(warmUp.waitForExit() == 0)
        #expect(fixture.consumer.wait(timeoutSeconds: 5) { $0.endedStreamsWhileLocked.count == 1 })
        let frameCount = ShortSoundTests.eventSound().count
        for (play, capture) in try ShortSoundTests.captureEventSound(fixture).enumerated() {
            print("\(kind) at 50 %, play \(play + 1): the capture is the sound for its first \(capture.exactFrames) of \(frameCount) frames")
            ShortSoundTests.expectWhole(capture, "\(kind) at 50 %, play \(play + 1)", fixture)
        }
    }
}
