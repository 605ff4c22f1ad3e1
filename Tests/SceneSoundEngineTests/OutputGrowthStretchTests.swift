import Foundation
import SceneSoundDSP
import SceneSoundEngine
import Testing

/// The output's buffer grown at once reaches every stream the engine renders: a captured app's
/// (a concealing input) gives the growth as a stretch, a client's (which writes ahead of the
/// output, and has no continuation to give) reads on from its queue.
@Suite struct OutputGrowthStretchTests {
    @Test func theEngineHandsTheGrowthToItsConcealingInputs() {
        let configuration = EngineConfiguration()
        let engine = Engine(hrtf: KEMAR.set, configuration: configuration)
        let block = configuration.blockFrames
        let output = UnsafeMutablePointer<Float>.allocate(capacity: block * 2)
        defer { output.deallocate() }
        let captured = RingInput(ring: AudioRing(capacityFrames: 8 * block, channelCount: 1), concealsDrySpells: true)
        let client = RingInput(ring: AudioRing(capacityFrames: 8 * block, channelCount: 1))
        for (index, input) in [captured, client].enumerated() {
            input.setIdle(false)
            let source = RenderSource(input: input, channelCount: 1, mode: .anchored,
                                      channelPositions: [engine.defaultScenePosition], gain: 1, hrtf: KEMAR.set,
                                      maximumFrames: block)
            #expect(engine.commands.push(.addStream(EngineStream(id: StreamID(index + 1), source: source, input: input,
                                                                 sceneIndex: 0))))
        }
        var next = 0
        func write(_ frames: Int) {
            let tone = (next ..< next + frames).map { Float(0.5 * sin(2 * Double.pi * 500 * Double($0) / 48_000)) }
            for input in [captured, client] { _ = tone.withUnsafeBufferPointer { input.ring.write($0.baseAddress!, frames: frames) } }
            next += frames
        }
        write(2 * block)
        for _ in 0 ..< 8 {
            write(block)
            engine.render(into: output)
        }
        engine.stretchStreamsArrivingInRealTime(byFrames: 2 * block)
        for _ in 0 ..< 2 { engine.render(into: output) }
        #expect(captured.stretchedFrameCount == 2 * block && captured.starvedFrameCount == 0)
        #expect(captured.ring.availableFrames == 2 * block, "the captured stream's queue kept")
        #expect(client.stretchedFrameCount == 0 && client.ring.availableFrames == 0, "the client's queue read on")
    }
}
