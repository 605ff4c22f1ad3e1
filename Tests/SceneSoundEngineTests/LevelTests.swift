import Foundation
import Testing
import SceneSoundDSP
import SceneSoundEngine

@Suite struct LevelTests {
    static let noise: [Float] = { var n = WhiteNoise(seed: 77); return n.samples(24000, amplitude: 0.3) }()

    func energy(_ x: [Float]) -> Double { x.reduce(0) { $0 + Double($1) * Double($1) } }

    @Test func doublingTheDistanceLosesSixDecibels() {
        let render = OfflineRender()
        let near = render.renderStatic(Self.noise, azimuthDegrees: 20, distanceMetres: 2)
        let far = render.renderStatic(Self.noise, azimuthDegrees: 20, distanceMetres: 4)
        let drop = 10 * log10((energy(far.left) + energy(far.right)) / (energy(near.left) + energy(near.right)))
        print("2 m → 4 m: \(drop) dB")
        #expect(abs(drop + 6.02) < 0.1)
    }

    @Test func pastTheCullDistanceTheSourceFadesOutWithoutAClick() {
        var render = OfflineRender()
        render.configuration.distanceModel = DistanceModel(cullDistanceMetres: 5, cullFadeSeconds: 0.25)
        let sine = MotionTests.sine
        // The source walks away from 4 m to 6 m between 0.3 s and 0.7 s, crossing 5 m at 0.5 s.
        let out = render.render(sine) { t in
            (SphericalPosition(azimuthDegrees: 30, distanceMetres: 4 + 2 * min(1, max(0, (t - 0.3) / 0.4))).cartesian, .neutral)
        }
        let rate = 48000.0
        func rms(_ from: Double, _ to: Double) -> Double {
            let slice = out.left[Int(from * rate)..<Int(to * rate)]
            return (slice.reduce(0) { $0 + Double($1) * Double($1) } / Double(slice.count)).squareRoot()
        }
        // Full level before, about half way through the fade, silent after.
        let before = rms(0.45, 0.5), during = rms(0.6, 0.65), after = rms(0.9, 2.0)
        print("cull fade: before \(before), during \(during), after \(after)")
        #expect(during < 0.8 * before && during > 0.2 * before)
        #expect(after == 0)
        let reference = MotionTests.discontinuity(OfflineRender().renderStatic(sine, azimuthDegrees: 30).left)
        #expect(MotionTests.discontinuity(Array(out.left[..<Int(0.9 * rate)])) < 2 * reference)
    }

    @Test func spatialOffIsBitExact() {
        let out = OfflineRender().render(Self.noise, mode: .off) { _ in (Vector3(x: 3, y: 0, z: 0), .neutral) }
        let exact = out.left == Self.noise && out.right == Self.noise
        #expect(exact)
    }

    @Test func manyLoudSourcesNeverClip() {
        let configuration = EngineConfiguration()
        let renderer = SpatialRenderer(hrtf: KEMAR.set, configuration: configuration, maximumSources: 32)
        for i in 0..<32 {
            var noise = WhiteNoise(seed: UInt64(i + 1))
            let source = RenderSource(input: BufferInput(channels: [noise.samples(48000)]), channelCount: 1,
                                      mode: .anchored,
                                      channelPositions: [SphericalPosition(azimuthDegrees: Double(i) * 11).cartesian],
                                      gain: 1, hrtf: KEMAR.set, maximumFrames: configuration.blockFrames)
            renderer.add(source)
        }
        var out = [Float](repeating: 0, count: 512)
        var peak: Float = 0
        for _ in 0..<150 {
            renderer.render(into: &out)
            peak = max(peak, out.map(abs).max()!)
        }
        print("32 full-scale noise sources: output peak \(peak), limiter gain down to \(renderer.limiter.takeMinimumGain())")
        #expect(peak <= renderer.limiter.thresholdAmplitude * 1.000001)
        #expect(peak > 0.5)
    }

    @Test func aStereoStreamSoundsAsTwoSourcesApart() {
        // Only the left channel carries sound: it must come from the left of the anchor.
        let silence = [Float](repeating: 0, count: Self.noise.count)
        let configuration = EngineConfiguration()
        let renderer = SpatialRenderer(hrtf: KEMAR.set, configuration: configuration, maximumSources: 1)
        let positions = RenderSource.channelPositions(around: SphericalPosition(azimuthDegrees: 0).cartesian,
                                                      channelCount: 2, spreadDegrees: 60)
        renderer.add(RenderSource(input: BufferInput(channels: [Self.noise, silence]), channelCount: 2, mode: .anchored,
                                  channelPositions: positions, gain: 1, hrtf: KEMAR.set,
                                  maximumFrames: configuration.blockFrames))
        var left: [Float] = [], right: [Float] = []
        var out = [Float](repeating: 0, count: 512)
        for _ in 0..<(Self.noise.count / 256) {
            renderer.render(into: &out)
            for n in 0..<256 { left.append(out[2 * n]); right.append(out[2 * n + 1]) }
        }
        let cues = CueAnalysis.cues(left: left, right: right, sampleRateHz: 48000)
        let at30 = KEMAR.referenceCues(azimuthDegrees: 30, noise: Self.noise)
        #expect(abs(cues.itdMicroseconds - at30.itdMicroseconds) < 30)
    }

    @Test func aRoomAddsADecayingTail() {
        var render = OfflineRender()
        render.configuration.room = .small
        var burst = Self.noise
        burst.append(contentsOf: [Float](repeating: 0, count: 24000))
        let out = render.renderStatic(burst, azimuthDegrees: 0)
        let dry = OfflineRender().renderStatic(burst, azimuthDegrees: 0)
        func energy(_ x: ArraySlice<Float>) -> Double { x.reduce(0) { $0 + Double($1) * Double($1) } }
        let tailEarly = energy(out.left[24500..<30000]), tailLate = energy(out.left[40000..<48000])
        #expect(energy(dry.left[24500..<48000]) == 0)
        #expect(tailEarly > 0 && tailLate < tailEarly / 100)
        // Decorrelated between the ears: the tail is not the same signal twice.
        let differ = out.left[25000..<26000] != out.right[25000..<26000]
        #expect(differ)
    }
}
