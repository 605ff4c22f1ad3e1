import Foundation
import SceneSoundDSP
import SceneSoundEngine
import Testing

/// Surround streams as virtual speakers (docs/BEHAVIOUR.md "Surround"), driven through the
/// `Engine` as the server drives it (a scene placed, a stream on it), measured on the rendered
/// audio against the KEMAR set's own cues.
@Suite struct SurroundTests {
    static let noise: [Float] = { var n = WhiteNoise(seed: 42); return n.samples(24000, amplitude: 0.3) }()
    static let busFilters = AmbisonicDecodeFilters.design(from: KEMAR.set)

    /// Renders `channels` (planar, one array per channel of `layout`) as one stream on a scene at
    /// `scene`, the head at `headYawDegrees` (turning at `yawRateDegreesPerSecond`).
    static func render(_ channels: [[Float]], layout: ChannelLayout, scene: Vector3 = Vector3(x: 0, y: 0, z: -1),
                       mode: SpatialMode = .anchored, headYawDegrees: Double = 0, yawRateDegreesPerSecond: Double = 0,
                       maximumHRTFVoices: Int = EngineConfiguration.defaultMaximumHRTFVoices)
        -> (left: [Float], right: [Float], engine: Engine)
    {
        let configuration = EngineConfiguration(maximumHRTFVoices: maximumHRTFVoices)
        let engine = Engine(hrtf: KEMAR.set, configuration: configuration, busFilters: busFilters)
        engine.renderer.governor.simulatedLoadFraction = 0
        let frames = channels[0].count
        let ring = AudioRing(capacityFrames: frames, channelCount: layout.channelCount)
        var interleaved = [Float](repeating: 0, count: frames * layout.channelCount)
        for (c, channel) in channels.enumerated() {
            for n in 0..<frames { interleaved[n * layout.channelCount + c] = channel[n] }
        }
        _ = interleaved.withUnsafeBufferPointer { ring.write($0.baseAddress!, frames: frames) }
        let input = RingInput(ring: ring)
        let source = RenderSource(input: input, channelCount: layout.channelCount, layout: layout, mode: mode,
                                  channelPositions: Array(repeating: scene, count: layout.channelCount), gain: 1,
                                  hrtf: KEMAR.set, maximumFrames: configuration.blockFrames)
        func pose(_ seconds: Double) -> HeadPose {
            HeadPose(orientation: Quaternion(yawDegrees: headYawDegrees + yawRateDegreesPerSecond * seconds))
        }
        #expect(engine.commands.push(.placeScene(index: 1, position: scene, widthMetres: 0.4)))
        #expect(engine.commands.push(.setHeadPose(pose(0), glide: false)))
        #expect(engine.commands.push(.addStream(EngineStream(id: 1, source: source, input: input, sceneIndex: 1))))
        let block = configuration.blockFrames, latency = engine.renderer.latencyFrames
        var left: [Float] = [], right: [Float] = []
        var out = [Float](repeating: 0, count: 2 * block)
        while left.count < frames + latency {
            engine.render(into: &out)
            _ = engine.commands.push(.setHeadPose(pose(Double(left.count + 2 * block) / configuration.sampleRateHz), glide: true))
            for n in 0..<block { left.append(out[2 * n]); right.append(out[2 * n + 1]) }
        }
        return (Array(left[latency..<(latency + frames)]), Array(right[latency..<(latency + frames)]), engine)
    }

    /// `noise` in channel `index` of `layout`, silence in the others.
    static func one(_ index: Int, of layout: ChannelLayout, signal: [Float] = noise) -> [[Float]] {
        (0..<layout.channelCount).map { $0 == index ? signal : [Float](repeating: 0, count: signal.count) }
    }

    static func expectCues(_ out: (left: [Float], right: [Float], engine: Engine), atAzimuth azimuth: Double,
                           _ label: String) -> BinauralCues {
        let rendered = CueAnalysis.cues(left: out.left, right: out.right, sampleRateHz: KEMAR.rateHz)
        let reference = KEMAR.referenceCues(azimuthDegrees: azimuth, noise: noise)
        print("\(label): ITD \(rendered.itdMicroseconds) µs (KEMAR at \(azimuth)°: \(reference.itdMicroseconds)), "
              + "ILD \(rendered.interauralLevelDifferenceDecibels) dB (KEMAR \(reference.interauralLevelDifferenceDecibels))")
        #expect(abs(rendered.itdMicroseconds - reference.itdMicroseconds) <= 30, "\(label)")
        #expect(abs(rendered.interauralLevelDifferenceDecibels - reference.interauralLevelDifferenceDecibels) <= 1.5,
                "\(label)")
        return rendered
    }

    /// BS.775: FL/FR at ±30°, FC ahead, the surrounds at ±110°, for a scene straight ahead.
    @Test(arguments: [(0, 30.0), (1, -30), (2, 0), (4, 110), (5, -110)])
    func eachSpeakerOfA51SoundsFromItsITUDirection(channel: Int, azimuthDegrees: Double) {
        let layout = ChannelLayout.surround51
        let out = Self.render(Self.one(channel, of: layout), layout: layout)
        let cues = Self.expectCues(out, atAzimuth: azimuthDegrees, "5.1 \(layout.speakers[channel].abbreviation)")
        if azimuthDegrees == 0 {
            #expect(abs(cues.itdMicroseconds) <= 30 && abs(cues.interauralLevelDifferenceDecibels) <= 1)
        }
        // Five speakers, five voices (the LFE is not one).
        #expect(out.engine.hrtfVoiceCount == 5 && out.engine.busVoiceCount == 0)
    }

    /// BS.2051 0+7+0: sides at ±90°, backs at ±135°; the stage turns with the scene (here at
    /// 60° to the right), FC pointing at it.
    @Test(arguments: [(2, -60.0), (0, -30), (1, -90), (6, 30), (5, 165)])
    func a71StageIsCentredOnItsScene(channel: Int, azimuthDegrees: Double) {
        let layout = ChannelLayout.surround71
        let scene = SphericalPosition(azimuthDegrees: -60, distanceMetres: 1).cartesian
        let out = Self.render(Self.one(channel, of: layout), layout: layout, scene: scene)
        _ = Self.expectCues(out, atAzimuth: azimuthDegrees, "7.1 \(layout.speakers[channel].abbreviation), scene at -60°")
    }

    /// World-locked: with the head turned 45° left, the back-left speaker (135° in the world)
    /// is at 90° from the head; head-locked, it stays at 135° from it.
    @Test func a71SpeakerStaysInTheWorldWhenTheHeadTurnsUnlessHeadLocked() {
        let layout = ChannelLayout.surround71
        let backLeft = 4
        let anchored = Self.render(Self.one(backLeft, of: layout), layout: layout, headYawDegrees: 45)
        _ = Self.expectCues(anchored, atAzimuth: 90, "7.1 BL, head turned 45° left")
        let headLocked = Self.render(Self.one(backLeft, of: layout), layout: layout, mode: .headLocked, headYawDegrees: 45)
        _ = Self.expectCues(headLocked, atAzimuth: 135, "7.1 BL head-locked, head turned 45° left")
    }

    /// Past the voice cap the speakers go to the ambisonic bus together, counted there.
    @Test func pastTheCapTheSpeakersShareTheBus() {
        let layout = ChannelLayout.surround71
        let out = Self.render(Self.one(6, of: layout), layout: layout, maximumHRTFVoices: 4)
        #expect(out.engine.hrtfVoiceCount == 0 && out.engine.busVoiceCount == 7)
        let rendered = CueAnalysis.cues(left: out.left, right: out.right, sampleRateHz: KEMAR.rateHz)
        let reference = KEMAR.referenceCues(azimuthDegrees: 90, noise: Self.noise)
        print("7.1 SL on the bus: ITD \(rendered.itdMicroseconds) µs (KEMAR at 90°: \(reference.itdMicroseconds))")
        #expect(abs(rendered.itdMicroseconds - reference.itdMicroseconds) <= 30)
    }

    /// The LFE: low-passed at 120 Hz into both ears alike, +10 dB in its band.
    @Test func theLFEReachesBothEarsAlikeLowPassedAndTenDecibelsUp() {
        let layout = ChannelLayout.surround51
        let rate = KEMAR.rateHz
        func tone(_ hz: Double) -> [Float] {
            (0..<24000).map { n -> Float in Float(0.05 * sin(2 * Double.pi * hz * Double(n) / rate)) }
        }
        let low = Self.render(Self.one(3, of: layout, signal: tone(50)), layout: layout)
        #expect(low.left == low.right)
        // Past the filter's settling, a whole number of periods.
        let steady = Array(low.left[4800..<(4800 + 9600)])
        let gain = ToneAnalysis.amplitude(of: steady, frequencyHz: 50, sampleRateHz: rate) / 0.05
        let butterworth = 1 / (1 + pow(50.0 / 120, 8)).squareRoot()
        let expected = Double(Decibels.linearGain(10)) * butterworth
            * EngineConfiguration().distanceModel.gain(distanceMetres: 1)
        print("LFE at 50 Hz: gain \(20 * log10(gain)) dB (expected \(20 * log10(expected)) dB)")
        #expect(abs(20 * log10(gain / expected)) <= 0.2)

        let high = Self.render(Self.one(3, of: layout, signal: tone(1000)), layout: layout)
        let leak = ToneAnalysis.amplitude(of: high.left[4800..<14400], frequencyHz: 1000, sampleRateHz: rate) / 0.05
        print("LFE at 1 kHz: gain \(20 * log10(leak)) dB")
        #expect(20 * log10(leak) < -60)
    }

    /// `off`: BS.775's fold-down, Lo = L + 0.707·C + 0.707·Ls (normalized), LFE left out.
    @Test func offFoldsDownAsBS775() {
        let layout = ChannelLayout.surround51
        let channels: [[Float]] = (0..<6).map { c in var n = WhiteNoise(seed: UInt64(c + 1)); return n.samples(4800, amplitude: 0.1) }
        let out = Self.render(channels, layout: layout, mode: .off)
        let h: Float = 0.707_106_77, norm = 1 + 2 * h
        var worst: Float = 0
        for n in 0..<4800 {
            let lo = (channels[0][n] + h * channels[2][n] + h * channels[4][n]) / norm
            let ro = (channels[1][n] + h * channels[2][n] + h * channels[5][n]) / norm
            worst = max(worst, abs(out.left[n] - lo), abs(out.right[n] - ro))
        }
        #expect(worst < 1e-6)
    }

    @Test func layoutsAndTheirErrors() throws {
        #expect(ChannelLayout.standard(channelCount: 6) == .surround51)
        #expect(ChannelLayout.standard(channelCount: 4)?.description == "FL FR BL BR")
        #expect(ChannelLayout.standard(channelCount: 9) == nil)
        #expect(try ChannelLayout.parse("front-left,front-right,front-center,lfe,rear-left,rear-right".split(separator: ",").map(String.init))
                == .surround51)
        // A 5.1 with side surrounds: at ±110° too.
        let side = try ChannelLayout.parse(["FL", "FR", "FC", "LFE", "SL", "SR"])
        #expect(side.azimuthDegrees(of: .sideLeft) == 110)
        #expect(ChannelLayout.surround71.azimuthDegrees(of: .sideLeft) == 90)
        #expect(ChannelLayout.surround71.azimuthDegrees(of: .backRight) == -135)
        #expect(throws: ChannelLayoutError.unknownSpeaker("top-center")) { try ChannelLayout.parse(["FL", "top-center"]) }
        #expect(throws: ChannelLayoutError.repeatedSpeaker("FL")) { try ChannelLayout.parse(["FL", "FL"]) }
        #expect(ChannelLayoutError.unknownSpeaker("x").description.contains("LFE (lfe)"))
    }
}
