import Foundation
import SceneSoundDSP
import SceneSoundEngine
import Testing

/// The engine's renderings for the output device (docs/BEHAVIOUR.md "Output devices"), driven
/// as the server drives them: a stream on a placed scene, `setRendering`, the output's channels.
@Suite struct SpeakerRenderingTests {
    static let rate = 48000.0
    static let configuration = EngineConfiguration(sampleRateHz: rate, blockFrames: 256, room: .none)
    static let noise: [Float] = { var n = WhiteNoise(seed: 29); return n.samples(19200, amplitude: 0.3) }()
    static let tone: [Float] = (0..<48000).map { Float(0.3 * sin(2 * Double.pi * 500 * Double($0) / rate)) }
    /// The listener's distance to the screen: the distance law's unity gain.
    static let unityDistanceMetres = 0.6

    struct Played {
        /// Per output channel, aligned with the input (the limiter's delay taken off).
        var channels: [[Float]]
        var engine: Engine
        var framesRead: Int
        /// Blocks from the change's push to the end of its crossfade (nil: none or unfinished).
        var changeBlocks: Int?
    }

    static func direction(_ azimuthDegrees: Double, distanceMetres: Double = unityDistanceMetres) -> Vector3 {
        SphericalPosition(azimuthDegrees: azimuthDegrees, distanceMetres: distanceMetres).cartesian
    }

    /// `input` (planar, `layout`'s channels) as one stream on a scene at `scene`, through an engine
    /// rendering `rendering` into `outputChannels`; `change` pushed once `changeAtFrame` frames
    /// have been rendered.
    static func play(_ input: [[Float]], layout: ChannelLayout = .mono, scene: Vector3, mode: SpatialMode = .anchored,
                     rendering: OutputRendering, outputChannels: Int, headYawDegrees: Double = 0,
                     change: OutputRendering? = nil, changeAtFrame: Int = 0, room: Room = .none,
                     headphoneEQ: HeadphoneEQFilter? = nil, muffling: (cutoffHz: Double, gain: Float)? = nil) -> Played {
        var configuration = configuration
        configuration.room = room
        let engine = Engine(hrtf: KEMAR.set, configuration: configuration,
                            busFilters: OfflineRender.sharedDesign(for: KEMAR.set).filters)
        if let headphoneEQ { #expect(engine.commands.push(.setHeadphoneEQ(headphoneEQ))) }
        if let muffling {
            #expect(engine.commands.push(.setSceneLowpass(index: 1, cutoffHz: muffling.cutoffHz, gain: muffling.gain)))
        }
        engine.renderer.governor.simulatedLoadFraction = 0
        let frames = input[0].count, count = layout.channelCount
        let ring = AudioRing(capacityFrames: frames, channelCount: count)
        var interleaved = [Float](repeating: 0, count: frames * count)
        for (c, channel) in input.enumerated() { for n in 0..<frames { interleaved[n * count + c] = channel[n] } }
        _ = interleaved.withUnsafeBufferPointer { ring.write($0.baseAddress!, frames: frames) }
        let ringInput = RingInput(ring: ring)
        let source = RenderSource(input: ringInput, channelCount: count, layout: layout, mode: mode,
                                  channelPositions: Array(repeating: scene, count: count), gain: 1, hrtf: KEMAR.set,
                                  maximumFrames: configuration.blockFrames)
        #expect(engine.commands.push(.setRendering(rendering)))
        #expect(engine.commands.push(.placeScene(index: 1, position: scene, widthMetres: 0)))
        #expect(engine.commands.push(.setHeadPose(HeadPose(orientation: Quaternion(yawDegrees: headYawDegrees)), glide: false)))
        #expect(engine.commands.push(.addStream(EngineStream(id: 1, source: source, input: ringInput, sceneIndex: 1))))
        let block = configuration.blockFrames, latency = engine.renderer.latencyFrames
        var out = [Float](repeating: .nan, count: outputChannels * block)
        var channels = [[Float]](repeating: [], count: outputChannels)
        var rendered = 0, pushedAtBlock: Int?, changeBlocks: Int?, blocks = 0
        while rendered < frames + latency {
            if let change, pushedAtBlock == nil, rendered >= changeAtFrame {
                #expect(engine.commands.push(.setRendering(change)))
                pushedAtBlock = blocks
            }
            engine.render(into: &out, channelCount: outputChannels)
            blocks += 1
            if let pushedAtBlock, changeBlocks == nil, !engine.renderer.isChangingRendering {
                changeBlocks = blocks - pushedAtBlock
            }
            for n in 0..<block { for c in 0..<outputChannels { channels[c].append(out[n * outputChannels + c]) } }
            rendered += block
        }
        return Played(channels: channels.map { Array($0[latency..<(latency + frames)]) }, engine: engine,
                      framesRead: ring.framesRead, changeBlocks: changeBlocks)
    }

    static func levelDecibels(_ x: [Float]) -> Double {
        10 * log10(max(x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(x.count), 1e-30))
    }

    static func speakers(_ layout: SpeakerLayout, _ spatial: OutputRendering.Spatial = .headTracked) -> OutputRendering {
        OutputRendering(method: .speakers(layout), spatial: spatial)
    }

    // MARK: Two speakers

    /// The tangent law between ±30° (VBAP's, normalized to constant power): the left's and right's
    /// levels within 0.1 dB of it; beyond the base the nearer speaker alone.
    @Test(arguments: [20.0, 30, 60, -10])
    func twoSpeakersPanBetweenThemAtConstantPower(azimuthDegrees: Double) {
        let played = Self.play([Self.noise], scene: Self.direction(azimuthDegrees), rendering: Self.speakers(.stereo),
                               outputChannels: 2)
        let base = 30.0 * .pi / 180, phi = min(max(azimuthDegrees, -30), 30) * .pi / 180
        // tan φ / tan φ₀ = (gL − gR) / (gL + gR), gL² + gR² = 1.
        let ratio = tan(phi) / tan(base)
        let (l, r) = (1 + ratio, 1 - ratio)
        let norm = (l * l + r * r).squareRoot()
        let input = Self.levelDecibels(Self.noise)
        for (channel, gain) in [(0, l / norm), (1, r / norm)] {
            let measured = Self.levelDecibels(played.channels[channel]) - input
            print(String(format: "2.0 at %.0f°: channel %d %.2f dB (law %.2f dB)", azimuthDegrees, channel, measured,
                         20 * log10(max(gain, 1e-15))))
            if gain < 1e-9 {
                #expect(played.channels[channel].allSatisfy { $0 == 0 })
            } else {
                #expect(abs(measured - 20 * log10(gain)) < 0.1)
            }
        }
    }

    /// Amplitude panning only: the right is the left scaled (cross-correlation peaks at lag 0),
    /// and a turned head changes nothing, since the speakers stay in the room.
    @Test func twoSpeakersHaveNoITDAndIgnoreTheHead() {
        let still = Self.play([Self.noise], scene: Self.direction(20), rendering: Self.speakers(.stereo), outputChannels: 2)
        let itd = CueAnalysis.itdSeconds(left: still.channels[0], right: still.channels[1], sampleRateHz: Self.rate)
        print("2.0 at 20°: ITD \(itd * 1e6) µs")
        #expect(abs(itd) < 0.5 / Self.rate)
        let turned = Self.play([Self.noise], scene: Self.direction(20), rendering: Self.speakers(.stereo),
                               outputChannels: 2, headYawDegrees: 45)
        for c in 0..<2 { #expect(zip(still.channels[c], turned.channels[c]).allSatisfy { abs($0 - $1) <= 1e-6 }) }
    }

    /// A muffled scene (a minimized window) on speakers as on headphones: its gain (0.5, −6 dB)
    /// and its low-pass (first order, 800 Hz: 17.6 dB more at 6 kHz, 0.3 dB at 200 Hz).
    @Test func aMuffledSceneIsMuffledOnSpeakers() {
        func tone(_ hz: Double) -> [Float] { (0..<19200).map { Float(0.3 * sin(2 * Double.pi * hz * Double($0) / Self.rate)) } }
        for (hz, loss) in [(6000.0, 23.6), (200, 6.3)] {
            let open = Self.play([tone(hz)], scene: Self.direction(20), rendering: Self.speakers(.stereo), outputChannels: 2)
            let muffled = Self.play([tone(hz)], scene: Self.direction(20), rendering: Self.speakers(.stereo), outputChannels: 2,
                                    muffling: (800, 0.5))
            let measured = Self.levelDecibels(Array(open.channels[0][4800...])) - Self.levelDecibels(Array(muffled.channels[0][4800...]))
            print(String(format: "muffled at %.0f Hz: −%.1f dB", hz, measured))
            #expect(abs(measured - loss) < 0.5)
        }
    }

    /// Past the cull distance a source fades out on speakers as on headphones (over 0.25 s), then
    /// is silent.
    @Test func pastTheCullDistanceASourceFadesOutOnSpeakers() {
        let far = Self.play([Self.noise], scene: Self.direction(20, distanceMetres: 250), rendering: Self.speakers(.stereo),
                            outputChannels: 2)
        #expect(far.channels[0][0..<2400].contains { $0 != 0 })
        #expect(far.channels[0][14400...].allSatisfy { $0 == 0 } && far.channels[1][14400...].allSatisfy { $0 == 0 })
    }

    // MARK: Surround speakers

    /// VBAP over the ring: a source at a speaker's ITU-R azimuth in that speaker, 20 dB above every
    /// other (at a speaker exactly: the others silent).
    @Test(arguments: [(SpeakerLayout.surround51, 110.0, 4), (.surround51, 0, 2), (.surround51, -110, 5),
                      (.surround71, 90, 6), (.surround71, -90, 7), (.surround71, 135, 4), (.surround71, -30, 1)])
    func aSourceAtASpeakerPlaysFromIt(layout: SpeakerLayout, azimuthDegrees: Double, channel: Int) {
        let played = Self.play([Self.noise], scene: Self.direction(azimuthDegrees), rendering: Self.speakers(layout),
                               outputChannels: layout.channelCount)
        let levels = played.channels.map(Self.levelDecibels)
        print("\(layout) at \(azimuthDegrees)°: " + levels.map { String(format: "%.1f", $0) }.joined(separator: " "))
        for (c, level) in levels.enumerated() where c != channel { #expect(levels[channel] - level >= 20) }
        #expect(abs(levels[channel] - Self.levelDecibels(Self.noise)) < 0.1)
    }

    /// Between two speakers of the ring (70°: FL at 30°, BL at 110°): those two alone, at constant power.
    @Test func aSourceBetweenTwoSurroundSpeakersUsesThatPair() {
        let played = Self.play([Self.noise], scene: Self.direction(70), rendering: Self.speakers(.surround51), outputChannels: 6)
        let power = played.channels.map { pow(10, Self.levelDecibels($0) / 10) }
        let input = pow(10, Self.levelDecibels(Self.noise) / 10)
        #expect(abs(10 * log10((power[0] + power[4]) / input)) < 0.1)
        for c in [1, 2, 3, 5] { #expect(played.channels[c].allSatisfy { $0 == 0 }) }
        #expect(power[0] > 0.1 * input && power[4] > 0.1 * input)
    }

    /// A 5.1 stream on a scene straight ahead: each channel to its own speaker, exactly (the
    /// others silent); its LFE to the LFE alone; a mono source never reaches the LFE.
    @Test(arguments: [0, 1, 2, 3, 4, 5])
    func a51StreamLandsChannelToChannel(channel: Int) {
        let layout = ChannelLayout.surround51
        let input = (0..<6).map { $0 == channel ? Self.noise : [Float](repeating: 0, count: Self.noise.count) }
        let played = Self.play(input, layout: layout, scene: Self.direction(0), rendering: Self.speakers(.surround51),
                               outputChannels: 6)
        for c in 0..<6 where c != channel { #expect(played.channels[c].allSatisfy { $0 == 0 }, "channel \(c)") }
        #expect(abs(Self.levelDecibels(played.channels[channel]) - Self.levelDecibels(Self.noise)) < 0.01)
        let mono = Self.play([Self.noise], scene: Self.direction(0), rendering: Self.speakers(.surround71), outputChannels: 8)
        #expect(mono.channels[3].allSatisfy { $0 == 0 })
    }

    /// A 5.1 stream ahead on two speakers: its virtual speakers panned as sources — the fronts
    /// to their own side, the centre to both at −3 dB, each surround (beyond the base) to its
    /// side's speaker alone, the LFE nowhere.
    @Test(arguments: [(0, Float(1), Float(0)), (1, 0, 1), (2, 0.707_106_77, 0.707_106_77), (3, 0, 0), (4, 1, 0), (5, 0, 1)])
    func a51StreamOnTwoSpeakersPansItsVirtualSpeakers(channel: Int, left: Float, right: Float) {
        let input = (0..<6).map { $0 == channel ? Self.noise : [Float](repeating: 0, count: Self.noise.count) }
        let played = Self.play(input, layout: .surround51, scene: Self.direction(0), rendering: Self.speakers(.stereo),
                               outputChannels: 2)
        for (c, gain) in [(0, left), (1, right)] {
            #expect(zip(played.channels[c], Self.noise).allSatisfy { abs($0 - $1 * gain) <= 1e-6 }, "channel \(c)")
        }
    }

    /// The room on 5.1: its left to FL and BL alike, its right to FR and BR, the centre none.
    @Test func theRoomSurroundsTheListenerOnSpeakers() {
        let input = Self.noise + [Float](repeating: 0, count: 9600)
        let played = Self.play([input], scene: Self.direction(30), rendering: Self.speakers(.surround51), outputChannels: 6,
                               room: .small)
        let tail = Self.noise.count + 480
        #expect(played.channels[2].allSatisfy { $0 == 0 } && played.channels[3].allSatisfy { $0 == 0 })
        #expect(Array(played.channels[0][tail...]) == Array(played.channels[4][tail...]))
        #expect(Array(played.channels[1][tail...]) == Array(played.channels[5][tail...]))
        #expect(Self.levelDecibels(Array(played.channels[5][tail...])) > -80)
    }

    /// Headphone EQ is for headphones: speakers play the same with or without one; binaural not.
    @Test func headphoneEQLeavesSpeakersAlone() throws {
        let eq = try HeadphoneEQFilter(try ParametricEQ(parsing: "Preamp: 0 dB\nFilter 1: ON PK Fc 1000 Hz Gain 6.0 dB Q 1.41\n"),
                                       sampleRateHz: Self.rate)
        for rendering in [Self.speakers(.stereo), OutputRendering(method: .speakers(.surround51), spatial: .off)] {
            let plain = Self.play([Self.noise], scene: Self.direction(20), rendering: rendering, outputChannels: 2)
            let equalized = Self.play([Self.noise], scene: Self.direction(20), rendering: rendering, outputChannels: 2,
                                      headphoneEQ: eq)
            #expect(plain.channels == equalized.channels, "\(rendering)")
        }
        let plain = Self.play([Self.noise], scene: Self.direction(20), rendering: .headphones, outputChannels: 2)
        let equalized = Self.play([Self.noise], scene: Self.direction(20), rendering: .headphones, outputChannels: 2,
                                  headphoneEQ: eq)
        #expect(plain.channels != equalized.channels)
    }

    // MARK: Off, fixed, spatial off

    /// `.off`: every stream as plain stereo, bit-exact at unity, to FL / FR on surround layouts.
    @Test(arguments: [OutputRendering(method: .binaural, spatial: .off), OutputRendering(method: .speakers(.stereo), spatial: .off),
                      OutputRendering(method: .speakers(.surround51), spatial: .off)])
    func offIsBitExactPlainStereo(rendering: OutputRendering) {
        var other = WhiteNoise(seed: 7)
        let right = other.samples(Self.noise.count, amplitude: 0.3)
        let played = Self.play([Self.noise, right], layout: .stereo, scene: Self.direction(40), rendering: rendering,
                               outputChannels: rendering.channelCount)
        #expect(played.channels[0] == Self.noise)
        #expect(played.channels[1] == right)
        for c in 2..<rendering.channelCount { #expect(played.channels[c].allSatisfy { $0 == 0 }) }
    }

    /// A stream whose own mode is `off` stays bit-exact whatever the device's rendering.
    @Test(arguments: [OutputRendering.headphones, OutputRendering(method: .binaural, spatial: .fixed),
                      OutputRendering(method: .speakers(.stereo)), OutputRendering(method: .speakers(.surround51)),
                      OutputRendering(method: .speakers(.surround71), spatial: .fixed)])
    func aSpatialOffStreamIsBitExactOnEveryRendering(rendering: OutputRendering) {
        var other = WhiteNoise(seed: 8)
        let right = other.samples(Self.noise.count, amplitude: 0.3)
        let played = Self.play([Self.noise, right], layout: .stereo, scene: Self.direction(40), mode: .off,
                               rendering: rendering, outputChannels: rendering.channelCount, headYawDegrees: 30)
        #expect(played.channels[0] == Self.noise)
        #expect(played.channels[1] == right)
        for c in 2..<rendering.channelCount { #expect(played.channels[c].allSatisfy { $0 == 0 }) }
    }

    /// `.fixed`: binaural as if the head stayed neutral, whatever pose arrives.
    @Test func fixedBinauralIgnoresThePose() {
        let fixed = OutputRendering(method: .binaural, spatial: .fixed)
        let turned = Self.play([Self.noise], scene: Self.direction(40), rendering: fixed, outputChannels: 2, headYawDegrees: 45)
        let neutral = Self.play([Self.noise], scene: Self.direction(40), rendering: .headphones, outputChannels: 2)
        let tracked = Self.play([Self.noise], scene: Self.direction(40), rendering: .headphones, outputChannels: 2,
                                headYawDegrees: 45)
        for c in 0..<2 {
            #expect(zip(turned.channels[c], neutral.channels[c]).allSatisfy { abs($0 - $1) <= 1e-6 })
            #expect(zip(tracked.channels[c], neutral.channels[c]).contains { abs($0 - $1) > 1e-3 })  // the pose matters there
        }
    }

    // MARK: Output channels

    /// The output's count rules: a stereo rendering into six channels leaves four silent; a 5.1
    /// rendering into two folds down as BS.775 (a source in the back-left in the left alone); 7.1
    /// into six shares each side and back pair into the surrounds.
    @Test func anyRenderingFillsAnyOutput() {
        let wide = Self.play([Self.noise], scene: Self.direction(20), rendering: Self.speakers(.stereo), outputChannels: 6)
        let narrow = Self.play([Self.noise], scene: Self.direction(20), rendering: Self.speakers(.stereo), outputChannels: 2)
        for c in 0..<2 { #expect(wide.channels[c] == narrow.channels[c]) }
        for c in 2..<6 { #expect(wide.channels[c].allSatisfy { $0 == 0 }) }
        let folded = Self.play([Self.noise], scene: Self.direction(110), rendering: Self.speakers(.surround51), outputChannels: 2)
        let h: Float = 0.707_106_77
        #expect(folded.channels[1].allSatisfy { $0 == 0 })
        #expect(zip(folded.channels[0], Self.noise).allSatisfy { abs($0 - $1 * h / (1 + 2 * h)) <= 1e-6 })
        // 7.1 into six channels: a side speaker's sound in its side's surround at −3 dB.
        let sides = Self.play([Self.noise], scene: Self.direction(90), rendering: Self.speakers(.surround71), outputChannels: 6)
        #expect(zip(sides.channels[4], Self.noise).allSatisfy { abs($0 - $1 * h) <= 1e-6 })
        for c in [0, 1, 2, 3, 5] { #expect(sides.channels[c].allSatisfy { $0 == 0 }) }
    }

    // MARK: A change while playing

    /// MotionTests' measure (the largest third difference over the peak), 0 for silence.
    static func discontinuity(_ x: [Float]) -> Double {
        x.contains { $0 != 0 } ? MotionTests.discontinuity(x) : 0
    }

    /// Binaural ↔ speakers mid-tone: the crossfade is over within 50 ms, no click (the third
    /// difference, as the motion and HRTF-switch tests measure it, no worse than either rendering
    /// alone), no gap, every frame read once, and then the new rendering alone, sample for sample.
    @Test(arguments: [(OutputRendering.headphones, OutputRendering(method: .speakers(.stereo))),
                      (OutputRendering(method: .speakers(.stereo)), .headphones),
                      (.headphones, OutputRendering(method: .speakers(.surround51))),
                      (OutputRendering(method: .speakers(.surround51)), OutputRendering(method: .speakers(.stereo), spatial: .off))])
    func aChangeMidToneCrossfadesWithoutAClick(from: OutputRendering, to: OutputRendering) throws {
        let scene = Self.direction(40), channels = max(from.channelCount, to.channelCount), at = 24000
        let before = Self.play([Self.tone], scene: scene, rendering: from, outputChannels: channels)
        let after = Self.play([Self.tone], scene: scene, rendering: to, outputChannels: channels)
        let changed = Self.play([Self.tone], scene: scene, rendering: from, outputChannels: channels, change: to, changeAtFrame: at)
        let blocks = try #require(changed.changeBlocks)
        let seconds = Double(blocks * Self.configuration.blockFrames) / Self.rate
        print("\(from) → \(to): crossfade over in \(seconds * 1000) ms")
        #expect(seconds <= 0.05)
        #expect(changed.framesRead == Self.tone.count)
        for c in 0..<channels {
            let a = before.channels[c], b = after.channels[c], s = changed.channels[c]
            guard a.contains(where: { $0 != 0 }) || b.contains(where: { $0 != 0 }) else { continue }
            let reference = max(Self.discontinuity(a), Self.discontinuity(b))
            let measured = Self.discontinuity(s)
            print(String(format: "  channel %d: discontinuity %.3g (unchanged %.3g)", c, measured, reference))
            #expect(measured < 1.5 * reference)
            let end = at + Int(0.05 * Self.rate) + 2 * Self.configuration.blockFrames
            #expect(zip(s[end...], b[end...]).allSatisfy { abs($0 - $1) <= 1e-5 }, "channel \(c) after the change")
        }
        // No gap: the summed power never drops to silence while the tone plays.
        var run = 0, longest = 0
        for n in 4800..<Self.tone.count {
            let sum = (0..<channels).reduce(Float(0)) { $0 + abs(changed.channels[$1][n]) }
            run = sum < 1e-6 ? run + 1 : 0
            longest = max(longest, run)
        }
        #expect(longest < 3)
    }

    /// Head-tracked ↔ fixed on headphones, the head turned 60°: the pose glides to the neutral
    /// head and back over 0.3 s (one set of voices cannot render twice), without a click (the
    /// third difference within 1.5 times the still renderings'; over 30 ms it was 3.7 times).
    @Test(arguments: [(OutputRendering.headphones, OutputRendering(method: .binaural, spatial: .fixed)),
                      (OutputRendering(method: .binaural, spatial: .fixed), .headphones)])
    func fixedAndHeadTrackedChangeWithoutAClick(from: OutputRendering, to: OutputRendering) {
        let scene = Self.direction(40), at = 24000
        let before = Self.play([Self.tone], scene: scene, rendering: from, outputChannels: 2, headYawDegrees: 60)
        let after = Self.play([Self.tone], scene: scene, rendering: to, outputChannels: 2, headYawDegrees: 60)
        let changed = Self.play([Self.tone], scene: scene, rendering: from, outputChannels: 2, headYawDegrees: 60,
                                change: to, changeAtFrame: at)
        for c in 0..<2 {
            let reference = max(Self.discontinuity(before.channels[c]), Self.discontinuity(after.channels[c]))
            let measured = Self.discontinuity(changed.channels[c])
            print(String(format: "\(from) → \(to), channel %d: discontinuity %.3g (unchanged %.3g)", c, measured, reference))
            #expect(measured < 1.5 * reference)
            let end = at + Int(0.35 * Self.rate)
            let level = Self.levelDecibels(Array(changed.channels[c][end...]))
            #expect(abs(level - Self.levelDecibels(Array(after.channels[c][end...]))) < 0.05)
        }
    }

    /// A change asked for while another crossfades waits for it (one crossfade at a time), then
    /// crossfades in turn: both within 100 ms, and the last one asked for is what plays.
    @Test func aChangeDuringAChangeWaitsItsTurn() throws {
        let engine = Engine(hrtf: KEMAR.set, configuration: Self.configuration,
                            busFilters: OfflineRender.sharedDesign(for: KEMAR.set).filters)
        let ring = AudioRing(capacityFrames: Self.tone.count, channelCount: 1)
        _ = Self.tone.withUnsafeBufferPointer { ring.write($0.baseAddress!, frames: Self.tone.count) }
        let input = RingInput(ring: ring)
        let source = RenderSource(input: input, channelCount: 1, mode: .anchored, channelPositions: [Self.direction(40)],
                                  gain: 1, hrtf: KEMAR.set, maximumFrames: Self.configuration.blockFrames)
        #expect(engine.commands.push(.placeScene(index: 1, position: Self.direction(40), widthMetres: 0)))
        #expect(engine.commands.push(.addStream(EngineStream(id: 1, source: source, input: input, sceneIndex: 1))))
        var out = [Float](repeating: 0, count: 6 * Self.configuration.blockFrames)
        for _ in 0..<10 { engine.render(into: &out, channelCount: 6) }
        let last = OutputRendering(method: .speakers(.surround51))
        #expect(engine.commands.push(.setRendering(OutputRendering(method: .speakers(.stereo)))))
        #expect(engine.commands.push(.setRendering(last)))
        engine.render(into: &out, channelCount: 6)
        #expect(engine.renderer.isChangingRendering)
        #expect(engine.renderer.rendering == OutputRendering(method: .speakers(.stereo)))
        var blocks = 1
        while engine.renderer.rendering != last || engine.renderer.isChangingRendering {
            engine.render(into: &out, channelCount: 6)
            blocks += 1
            try #require(blocks < 100)
        }
        print("two changes in a row: over after \(blocks) blocks")
        #expect(Double(blocks * Self.configuration.blockFrames) / Self.rate <= 0.1)
    }
}
