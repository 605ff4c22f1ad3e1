import Testing
import SceneSoundDSP
@testable import SceneSoundEngine

/// Alerts in the engine: playback streams ducked with ramps, alerts deaf to their scene's
/// muffling (a minimized window's alert stays loud). Rendered block by block, offline.
@Suite struct AlertSemanticsTests {
    static let block = 256

    /// A stream whose ring holds `samples` (mono, plain stereo so levels are exact).
    static func stream(_ id: StreamID, _ samples: [Float], engine: Engine, sceneIndex: Int = 0) -> EngineStream {
        let ring = AudioRing(capacityFrames: samples.count, channelCount: 1)
        samples.withUnsafeBufferPointer { _ = ring.write($0.baseAddress!, frames: samples.count) }
        let input = RingInput(ring: ring)
        let source = RenderSource(input: input, channelCount: 1, mode: .off, channelPositions: [engine.defaultScenePosition],
                                  gain: 1, hrtf: engine.hrtf, maximumFrames: block)
        return EngineStream(id: id, source: source, input: input, sceneIndex: sceneIndex)
    }

    /// The left channel's level at the end of each block (the input is constant).
    static func renderBlocks(_ engine: Engine, count: Int) -> [Float] {
        var out = [Float](repeating: 0, count: block * 2)
        return (0..<count).map { _ in
            out.withUnsafeMutableBufferPointer { engine.render(into: $0.baseAddress!) }
            return abs(out[out.count - 2])
        }
    }

    static func engine() -> Engine {
        Engine(hrtf: KEMAR.set, configuration: EngineConfiguration(blockFrames: block), maximumStreams: 8, maximumScenes: 8)
    }

    @Test func playbackIsDuckedWhileAnAlertHasAudioAndRestoredWithRamps() {
        let engine = Self.engine()
        engine.commands.push(.setDucking(DuckingParameters(decibels: -12, attackSeconds: 0.05, releaseSeconds: 0.1)))
        let playback = Self.stream(1, [Float](repeating: 0.2, count: 48000), engine: engine)
        playback.ducksUnderAlerts = true
        engine.commands.push(.addStream(playback))
        _ = Self.renderBlocks(engine, count: 4)
        let alert = Self.stream(2, [Float](repeating: 0, count: 48000 / 4), engine: engine)  // silent: only its presence counts
        alert.isAlert = true
        engine.commands.push(.addStream(alert))
        let levels = Self.renderBlocks(engine, count: 100)
        let ducked = Float(0.2 * 0.251188643)
        // Attack: 50 ms ≈ 9.4 blocks, falling steadily (no jump), then held.
        #expect(levels[0] < 0.2 && levels[0] > 0.15)
        #expect(zip(levels, levels.dropFirst()).prefix(9).allSatisfy { $0.1 <= $0.0 })
        #expect(abs(levels[20] - ducked) < 1e-4)
        // The alert's 0.25 s (46.9 blocks) end; release over 100 ms back to unity.
        #expect(abs(levels[46] - ducked) < 1e-4)
        #expect(levels[50] > ducked && levels[50] < 0.2)
        #expect(abs(levels[70] - 0.2) < 1e-6)
    }

    @Test func anAlertIgnoresItsScenesMufflingAndAPlaybackStreamDoesNot() {
        let engine = Self.engine()
        // Scene 1 as the X11 tracker marks a minimized window: attenuated and low-passed.
        engine.commands.push(.setSceneLowpass(index: 1, cutoffHz: 400, gain: 0.1))
        let alert = Self.stream(1, [Float](repeating: 0.3, count: 48000), engine: engine, sceneIndex: 1)
        alert.isAlert = true
        engine.commands.push(.addStream(alert))
        #expect(abs((Self.renderBlocks(engine, count: 4).last ?? 0) - 0.3) < 1e-4)

        let muffled = Self.engine()
        muffled.commands.push(.setSceneLowpass(index: 1, cutoffHz: 400, gain: 0.1))
        muffled.commands.push(.addStream(Self.stream(1, [Float](repeating: 0.3, count: 48000), engine: muffled, sceneIndex: 1)))
        // Scene muffling glides in over ~30 ms (never a switch): 12 blocks are 64 ms.
        let levels = Self.renderBlocks(muffled, count: 12)
        #expect(levels[0] > 0.2, "muffling must ramp in, not switch")
        #expect(abs((levels.last ?? 0) - 0.03) < 1e-4)
    }
}
