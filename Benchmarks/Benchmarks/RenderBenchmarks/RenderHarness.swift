import SceneSoundDSP
import SceneSoundEngine

/// The ring scene running through the real-time `Engine`: each source is an `EngineStream`
/// fed through its `AudioRing`, added with `.addStream` on the command queue and placed with
/// `.placeScene`; the head pose arrives as `.setHeadPose` before every block, as from the
/// server. Everything is allocated in `init`; `renderBlock()` is what the benchmark measures.
final class EngineRingHarness {
    let engine: Engine
    let sourceCount: Int
    private let rings: [AudioRing]
    private let noise: UnsafeMutableBufferPointer<Float>
    private var noisePosition = 0
    private let output: UnsafeMutablePointer<Float>
    private var renderedFrames = 0

    init(sourceCount: Int) {
        let configuration = RingScene.configuration
        let hrtf = RingScene.hrtf
        self.sourceCount = sourceCount
        engine = Engine(hrtf: hrtf, configuration: configuration, maximumStreams: sourceCount,
                        maximumScenes: sourceCount)
        noise = .allocate(capacity: Int(RingScene.sampleRateHz))
        _ = noise.initialize(from: NoiseTable(frames: noise.count).samples)
        output = .allocate(capacity: 2 * configuration.blockFrames)

        var rings: [AudioRing] = []
        for index in 0..<sourceCount {
            // Two blocks of room: the producer refills one block ahead of the render.
            let ring = AudioRing(capacityFrames: 4 * configuration.blockFrames, channelCount: 1)
            let input = RingInput(ring: ring)
            input.setIdle(false)
            let position = RingScene.position(ofSource: index, count: sourceCount)
            let source = RenderSource(input: input, channelCount: 1, mode: .anchored, channelPositions: [position],
                                      gain: RingScene.sourceGain(count: sourceCount), hrtf: hrtf,
                                      maximumFrames: configuration.blockFrames)
            let stream = EngineStream(id: StreamID(index + 1), source: source, input: input, sceneIndex: index)
            precondition(engine.commands.push(.placeScene(index: index, position: position, widthMetres: 0)))
            precondition(engine.commands.push(.addStream(stream)))
            rings.append(ring)
        }
        self.rings = rings
        precondition(engine.commands.push(.setHeadPose(RingScene.headPose(atSeconds: 0), glide: false)))
        // The engine applies at most 512 commands a block; render until every stream is in
        // and every voice has passed its first block (which sets up its filters).
        while engine.renderer.sources.count < sourceCount { renderBlock() }
        renderBlock()
    }

    deinit {
        noise.deallocate()
        output.deallocate()
    }

    /// One block as the server and the render thread see it: refill each ring (the server's
    /// event loop), send the new head pose, render.
    func renderBlock() {
        let block = RingScene.blockFrames
        if noisePosition + block > noise.count { noisePosition = 0 }
        for (index, ring) in rings.enumerated() where ring.availableFrames < block {
            // Each ring reads the table from its own offset: mutually uncorrelated sources.
            let offset = (noisePosition + index * 97) % (noise.count - block)
            ring.write(noise.baseAddress! + offset, frames: block)
        }
        noisePosition += block
        renderedFrames += block
        let pose = RingScene.headPose(atSeconds: Double(renderedFrames) / RingScene.sampleRateHz)
        _ = engine.commands.push(.setHeadPose(pose, glide: true))
        engine.render(into: output)
    }
}

/// The same scene straight through `SpatialRenderer` (no command queue, no rings): the render
/// core alone.
final class RendererRingHarness {
    let renderer: SpatialRenderer
    private let noise: UnsafeMutableBufferPointer<Float>
    private let output: UnsafeMutablePointer<Float>
    private var renderedFrames = 0
    private let channelCount: Int

    /// `rendering`: the output device's (speakers render into its channels).
    /// `desk`: the features a desk adds to the ring — every source within the near field (its
    /// ring at 0.5–0.8 m, below the set's measurement distance), one more source a 5.1 stream
    /// (five virtual speakers and the LFE), and a headphone EQ in the mix.
    init(sourceCount: Int, room: Room = .none, desk: Bool = false, rendering: OutputRendering = .headphones) {
        var configuration = RingScene.configuration
        configuration.room = room
        let hrtf = RingScene.hrtf
        renderer = SpatialRenderer(hrtf: hrtf, configuration: configuration, maximumSources: sourceCount + 1)
        renderer.setRendering(rendering)  // no source yet: at once
        channelCount = rendering.channelCount
        noise = .allocate(capacity: Int(RingScene.sampleRateHz))
        _ = noise.initialize(from: NoiseTable(frames: noise.count).samples)
        output = .allocate(capacity: channelCount * configuration.blockFrames)
        for index in 0..<sourceCount {
            var position = RingScene.position(ofSource: index, count: sourceCount)
            if desk { position = position * ((0.5 + 0.3 * Double(index % 4) / 3) / RingScene.radiusMetres) }
            let source = RenderSource(input: LoopingNoiseInput(table: noise, offset: index * 4801), channelCount: 1,
                                      mode: .anchored, channelPositions: [position],
                                      gain: RingScene.sourceGain(count: sourceCount), hrtf: hrtf,
                                      maximumFrames: configuration.blockFrames)
            renderer.add(source)
        }
        if desk {
            let surround = RenderSource(input: LoopingNoiseInput(table: noise, offset: 12345, channelCount: 6),
                                        channelCount: 6, mode: .anchored,
                                        channelPositions: [Vector3](repeating: Vector3(x: 0, y: 0, z: -0.6), count: 6),
                                        gain: RingScene.sourceGain(count: sourceCount), hrtf: hrtf,
                                        maximumFrames: configuration.blockFrames)
            renderer.add(surround)
            let eq = ParametricEQ(preampDecibels: -6, filters: [
                .init(shape: .lowShelf, frequencyHz: 105, gainDecibels: 4, q: 0.7),
                .init(shape: .peaking, frequencyHz: 1000, gainDecibels: 6, q: 1.41),
                .init(shape: .peaking, frequencyHz: 3000, gainDecibels: -3, q: 2),
                .init(shape: .highShelf, frequencyHz: 10000, gainDecibels: -2, q: 0.7),
            ])
            renderer.headphoneEQ.use(try! HeadphoneEQFilter(eq, sampleRateHz: configuration.sampleRateHz))
        }
        renderer.setHeadPose(RingScene.headPose(atSeconds: 0), glide: false)
        // Past the first block and the EQ's fade in: the steady state is measured.
        for _ in 0..<8 { renderBlock() }
    }

    deinit {
        noise.deallocate()
        output.deallocate()
    }

    func renderBlock() {
        renderedFrames += RingScene.blockFrames
        renderer.setHeadPose(RingScene.headPose(atSeconds: Double(renderedFrames) / RingScene.sampleRateHz))
        renderer.render(into: output, channelCount: channelCount)
    }
}

/// Changes of the output device's rendering back to back (binaural → 5.1 speakers → two
/// speakers → plain stereo → binaural …) while `sourceCount` sources play in a small room, into
/// an 8-channel output: the blocks that render two renderings and crossfade them.
final class RenderingChangeHarness {
    let renderer: SpatialRenderer
    private let noise: UnsafeMutableBufferPointer<Float>
    private let output: UnsafeMutablePointer<Float>
    private var renderedFrames = 0
    private let renderings: [OutputRendering] = [
        .init(method: .speakers(.surround51)), .init(method: .speakers(.stereo)),
        .init(method: .speakers(.surround71), spatial: .off), .headphones,
    ]
    private var next = 0

    init(sourceCount: Int) {
        var configuration = RingScene.configuration
        configuration.room = .small
        let hrtf = RingScene.hrtf
        renderer = SpatialRenderer(hrtf: hrtf, configuration: configuration, maximumSources: sourceCount)
        noise = .allocate(capacity: Int(RingScene.sampleRateHz))
        _ = noise.initialize(from: NoiseTable(frames: noise.count).samples)
        output = .allocate(capacity: 8 * configuration.blockFrames)
        for index in 0..<sourceCount {
            let source = RenderSource(input: LoopingNoiseInput(table: noise, offset: index * 4801), channelCount: 1,
                                      mode: .anchored, channelPositions: [RingScene.position(ofSource: index, count: sourceCount)],
                                      gain: RingScene.sourceGain(count: sourceCount), hrtf: hrtf,
                                      maximumFrames: configuration.blockFrames)
            renderer.add(source)
        }
        renderer.setHeadPose(RingScene.headPose(atSeconds: 0), glide: false)
        renderBlock()
    }

    deinit {
        noise.deallocate()
        output.deallocate()
    }

    func renderBlock() {
        if !renderer.isChangingRendering {
            renderer.setRendering(renderings[next])
            next = (next + 1) % renderings.count
        }
        renderedFrames += RingScene.blockFrames
        renderer.setHeadPose(RingScene.headPose(atSeconds: Double(renderedFrames) / RingScene.sampleRateHz))
        renderer.render(into: output, channelCount: 8)
    }
}

/// Live HRTF switches, one after another, while `sourceCount` sources play in a small room: KEMAR and the same
/// set with its ITD scaled (another head) take turns. Every switch is built in set-up (as the
/// server builds it, off the render thread) and every finished one is kept (the server frees
/// them), so a block measures the render thread's share alone: beginning a switch, rendering
/// both stages, crossfading, retiring the old one.
final class HRTFSwitchHarness {
    let renderer: SpatialRenderer
    private let noise: UnsafeMutableBufferPointer<Float>
    private let output: UnsafeMutablePointer<Float>
    private var renderedFrames = 0
    private var switches: [HRTFSwitch] = []
    private var next = 0
    private var retired: [HRTFSwitch] = []

    init(sourceCount: Int, blocks: Int) {
        var configuration = RingScene.configuration
        configuration.room = .small  // the reverb's diffuse-field filter is switched too
        let kemar = RingScene.hrtf
        renderer = SpatialRenderer(hrtf: kemar, configuration: configuration, maximumSources: sourceCount)
        noise = .allocate(capacity: Int(RingScene.sampleRateHz))
        _ = noise.initialize(from: NoiseTable(frames: noise.count).samples)
        output = .allocate(capacity: 2 * configuration.blockFrames)
        var streams: [EngineStream] = []
        for index in 0..<sourceCount {
            let input = LoopingNoiseInput(table: noise, offset: index * 4801)
            let source = RenderSource(input: input, channelCount: 1, mode: .anchored,
                                      channelPositions: [RingScene.position(ofSource: index, count: sourceCount)],
                                      gain: RingScene.sourceGain(count: sourceCount), hrtf: kemar,
                                      maximumFrames: configuration.blockFrames)
            renderer.add(source)
            // The switch only needs each stream's source.
            streams.append(EngineStream(id: StreamID(index + 1), source: source,
                                        input: RingInput(ring: AudioRing(capacityFrames: 1, channelCount: 1)), sceneIndex: 0))
        }
        let stages = [BinauralStage(hrtf: kemar.scalingInterauralDelays(by: 1.1), configuration: configuration), renderer.stage]
        // A switch takes its silent pass plus 30 ms: fewer than ten 256-frame blocks.
        for k in 0..<(blocks / 8 + 2) {
            switches.append(HRTFSwitch(stage: stages[k % 2], streams: streams, blockFrames: configuration.blockFrames))
        }
        retired.reserveCapacity(switches.count)
        renderer.setHeadPose(RingScene.headPose(atSeconds: 0), glide: false)
        renderBlock()
    }

    deinit {
        noise.deallocate()
        output.deallocate()
    }

    func renderBlock() {
        if renderer.canSwitch && next < switches.count {
            renderer.beginSwitch(switches[next])
            next += 1
        }
        renderedFrames += RingScene.blockFrames
        renderer.setHeadPose(RingScene.headPose(atSeconds: Double(renderedFrames) / RingScene.sampleRateHz))
        renderer.render(into: output)
        if let done = renderer.takeFinishedSwitch() { retired.append(done) }
    }
}
