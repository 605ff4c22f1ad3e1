import Foundation
import SceneSoundDSP
import SceneSoundEngine
import Testing

/// The engine says it is quiet (the server may let the output rest) once `restAfterSeconds`
/// of output have passed with nothing sounding, not before, and not long after: the daemon's
/// `--rest-after-seconds` is exactly this wait.
@Suite struct EngineRestTests {
    @Test(arguments: [0.25, 1.0])
    func quietOnceTheRestTimeOfSilenceHasPassed(restAfterSeconds: Double) throws {
        var configuration = EngineConfiguration()
        configuration.restAfterSeconds = restAfterSeconds
        let engine = Engine(hrtf: KEMAR.set, configuration: configuration)
        let block = configuration.blockFrames
        let output = UnsafeMutablePointer<Float>.allocate(capacity: block * 2)
        defer { output.deallocate() }
        // 0.1 s of a 1 kHz tone, then nothing.
        let soundFrames = 4800
        let tone: [Float] = (0 ..< soundFrames).map { frame in
            let phase = 2 * Double.pi * 1000 * Double(frame) / 48000
            return Float(0.25 * sin(phase))
        }
        let ring = AudioRing(capacityFrames: soundFrames, channelCount: 1)
        _ = tone.withUnsafeBufferPointer { ring.write($0.baseAddress!, frames: soundFrames) }
        let input = RingInput(ring: ring)
        let source = RenderSource(input: input, channelCount: 1, mode: .anchored,
                                  channelPositions: [engine.defaultScenePosition], gain: 1, hrtf: KEMAR.set,
                                  maximumFrames: block)
        #expect(engine.commands.push(.addStream(EngineStream(id: StreamID(1), source: source, input: input, sceneIndex: 0))))

        var rendered = 0, lastLoudFrame = 0
        var quietAt: Int?
        while quietAt == nil, Double(rendered) < Double(soundFrames) + (restAfterSeconds + 1) * 48000 {
            engine.render(into: output)
            if (0 ..< block * 2).contains(where: { abs(output[$0]) >= 3.1623e-5 }) { lastLoudFrame = rendered + block }
            rendered += block
            if engine.isQuiet { quietAt = rendered }
        }
        let quietFrame = try #require(quietAt, "still not quiet \(restAfterSeconds + 1) s after the sound")
        let quietSeconds = Double(quietFrame - lastLoudFrame) / 48000
        print("--rest-after-seconds \(restAfterSeconds): quiet \(quietSeconds) s after the last sounding block (the sound ended at \(Double(soundFrames) / 48000) s)")
        #expect(lastLoudFrame >= soundFrames, "the tone itself was rendered")
        #expect(quietSeconds >= restAfterSeconds && quietSeconds <= restAfterSeconds + Double(2 * block) / 48000,
                "quiet \(quietSeconds) s after the last sound, rest after \(restAfterSeconds) s")
    }
}
