import CCPUFeatures
import SceneSoundDSP
import SceneSoundPlatform
#if canImport(Glibc)
import Glibc
#endif

/// The device-independent render core: mixes every source into one interleaved stereo
/// block per call — binaural voices, plain-stereo streams, the room, the limiter.
///
/// Everything it touches while rendering is allocated up front. It is owned by one thread
/// (the render thread, or the caller of an offline render); nothing here is thread-safe.
public final class SpatialRenderer {
    public let configuration: EngineConfiguration
    /// The HRTF set, its voices' mix and its bus: replaced by a live switch (`beginSwitch`).
    @exclusivity(unchecked) public private(set) var stage: BinauralStage
    public var hrtf: HRTFSet { stage.hrtf }
    public var voiceMix: SpectralVoiceMix { stage.voiceMix }
    public var bus: AmbisonicBus { stage.bus }
    @exclusivity(unchecked) public private(set) var sources: ContiguousArray<RenderSource>
    public let maximumSources: Int

    /// The pose the last binaural block ended at (where the next one glides from), and the
    /// next pose's, unless `snapPose` (a pose set without a glide).
    @exclusivity(unchecked) private var renderedPose = HeadPose.neutral
    @exclusivity(unchecked) private var targetPose = HeadPose.neutral
    @exclusivity(unchecked) private var snapPose = false
    /// How far the binaural render follows the head (1) or the neutral head (0, `.fixed`): a
    /// change between the two turns the scene over `headShareGlideSeconds` (smoothstep), as a
    /// recenter glides: a jump of tens of degrees in one block is a click on a tone.
    @exclusivity(unchecked) private var headShare = 1.0
    static let headShareGlideSeconds = 0.3
    /// The output device's rendering (binaural or speakers) and a change of it crossfading.
    let outputs: OutputRenderings
    private let subBlockFrames: Int
    let left: UnsafeMutablePointer<Float>
    let right: UnsafeMutablePointer<Float>
    let send: UnsafeMutablePointer<Float>
    /// This block's sources that render span by span (indices into `sources`).
    private let spanSources: UnsafeMutablePointer<Int>
    /// While an HRTF switch crossfades: the outgoing stage's render and the incoming one's.
    private let outgoing: (left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>)
    private let incoming: (left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>)
    @exclusivity(unchecked) private var switching: HRTFSwitch?
    @exclusivity(unchecked) private var finishedSwitch: HRTFSwitch?
    /// Frames rendered since the switch began; the silent first pass's length.
    @exclusivity(unchecked) private var switchFrames = 0
    @exclusivity(unchecked) private var switchPrerollFrames = 0
    private let switchFadeFrames: Int
    let reverb: LateReverb
    public let limiter: Limiter
    /// The listener's headphone equalization, between the binaural mix and the limiter.
    public let headphoneEQ: HeadphoneEqualizer
    public let governor: OverloadGovernor
    /// Frames a source keeps rendering after its input ends, so filters and delays ring out
    /// (the longer of the two stages' while a switch crossfades).
    @exclusivity(unchecked) public private(set) var ringOutFrames: Int

    /// `busFilters`: the bus decoder designed from `hrtf` (designed here when nil; pass one to
    /// share the design between renderers of the same set). `diffuseField`: the room's
    /// `DiffuseFieldResponse.filter(of: hrtf)` (likewise computed here when nil).
    public init(hrtf: HRTFSet, configuration: EngineConfiguration, maximumSources: Int = 256,
                busFilters: AmbisonicDecodeFilters? = nil, diffuseField: [Float]? = nil) {
        precondition(EngineConfiguration.blockFramesRange.contains(configuration.blockFrames))
        stage = BinauralStage(hrtf: hrtf, configuration: configuration, busFilters: busFilters, diffuseField: diffuseField)
        self.configuration = configuration
        self.maximumSources = maximumSources
        sources = []
        sources.reserveCapacity(maximumSources)
        let block = configuration.blockFrames
        subBlockFrames = block / configuration.subBlockCount
        precondition(subBlockFrames * configuration.subBlockCount == block,
                     "the block must split into equal sub-blocks of at least 128 frames")
        left = .allocate(capacity: block); left.initialize(repeating: 0, count: block)
        right = .allocate(capacity: block); right.initialize(repeating: 0, count: block)
        send = .allocate(capacity: block); send.initialize(repeating: 0, count: block)
        spanSources = .allocate(capacity: maximumSources)
        func buffer() -> UnsafeMutablePointer<Float> {
            let p = UnsafeMutablePointer<Float>.allocate(capacity: block)
            p.initialize(repeating: 0, count: block)
            return p
        }
        outgoing = (buffer(), buffer())
        incoming = (buffer(), buffer())
        switchFadeFrames = max(1, Int((Self.hrtfCrossfadeSeconds * configuration.sampleRateHz).rounded()))
        let span = configuration.voiceSpanFrames
        precondition(block % span == 0 && configuration.subBlockCount % (block / span) == 0)
        reverb = LateReverb(room: configuration.room, sampleRateHz: configuration.sampleRateHz, maximumFrames: block,
                            diffuseField: stage.diffuseField)
        limiter = Limiter(sampleRateHz: configuration.sampleRateHz,
                          thresholdDecibels: configuration.limiterThresholdDecibels)
        headphoneEQ = HeadphoneEqualizer(sampleRateHz: configuration.sampleRateHz, maximumFrames: block)
        ringOutFrames = stage.ringOutFrames
        governor = OverloadGovernor(settings: .init(maximumHRTFVoices: configuration.maximumHRTFVoices))
        outputs = OutputRenderings(configuration: configuration)
    }

    /// Bus sources summed into the field together: their inputs (read in place, a few
    /// hundred bytes each per sum) stay in the first-level cache across the sum's passes,
    /// which a sum of every source at once (896 at 1024 sources) does not.
    static let busTermsPerSum = 64

    deinit {
        left.deallocate(); right.deallocate(); send.deallocate(); spanSources.deallocate(); sumsOfSquares.deallocate()
        for p in [outgoing.left, outgoing.right, incoming.left, incoming.right] { p.deallocate() }
    }

    // MARK: A live HRTF switch

    /// How long the two stages' renders are crossfaded: tens of milliseconds, as a change of
    /// set is heard as one sound turning into another, not as a step.
    public static let hrtfCrossfadeSeconds = 0.03

    /// Whether a switch is under way (or finished and not yet handed back): another waits.
    public var canSwitch: Bool { switching == nil && finishedSwitch == nil }
    public var isSwitching: Bool { switching != nil }

    /// From the next block: renders `change`'s stage beside the current one (each source on
    /// the voices the switch brings for it), silently for one pass that fills its voices'
    /// histories, then crossfaded over `hrtfCrossfadeSeconds`; then renders it alone. Render
    /// thread; requires `canSwitch`.
    public func beginSwitch(_ change: HRTFSwitch) {
        precondition(canSwitch && change.stage.voiceMix.partitionFrames == stage.voiceMix.partitionFrames)
        change.attach()
        switching = change
        switchFrames = 0
        let block = configuration.blockFrames
        switchPrerollFrames = (change.stage.ringOutFrames + block - 1) / block * block
        ringOutFrames = max(stage.ringOutFrames, change.stage.ringOutFrames)
    }

    /// The switch that ended, holding the old stage and voices, to be released off the render
    /// thread (once taken, another switch may begin).
    public func takeFinishedSwitch() -> HRTFSwitch? {
        defer { finishedSwitch = nil }
        return finishedSwitch
    }

    /// Adds the two stages' renders into the mix, shares summing to one (the renders are
    /// correlated), the incoming one's rising once its silent pass is over; ends the switch
    /// when it reaches 1. The share follows a smoothstep, as the path crossfade does: a
    /// line's corners are kinks in a steady tone (third difference 0.00067 against 0.00028).
    private func crossfadeStages(frames: Int) {
        let start = switchFrames - switchPrerollFrames, fade = Float(switchFadeFrames)
        for n in 0..<frames {
            let g = Self.smoothstep(min(max(Float(start + n + 1) / fade, 0), 1))
            left[n] += outgoing.left[n] + g * (incoming.left[n] - outgoing.left[n])
            right[n] += outgoing.right[n] + g * (incoming.right[n] - outgoing.right[n])
        }
        switchFrames += frames
        guard switchFrames >= switchPrerollFrames + switchFadeFrames else { return }
        endSwitch()
    }

    /// The incoming stage renders alone from now on.
    func endSwitch() {
        guard let change = switching else { return }
        change.detach(retiring: stage)
        stage = change.stage
        stage.diffuseField?.withUnsafeBufferPointer { reverb.crossfadeDiffuseField(to: $0) }
        ringOutFrames = stage.ringOutFrames
        switching = nil
        finishedSwitch = change
    }

    /// Frames of delay between a sample entering and leaving (the limiter's look-ahead).
    public var latencyFrames: Int { limiter.latencyFrames }
    /// Frames of reverb tail after the last source stops.
    public var tailFrames: Int { Int(reverb.tailSeconds * configuration.sampleRateHz) + ringOutFrames + latencyFrames }

    public func add(_ source: RenderSource) {
        precondition(sources.count < maximumSources, "source capacity exceeded")
        sources.append(source)  // within the reserved capacity: no allocation
    }

    /// Removes and returns a source; the caller releases it away from the render thread.
    @discardableResult
    public func remove(_ source: RenderSource) -> RenderSource? {
        guard let index = sources.firstIndex(where: { $0 === source }) else { return nil }
        sources.swapAt(index, sources.count - 1)
        return sources.removeLast()
    }

    /// The head pose reached at the end of the next block; the render glides to it from the
    /// previous one, sub-block by sub-block, unless `glide` is false (a first pose, a recenter).
    public func setHeadPose(_ pose: HeadPose, glide: Bool = true) {
        targetPose = pose
        if !glide { snapPose = true }
    }
    public var headPose: HeadPose { targetPose }

    /// True when the source's input has ended and its voices have rung out.
    public func hasFinished(_ source: RenderSource) -> Bool {
        source.input.isFinished && source.framesSinceEnd >= ringOutFrames
    }

    /// Renders one block (`configuration.blockFrames` frames) of interleaved stereo.
    public func render(into output: UnsafeMutablePointer<Float>) { render(into: output, channelCount: 2) }

    /// Renders one block of `channelCount` (1 to 8) interleaved channels in the WAVE order:
    /// the rendering's own channels, the rest silent, or folded down when the output has fewer
    /// (SpatialRenderer+Speakers.swift).
    public func render(into output: UnsafeMutablePointer<Float>, channelCount: Int) {
        precondition(ChannelLayout.channelCountRange.contains(channelCount))
        // What the block costs, not how long it took: a render thread the host or a thread above
        // it kept off its CPU has done no more work, and moving voices to the bus would not get
        // the time back (the wall clock here sent a lone source back and forth on a busy host).
        let started = MonotonicClock.threadCPUNanoseconds()
        let block = configuration.blockFrames
        left.update(repeating: 0, count: block)
        right.update(repeating: 0, count: block)
        send.update(repeating: 0, count: block)

        sources.forEachUnretained { pull($0, frames: block) }
        governor.plan(sources, listener: targetPose.positionMetres, distanceModel: configuration.distanceModel,
                      blockFrames: block, sampleRateHz: configuration.sampleRateHz)
        // Speakers alone need no HRTF voices nor bus: the binaural path renders only while a
        // binaural rendering plays or crossfades.
        let binaural = outputs.rendersBinaural
        if binaural {
            renderBinaural(frames: block, followsHead: outputs.followsHead)
        } else {
            endSwitch()  // unheard: nothing to crossfade
            renderedPose = .neutral
            snapPose = true
        }
        composeOutputs(binauralRendered: binaural, into: output, channelCount: channelCount)
        limiter.process(interleaved: output, channelCount: channelCount, frames: block)
        // A switch renders twice for a few blocks: not a load to move voices to the bus for.
        if !(binaural && isSwitching) && !outputs.isChanging {
            governor.observe(renderSeconds: Double(MonotonicClock.threadCPUNanoseconds() - started) * 1e-9,
                             blockSeconds: Double(block) / configuration.sampleRateHz)
        }
    }

    /// The HRTF voices, the bus and the plain `off` streams into `left` / `right`, and the
    /// room's send; a live HRTF switch crossfades here. `followsHead`: false for `.fixed`
    /// (rendered for the neutral head).
    private func renderBinaural(frames block: Int, followsHead: Bool) {
        let step = Double(block) / (Self.headShareGlideSeconds * configuration.sampleRateHz)
        headShare = snapPose ? (followsHead ? 1 : 0) : followsHead ? min(1, headShare + step) : max(0, headShare - step)
        let to = headShare == 1 ? targetPose : headShare == 0 ? .neutral
            : HeadPose.interpolate(.neutral, targetPose, Double(Self.smoothstep(Float(headShare))))
        let from = snapPose ? to : renderedPose
        snapPose = false
        // While a switch crossfades, each stage renders into its own pair; else into the mix.
        // The stages are taken once for the block and lent to the per-source work: read from
        // the properties there, each use would retain and release them (atomic operations,
        // several per source: at 1024 sources a fifth of the render's time).
        let stage = self.stage
        let next = switching?.stage
        let out = next == nil ? (left: left, right: right) : outgoing
        if next != nil {  // (not a loop over an array of the four: it may allocate)
            outgoing.left.update(repeating: 0, count: block)
            outgoing.right.update(repeating: 0, count: block)
            incoming.left.update(repeating: 0, count: block)
            incoming.right.update(repeating: 0, count: block)
        }
        stage.bus.beginBlock(frames: block)
        next?.bus.beginBlock(frames: block)

        // A source wholly on the bus takes the block in one piece, at the block's final pose:
        // the bus turns the field with the head sub-block by sub-block, so per span it would
        // only refresh its interaural delay, at more bookkeeping.
        // The sources' storage is taken once for the block, as the stages are (nothing adds or
        // removes a source while a block renders): borrowed per source, the array's own
        // storage was retained and released per source.
        var bySpan = 0
        let finalPose = to
        let span = stage.voiceMix.partitionFrames, spans = block / span
        let count = configuration.subBlockCount, subBlocksPerSpan = count / spans
        sources.withUnsafeBufferPointer { sources in
            var index = 0
            while index < sources.count {
                prefetchBusWork(after: index, in: sources)
                Unmanaged.passUnretained(sources[index])._withUnsafeGuaranteedRef { source in
                    if source.mode != .off && source.path.onBus && source.path.busMix >= 1
                        && source.path.voiceSilentFrames >= ringOutFrames {
                        renderSpan(source, stage: stage, next: next, pose: finalPose, offset: 0, frames: block,
                                   whollyOnBus: true)
                    } else {
                        spanSources[bySpan] = index
                        bySpan += 1
                    }
                }
                index &+= 1
            }
        }
        // The others span by span (the voices' convolution partition), each span at its
        // final pose; the bus turns with the head sub-block by sub-block.
        for s in 0..<spans {
            let offset = s * span
            let pose = HeadPose.interpolate(from, to, Double(s + 1) / Double(spans))
            stage.voiceMix.beginSpan()
            next?.voiceMix.beginSpan()
            sources.withUnsafeBufferPointer { sources in
                for i in 0..<bySpan {
                    Unmanaged.passUnretained(sources[spanSources[i]])._withUnsafeGuaranteedRef {
                        renderSpan($0, stage: stage, next: next, pose: pose, offset: offset, frames: span)
                    }
                }
            }
            stage.voiceMix.finishSpan(left: out.left + offset, right: out.right + offset)
            next?.voiceMix.finishSpan(left: incoming.left + offset, right: incoming.right + offset)
            for sub in s * subBlocksPerSpan..<(s + 1) * subBlocksPerSpan {
                let subPose = HeadPose.interpolate(from, to, Double(sub + 1) / Double(count))
                stage.bus.rotate(offset: sub * subBlockFrames, frames: subBlockFrames, orientation: subPose.orientation)
                next?.bus.rotate(offset: sub * subBlockFrames, frames: subBlockFrames, orientation: subPose.orientation)
            }
        }
        renderedPose = to
        stage.bus.decode(frames: block, left: out.left, right: out.right)
        if let next {
            next.bus.decode(frames: block, left: incoming.left, right: incoming.right)
            crossfadeStages(frames: block)
        }
    }

    /// Asks for what rendering a source wholly on the bus reads, a few sources ahead of the
    /// loop: the source, then its voices and input buffers. At 1024 sources each of these is a
    /// cache miss the loop otherwise waits for, one after the other. (Two more stages, two and
    /// one source ahead — its placement, bus voice and input samples — cost more than they saved
    /// on the AVX-512 host: their own reads of the voices wait on misses too; 1.8 % of the
    /// render at 1024 sources, docs/MEASUREMENTS.md.)
    @inline(__always)
    private func prefetchBusWork(after index: Int, in sources: UnsafeBufferPointer<RenderSource>) {
        let count = sources.count
        do {
            if index + 8 < count {
                scenesound_prefetch(Unmanaged.passUnretained(sources[index + 8]).toOpaque(), 256)
            }
            // Only for a source the loop will render on the bus (its object, asked for 8
            // ahead, is in the cache by now): a source on its voices renders later, span by
            // span, and its input prefetched here would be gone by then (255 sources on voices
            // paid for 25 cache lines of prefetches each, for nothing).
            @inline(__always) func onBus(_ source: RenderSource) -> Bool { source.mode != .off && source.path.onBus }
            if index + 4 < count {
                Unmanaged.passUnretained(sources[index + 4])._withUnsafeGuaranteedRef { source in
                    guard onBus(source) else { return }
                    scenesound_prefetch(Unmanaged.passUnretained(source.voices).toOpaque(), 64)
                    scenesound_prefetch(source.planar, 8 * source.channelCount)
                }
            }
        }
    }

    private func pull(_ source: RenderSource, frames: Int) {
        source.keepHistory(frames: frames)
        let got = source.input.read(into: source.planar, channelCount: source.channelCount, frames: frames,
                                    sumsOfSquares: sumsOfSquares)
        if got < frames {
            for c in 0..<source.channelCount { (source.planar[c] + got).update(repeating: 0, count: frames - got) }
        }
        if source.input.isFinished { source.framesSinceEnd += frames - got }
        source.path.ageFrames = min(source.path.ageFrames + frames, Int(Int32.max))
        var level: Float = 0
        if got > 0 {
            for c in 0..<source.channelCount { level = max(level, (sumsOfSquares[c] / Float(got)).squareRoot()) }
        }
        source.path.inputLevel = level
    }
    /// Each channel's sum of squares over the block `pull` read (the source's level).
    private let sumsOfSquares = UnsafeMutablePointer<Float>.allocate(capacity: ChannelLayout.maximumChannelCount)

    /// Renders `frames` of the source at `offset` in the block, for the head at `pose`, on
    /// `stage` (the renderer's, lent for the block) and while a switch crossfades on `next`
    /// too; `whollyOnBus`: the source renders on the bus alone (and reuses its placement).
    private func renderSpan(_ source: RenderSource, stage: BinauralStage, next: BinauralStage?, pose: HeadPose,
                            offset: Int, frames: Int, whollyOnBus: Bool = false) {
        if source.mode == .off {
            renderPlain(source, offset: offset, frames: frames)
            return
        }
        // Its voices lent, not retained: only the end of a switch replaces them, between blocks.
        source.withVoices { voices in
            renderSpan(source, voices: voices, stage: stage, next: next, pose: pose, offset: offset, frames: frames,
                       whollyOnBus: whollyOnBus)
        }
    }

    @inline(__always)
    private func renderSpan(_ source: RenderSource, voices: SourceVoices, stage: BinauralStage, next: BinauralStage?,
                            pose: HeadPose, offset: Int, frames: Int, whollyOnBus: Bool) {
        let rate = configuration.sampleRateHz
        let model = configuration.distanceModel
        for c in 0..<source.channelCount {
            let position = source.channelPositions[c]
            let anchored = source.mode == .anchored
            let placement: BusPlacement? = whollyOnBus ? busPlacement(voices, on: stage, channel: c,
                                                                      position: position, anchored: anchored,
                                                                      pose: pose) : nil
            let relative = placement?.relative
                ?? (anchored ? pose.relative(position) : SphericalPosition(cartesian: position))
            let distance = relative.distanceMetres

            // Fade out past the cull distance (and back in), linearly over cullFadeSeconds;
            // once silent and rung out, the voices stop costing anything.
            if c == 0 {
                let step = Float(Double(frames) / max(model.cullFadeSeconds * rate, 1))
                let culled = model.isCulled(distanceMetres: distance)
                // Ring-out is counted from the first span rendered wholly silent: the span in
                // which the fade reaches zero still has its tail to ring.
                let wasSilent = source.cullFade == 0
                source.cullFade = culled ? max(0, source.cullFade - step) : min(1, source.cullFade + step)
                if source.cullFade == 0 && wasSilent {
                    if source.culledFrames >= ringOutFrames {
                        if source.culledFrames == ringOutFrames {
                            voices.voices.forEachUnretained { $0.reset() }
                            source.incomingVoices?.voices.forEachUnretained { $0.reset() }
                            source.culledFrames += 1
                        }
                        return
                    }
                    source.culledFrames = min(source.culledFrames + frames, ringOutFrames)
                } else {
                    source.culledFrames = 0
                }
            }
            if c == 0 { advancePathCrossfade(source, frames: frames) }
            let distanceGain = Float(model.gain(distanceMetres: distance))
            if c == source.lowFrequencyChannel {
                // Not a voice: low-passed into both ears alike, at the scene's distance gain.
                source.lowFrequencyFilter.process(source.planar[c] + offset,
                                                  gain: source.gain * distanceGain * source.cullFade * Self.lowFrequencyGain,
                                                  addingTo: left + offset, right + offset, frames: frames)
                continue
            }
            let cutoff = min(model.airAbsorptionCutoffHz(distanceMetres: distance), source.lowpassCutoffHz)
            let target = BinauralTarget(azimuthDegrees: relative.azimuthDegrees,
                                        elevationDegrees: relative.elevationDegrees,
                                        gain: source.gain * distanceGain * source.cullFade,
                                        lowpassCoefficient: OnePoleLowpass.coefficient(cutoffHz: cutoff, sampleRateHz: rate),
                                        distanceMetres: distance)
            let worldDirection = anchored ? position - pose.positionMetres : pose.orientation.rotate(position)
            renderPaths(source, voices: voices, on: stage, channel: c, target: target, offset: offset,
                        frames: frames, worldDirection: worldDirection, busCues: placement?.cues)
            if let next, let voices = source.incomingVoices {
                let cues = whollyOnBus ? busPlacement(voices, on: next, channel: c, position: position, anchored: anchored,
                                                      pose: pose).cues : nil
                renderPaths(source, voices: voices, on: next, channel: c, target: target, offset: offset,
                            frames: frames, worldDirection: worldDirection, busCues: cues)
            }
            if configuration.room != .none {
                // The diffuse field falls off more slowly than the direct sound: that
                // difference is what tells near from far.
                let sendGain = source.gain * distanceGain.squareRoot() * source.cullFade
                let input = source.planar[c] + offset
                for n in 0..<frames { send[offset + n] += input[n] * sendGain }
            }
        }
    }

    /// Glides the source's share between the voices and the bus by `frames`; the span
    /// renders from `busMixStart` to `path.busMix`.
    private func advancePathCrossfade(_ source: RenderSource, frames: Int) {
        busMixStart = source.path.busMix
        let step = Float(Double(frames) / max(governor.settings.crossfadeSeconds * configuration.sampleRateHz, 1))
        source.path.busMix = source.path.onBus ? min(1, busMixStart + step) : max(0, busMixStart - step)
        voicesWereIdle = source.path.voiceSilentFrames >= ringOutFrames
        if source.path.busMix < 1 || busMixStart < 1 {
            source.path.voiceSilentFrames = 0
        } else {
            source.path.voiceSilentFrames = min(source.path.voiceSilentFrames + frames, Int(Int32.max))
        }
    }
    @exclusivity(unchecked) private var busMixStart: Float = 0
    @exclusivity(unchecked) private var voicesWereIdle = false

    /// One channel's sub-block on the HRTF voice, the bus, or both while a move crossfades
    /// (linearly: the two renderings of one source are coherent, so amplitudes add).
    /// `voices` render on `stage` (the source's own on the renderer's, or while a switch
    /// crossfades its incoming ones on the incoming stage).
    private func renderPaths(_ source: RenderSource, voices: SourceVoices, on stage: BinauralStage, channel c: Int,
                             target: BinauralTarget, offset: Int, frames: Int,
                             worldDirection: Vector3, busCues: BusCues?) {
        // The share follows a smoothstep, not a line: the two paths differ in timbre, and a
        // linear fade's corners at its ends are kinks in the waveform that the discontinuity
        // measure (and the ear, on a pure tone) picks up.
        let mix = Self.smoothstep(source.path.busMix)
        let input = source.planar[c] + offset
        if mix < 1 || busMixStart < 1 || !voicesWereIdle {
            voices.voices.withUnretained(at: c) { voice in
                var voiceTarget = target
                voiceTarget.gain = target.gain * (1 - mix)
                if voicesWereIdle {
                    // Back from the bus: start from silence at the current direction, so the
                    // voice fades in from its first sample instead of gliding from a stale state.
                    voice.reset(startingAt: voiceTarget, mix: stage.voiceMix)
                }
                voice.render(input: input, target: voiceTarget, into: stage.voiceMix)
            }
        }
        voices.busVoices.withUnretained(at: c) { busVoice in
            encode(busVoice, on: stage, input: input, target: target, mix: mix, offset: offset, frames: frames,
                   worldDirection: worldDirection, cues: busCues)
        }
    }

    /// The bus's share of one channel's span (or, while the source is wholly on its voice,
    /// only keeping the bus voice's history current); `cues`: the placement's, when it has them.
    @inline(__always)
    private func encode(_ busVoice: AmbisonicBusVoice, on stage: BinauralStage, input: UnsafePointer<Float>,
                        target: BinauralTarget, mix: Float, offset: Int, frames: Int, worldDirection: Vector3,
                        cues: BusCues?) {
        if mix == 0 && busMixStart == 0 && !busVoice.isSounding {
            busVoice.follow()
        } else {
            let cues = cues ?? busCues(on: stage, azimuthDegrees: target.azimuthDegrees,
                                       elevationDegrees: target.elevationDegrees, distanceMetres: target.distanceMetres)
            stage.bus.encode(busVoice, input: input, frames: frames, offset: offset, direction: worldDirection,
                       delays: cues.delays, earLevels: cues.earLevels, gain: target.gain * mix,
                       lowpassCoefficient: target.lowpassCoefficient)
        }
    }

    @inline(__always) static func smoothstep(_ x: Float) -> Float { x * x * (3 - 2 * x) }

    /// The LFE's gain in its band: +10 dB, as cinema plays it (it is recorded 10 dB low so
    /// that its headroom is 10 dB more); docs/BEHAVIOUR.md "Surround".
    public static let lowFrequencyGainDecibels = 10.0
    static let lowFrequencyGain = Decibels.linearGain(lowFrequencyGainDecibels)
}
