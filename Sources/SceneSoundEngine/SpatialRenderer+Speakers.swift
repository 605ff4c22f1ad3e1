import SceneSoundDSP

/// The output device's rendering (docs/BEHAVIOUR.md "Output devices"): binaural, plain stereo,
/// or every source panned over loudspeakers fixed in the room; a change crossfades the two
/// renderings of the same pulled input; the result fills whatever channels the output has.
extension SpatialRenderer {
    /// The rendering asked for last (the incoming one while a change crossfades).
    public var rendering: OutputRendering { outputs.incoming ?? outputs.current }
    /// A change crossfades: another waits (Engine defers it).
    public var isChangingRendering: Bool { outputs.isChanging }
    /// Frames a change takes from the block it starts in: the unheard preroll and the fade.
    public var renderingChangeFrames: Int { outputs.prerollFrames + outputs.fadeFrames }

    /// From the next block: crossfades to `rendering` over `OutputRenderings.crossfadeSeconds`
    /// (after an unheard preroll when binaural voices come back, which refills their histories);
    /// between the binaural ones (fixed ↔ head-tracked) only the pose changes, gliding to the
    /// neutral head or back (`headShareGlideSeconds`); with no source, at once. Render thread; requires `!isChangingRendering`.
    public func setRendering(_ rendering: OutputRendering) {
        precondition(!outputs.isChanging, "one rendering change at a time")
        let from = RenderPath(outputs.current), to = RenderPath(rendering)
        // Nothing playing: nothing to crossfade (a device chosen before any stream starts).
        guard !from.sharesVoices(with: to) && !sources.isEmpty else {
            outputs.current = rendering
            return
        }
        outputs.incoming = rendering
        outputs.changeFrames = 0
        let block = configuration.blockFrames
        outputs.prerollFrames = to.isBinaural ? (ringOutFrames + block - 1) / block * block : 0
    }

    /// After the binaural path (when it rendered, into `left` / `right` and the send): each
    /// rendering into its planar channels, the room added to each, the headphone EQ on the
    /// headphones' one, the crossfade, then the output's channels.
    func composeOutputs(binauralRendered: Bool, into output: UnsafeMutablePointer<Float>, channelCount: Int) {
        let o = outputs, block = configuration.blockFrames
        defer { o.blockIndex += 1 }
        let currentPath = RenderPath(o.current)
        let incomingPath = o.incoming.map { RenderPath($0) }
        var count = renderPath(currentPath, into: o.first, binauralRendered: binauralRendered,
                               clearingAll: incomingPath != nil)
        if let incomingPath {
            count = max(count, renderPath(incomingPath, into: o.second, binauralRendered: binauralRendered,
                                          clearingAll: true))
        }

        // One room for both: its send came from whichever path rendered the sources.
        o.reverbLeft.update(repeating: 0, count: block)
        o.reverbRight.update(repeating: 0, count: block)
        reverb.process(send: send, left: o.reverbLeft, right: o.reverbRight, frames: block)
        addReverb(currentPath, into: o.first)
        if let incomingPath { addReverb(incomingPath, into: o.second) }

        // Headphone EQ: for headphones only (a speaker's own response is the room's business);
        // it runs once a block whatever plays, so that a change of EQ always completes.
        let currentOnHeadphones = o.current.method == .binaural
        let incomingOnHeadphones = o.incoming?.method == .binaural
        let eqAfterMix = incomingPath != nil && currentOnHeadphones && incomingOnHeadphones
        if eqAfterMix {
        } else if currentOnHeadphones {
            headphoneEQ.process(left: o.first[0], right: o.first[1], frames: block)
        } else if incomingOnHeadphones {
            headphoneEQ.process(left: o.second[0], right: o.second[1], frames: block)
        } else {
            left.update(repeating: 0, count: block)
            right.update(repeating: 0, count: block)
            headphoneEQ.process(left: left, right: right, frames: block)
        }

        if incomingPath != nil {
            // The two renderings are of the same input (correlated): shares summing to one.
            for n in 0..<block { o.scratch[n] = o.share(atFrame: n) }
            for c in 0..<count {
                let a = o.first[c], b = o.second[c]
                for n in 0..<block { a[n] += o.scratch[n] * (b[n] - a[n]) }
            }
            o.changeFrames += block
            if o.changeFrames >= o.prerollFrames + o.fadeFrames, let next = o.incoming {
                o.current = next
                o.incoming = nil
            }
        }
        if eqAfterMix { headphoneEQ.process(left: o.first[0], right: o.first[1], frames: block) }
        fit(o.first, channels: count, into: output, channelCount: channelCount)
    }

    /// One rendering into `set`; returns its channel count. The channels it adds into are
    /// cleared first, and while a change crossfades every channel (the crossfade reads as many
    /// of each set as the larger rendering has); binaural copies its two (not clearing the
    /// eight every block: the headphones' path was paying 8 KB of stores a block for nothing).
    private func renderPath(_ path: RenderPath, into set: UnsafeMutablePointer<UnsafeMutablePointer<Float>>,
                            binauralRendered: Bool, clearingAll: Bool) -> Int {
        let block = configuration.blockFrames
        let cleared = clearingAll ? ChannelLayout.maximumChannelCount : path.isBinaural ? 0 : path.channelCount
        for c in 0..<cleared { set[c].update(repeating: 0, count: block) }
        switch path {
        case .binaural:
            set[0].update(from: left, count: block)
            set[1].update(from: right, count: block)
        case .plain:
            sources.forEachUnretained { renderPlain($0, offset: 0, frames: block, left: set[0], right: set[1]) }
        case .speakers(let layout):
            renderSpeakers(layout, into: set, alone: !binauralRendered)
        }
        return path.channelCount
    }

    /// The room's left and right on speakers: to the left and right speakers of each pair, in
    /// equal power (5.1: the fronts and surrounds; 7.1: the fronts, sides and backs), so the
    /// reverb surrounds the listener as loud as on two speakers.
    private func addReverb(_ path: RenderPath, into set: UnsafeMutablePointer<UnsafeMutablePointer<Float>>) {
        let block = configuration.blockFrames, o = outputs
        let pairs: Int
        switch path {
        case .speakers(.surround51): pairs = 2
        case .speakers(.surround71): pairs = 3
        default: pairs = 1
        }
        let gain: Float = pairs == 1 ? 1 : Float(1 / Double(pairs).squareRoot())
        // FL/FR, then BL/BR (channels 4, 5), then SL/SR (6, 7).
        for p in 0..<pairs {
            let l = set[p == 0 ? 0 : 2 + 2 * p], r = set[p == 0 ? 1 : 3 + 2 * p]
            if gain == 1 {
                Mixing.add(o.reverbLeft, into: l, frames: block)
                Mixing.add(o.reverbRight, into: r, frames: block)
            } else {
                for n in 0..<block {
                    l[n] += o.reverbLeft[n] * gain
                    r[n] += o.reverbRight[n] * gain
                }
            }
        }
    }

    /// Every source panned over the layout's speakers by its direction from the listener in the
    /// room (head poses ignored: the speakers stay put), at the distance law's gain, through its
    /// muffling and air absorption; no HRTF, no ITD. A surround stream's channels are its
    /// virtual speakers around its scene, panned alike: with the scene ahead each lands on its
    /// own speaker. The LFE goes to the LFE alone (none on two speakers, as BS.775's fold-down).
    /// `off` streams as plain stereo to FL / FR. `alone`: the binaural path did not render the
    /// sources this block, so this one feeds the room and moves the cull fade.
    private func renderSpeakers(_ layout: SpeakerLayout, into set: UnsafeMutablePointer<UnsafeMutablePointer<Float>>,
                                alone: Bool) {
        let o = outputs, block = configuration.blockFrames, rate = configuration.sampleRateHz
        let model = configuration.distanceModel, panner = o.panner(layout)
        let outputCount = layout.channelCount, stride = ChannelLayout.maximumChannelCount
        let lowFrequencyOutput = layout.channels.lowFrequencyChannel ?? -1
        let room = configuration.room != .none && alone
        let cullStep = Float(Double(block) / max(model.cullFadeSeconds * rate, 1))
        sources.forEachUnretained { source in
            if source.mode == .off {
                renderPlain(source, offset: 0, frames: block, left: set[0], right: set[1])
                return
            }
            let state = source.speakerState
            let fresh = state.renderedBlock != o.blockIndex - 1 || state.outputChannelCount != outputCount
            state.renderedBlock = o.blockIndex
            state.outputChannelCount = outputCount
            for c in 0..<source.channelCount {
                // Anchored: world coordinates; head-locked: the head's, taken as the room's.
                let relative = SphericalPosition(cartesian: source.channelPositions[c])
                let distanceGain = Float(model.gain(distanceMetres: relative.distanceMetres))
                if c == 0 && alone {
                    // Past the cull distance a source fades out (and back in) as on headphones.
                    let culled = model.isCulled(distanceMetres: relative.distanceMetres)
                    source.cullFade = culled ? max(0, source.cullFade - cullStep) : min(1, source.cullFade + cullStep)
                }
                let gain = source.gain * distanceGain * source.cullFade
                let input = source.planar[c]
                var x = UnsafePointer(input)
                if c == source.lowFrequencyChannel {
                    o.targetGains.update(repeating: 0, count: stride)
                    if lowFrequencyOutput >= 0 { o.targetGains[lowFrequencyOutput] = gain }
                } else {
                    panner.gains(azimuthDegrees: relative.azimuthDegrees, into: o.targetGains)
                    for k in 0..<outputCount { o.targetGains[k] *= gain }
                    let cutoff = min(model.airAbsorptionCutoffHz(distanceMetres: relative.distanceMetres),
                                     source.lowpassCutoffHz)
                    let coefficient = OnePoleLowpass.coefficient(cutoffHz: cutoff, sampleRateHz: rate)
                    let lowpass = state.lowpasses + c
                    if fresh { lowpass.pointee.reset() }
                    if coefficient == 1 && lowpass.pointee.coefficient == 1 {
                        lowpass.pointee.pass(input, frames: block)
                    } else {
                        o.scratch.update(from: input, count: block)
                        lowpass.pointee.process(o.scratch, frames: block, targetCoefficient: coefficient)
                        x = UnsafePointer(o.scratch)
                    }
                    if room {
                        // As on headphones: the diffuse field falls off more slowly than the direct sound.
                        let sendGain = source.gain * distanceGain.squareRoot() * source.cullFade
                        for n in 0..<block { send[n] += input[n] * sendGain }
                    }
                }
                let applied = state.gains + c * stride
                if fresh { applied.update(from: o.targetGains, count: stride) }
                for k in 0..<outputCount {
                    let start = applied[k], end = o.targetGains[k]
                    applied[k] = end
                    guard start != 0 || end != 0 else { continue }
                    let out = set[k]
                    if start == end {
                        for n in 0..<block { out[n] += x[n] * end }
                    } else {
                        // Glides across the block: a moving source or a fade never steps.
                        let step = (end - start) / Float(block)
                        for n in 0..<block { out[n] += x[n] * (start + step * Float(n + 1)) }
                    }
                }
            }
        }
    }

    /// The rendering's `channels` into the output's `channelCount`, interleaved: as they are
    /// (the output's further channels silent); 7.1 into 5.1 with each side and back pair shared
    /// by the surrounds (equal power); into fewer, BS.775's stereo fold-down (mono: its mean).
    private func fit(_ set: UnsafeMutablePointer<UnsafeMutablePointer<Float>>, channels: Int,
                     into output: UnsafeMutablePointer<Float>, channelCount: Int) {
        let block = configuration.blockFrames, o = outputs
        if channels == 2 && channelCount == 2 {
            // Headphones or a pair of speakers on a stereo output, nearly every block: a plain
            // interleave, which the compiler vectorises (the loops below cost ~37 instructions
            // a frame).
            let left = set[0], right = set[1]
            for n in 0..<block {
                output[2 * n] = left[n]
                output[2 * n + 1] = right[n]
            }
        } else if channelCount >= channels {
            for n in 0..<block {
                let frame = output + n * channelCount
                for c in 0..<channels { frame[c] = set[c][n] }
                for c in channels..<channelCount { frame[c] = 0 }
            }
        } else if channelCount >= 6 {
            let h: Float = 0.707_106_77
            for n in 0..<block {
                let frame = output + n * channelCount
                for c in 0..<4 { frame[c] = set[c][n] }
                frame[4] = (set[4][n] + set[6][n]) * h
                frame[5] = (set[5][n] + set[7][n]) * h
                for c in 6..<channelCount { frame[c] = 0 }
            }
        } else {
            let weights = channels == 6 ? o.foldDown51 : o.foldDown71
            for n in 0..<block {
                var l: Float = 0, r: Float = 0
                if channels == 2 {
                    l = set[0][n]
                    r = set[1][n]
                } else {
                    for c in 0..<channels {
                        l += set[c][n] * weights[c].left
                        r += set[c][n] * weights[c].right
                    }
                }
                let frame = output + n * channelCount
                if channelCount == 1 {
                    frame[0] = (l + r) * 0.5
                } else {
                    frame[0] = l
                    frame[1] = r
                    for c in 2..<channelCount { frame[c] = 0 }
                }
            }
        }
    }
}
