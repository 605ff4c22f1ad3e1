import Testing
import SceneSoundDSP

/// The diffuse-field response of small synthetic sets whose answer is known.
@Suite struct DiffuseFieldResponseTests {
    /// A set on a 90° grid whose every direction has `left` and `right` (natural order, 8 taps).
    static func uniformSet(left: [Float], right: [Float]) -> HRTFSet {
        let nodes = 4 * 3
        var filters: [Float] = []
        for _ in 0..<nodes { filters += left.reversed() + right.reversed() }
        return HRTFSet(sampleRateHz: 48000, filterTaps: 8, azimuthStepDegrees: 90, elevationStepDegrees: 90,
                       reversedFilters: filters, delaysSamples: [Float](repeating: 1, count: nodes * 2),
                       measurementCount: nodes, minimumRetainedEnergyFraction: 1, medianRetainedEnergyFraction: 1)
    }

    @Test func theSameResponseEverywhereIsItsOwnDiffuseField() {
        // 1 − 0.5 z⁻¹... has its zero inside the unit circle: already minimum phase.
        let response: [Float] = [1, -0.5, 0, 0, 0, 0, 0, 0]
        let filter = DiffuseFieldResponse.filter(of: Self.uniformSet(left: response, right: response), taps: 16)
        for (t, value) in filter.enumerated() {
            #expect(abs(value - (t < 8 ? response[t] : 0)) < 1e-3, "tap \(t): \(value)")
        }
    }

    /// Ears at amplitudes 0.5 and 1 (one delayed): the power average, √((0.25 + 1) / 2), flat.
    @Test func theEarsArePowerAveraged() {
        let filter = DiffuseFieldResponse.filter(of: Self.uniformSet(left: [0.5, 0, 0, 0, 0, 0, 0, 0],
                                                                     right: [0, 0, 1, 0, 0, 0, 0, 0]), taps: 8)
        #expect(abs(filter[0] - (0.625 as Float).squareRoot()) < 1e-3)
        #expect(filter.dropFirst().allSatisfy { abs($0) < 1e-3 })
    }
}
