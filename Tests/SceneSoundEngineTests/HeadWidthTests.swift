import Foundation
import SceneSoundDSP
import SceneSoundEngine
import Testing

/// `--head-width-cm`: the set's ITD scaled to the listener's head, measured on rendered audio.
@Suite struct HeadWidthTests {
    static let noise: [Float] = { var n = WhiteNoise(seed: 19); return n.samples(24000, amplitude: 0.3) }()

    static func itdMicroseconds(_ set: HRTFSet, azimuthDegrees: Double) -> Double {
        var render = OfflineRender()
        render.hrtf = set
        let out = render.renderStatic(noise, azimuthDegrees: azimuthDegrees, distanceMetres: 1)
        return CueAnalysis.cues(left: out.left, right: out.right, sampleRateHz: KEMAR.rateHz).itdMicroseconds
    }

    @Test func aTenPercentWiderHeadHasTenPercentMoreITDAtNinetyDegrees() {
        let kemar = Self.itdMicroseconds(KEMAR.set, azimuthDegrees: 90)
        let factor = HRTFSet.interauralDelayScale(headWidthCentimetres: 16.72)
        #expect(abs(factor - 1.1) < 1e-9)
        let wider = Self.itdMicroseconds(KEMAR.set.scalingInterauralDelays(by: factor), azimuthDegrees: 90)
        let narrower = Self.itdMicroseconds(KEMAR.set.scalingInterauralDelays(by: 13.68 / 15.2), azimuthDegrees: 90)
        print("ITD at 90°: KEMAR's 15.2 cm head \(kemar) µs, 16.72 cm \(wider) µs (×\(wider / kemar)), 13.68 cm \(narrower) µs (×\(narrower / kemar))")
        #expect(abs(wider / kemar - 1.1) < 0.02)
        #expect(abs(narrower / kemar - 0.9) < 0.02)
        // Straight ahead there is no ITD to scale.
        #expect(abs(Self.itdMicroseconds(KEMAR.set.scalingInterauralDelays(by: factor), azimuthDegrees: 0)) < 25)
    }

    @Test func theSetsOwnWidthChangesNothing() {
        let same = KEMAR.set.scalingInterauralDelays(by: HRTFSet.interauralDelayScale(headWidthCentimetres: 15.2))
        let unchanged = same.delaysSamples == KEMAR.set.delaysSamples
        #expect(unchanged)
    }
}
