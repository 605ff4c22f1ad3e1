@testable import SceneSoundDSP
import Testing

/// The energy of a blend of four grid nodes' filters, from the inner products a node's first use
/// makes (parallax's level for near sources): on a set whose every node is one impulse at its
/// own amplitude, the blend is an impulse of Σ wᵢ·aᵢ, so energies go as its square.
@Suite struct NodeBlendEnergyTests {
    /// 4 azimuths × 3 elevations (90° grid); node n's left impulse 1 + n / 10, right 2 − n / 10.
    static let set: HRTFSet = {
        let nodes = 12, taps = 8
        var filters: [Float] = []
        for node in 0..<nodes {
            for amplitude in [1 + Float(node) / 10, 2 - Float(node) / 10] {
                var reversed = [Float](repeating: 0, count: taps)
                reversed[taps - 1] = amplitude   // natural order: the impulse at tap 0
                filters += reversed
            }
        }
        return HRTFSet(sampleRateHz: 48000, filterTaps: taps, azimuthStepDegrees: 90, elevationStepDegrees: 90,
                       reversedFilters: filters, delaysSamples: [Float](repeating: 1, count: nodes * 2),
                       measurementCount: nodes, minimumRetainedEnergyFraction: 1, medianRetainedEnergyFraction: 1)
    }()

    static func amplitude(node: Int, ear: Int) -> Float { ear == 0 ? 1 + Float(node) / 10 : 2 - Float(node) / 10 }

    @Test func aBlendsEnergyGoesAsTheSquareOfItsWeightedAmplitude() {
        let mix = SpectralVoiceMix(hrtf: Self.set, partitionFrames: 128)
        // Between nodes, on a node, across azimuth 0/360 and at the top row (its "up" is itself).
        let directions: [(Double, Double)] = [(0, 0), (30, 20), (-60, -45), (200, 70), (315, 10), (100, 90), (45, -90)]
        for ear in 0..<2 {
            let reference = mix.nodeBlendEnergy(Self.set.neighbourhood(azimuthDegrees: 0, elevationDegrees: 0), ear: ear)
            let referenceNode = Self.set.neighbourhood(azimuthDegrees: 0, elevationDegrees: 0).nodes.0
            let scale = reference / (Self.amplitude(node: referenceNode, ear: ear) * Self.amplitude(node: referenceNode, ear: ear))
            for (azimuth, elevation) in directions {
                let hood = Self.set.neighbourhood(azimuthDegrees: azimuth, elevationDegrees: elevation)
                let (n, w) = (hood.nodes, hood.weights)
                let blended = w.0 * Self.amplitude(node: n.0, ear: ear) + w.1 * Self.amplitude(node: n.1, ear: ear)
                    + w.2 * Self.amplitude(node: n.2, ear: ear) + w.3 * Self.amplitude(node: n.3, ear: ear)
                let energy = mix.nodeBlendEnergy(hood, ear: ear)
                #expect(abs(energy / scale - blended * blended) < 1e-4 * blended * blended,
                        "ear \(ear) at (\(azimuth), \(elevation)): \(energy / scale) against \(blended * blended)")
            }
        }
    }
}
