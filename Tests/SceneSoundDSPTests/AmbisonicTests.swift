import Foundation
import Testing
import SceneSoundDSP
import SceneSoundKernelConformance

/// The third-order bus: harmonics, rotation matrices, and each kernel's fast version
/// against its scalar reference (within 1e-5).
@Suite struct AmbisonicTests {
    static let tolerance: Float = 1e-5

    func maximumDifference(_ a: [Float], _ b: [Float]) -> Float {
        zip(a, b).map { abs($0 - $1) }.max() ?? 0
    }

    static func randomDirection(_ noise: inout WhiteNoise) -> Vector3 {
        Vector3(x: Double(noise.next()), y: Double(noise.next()), z: Double(noise.next()))
    }

    /// SN3D: ∫ Y_a Y_b dΩ = 4π/(2n+1) δ_ab, by an exact quadrature.
    @Test func harmonicsAreOrthogonalWithSN3DNorms() {
        let rule = GaussLegendre.rule(count: 8)
        var gram = [[Double]](repeating: [Double](repeating: 0, count: 16), count: 16)
        for (z, w) in zip(rule.nodes, rule.weights) {
            for k in 0..<16 {
                let phi = 2 * Double.pi * Double(k) / 16
                let r = (1 - z * z).squareRoot()
                let y = SphericalHarmonics.sn3d(x: r * cos(phi), y: r * sin(phi), z: z)
                for a in 0..<16 { for b in 0..<16 { gram[a][b] += w * 2 * .pi / 16 * y[a] * y[b] } }
            }
        }
        for a in 0..<16 {
            for b in 0..<16 {
                let expected = a == b ? 1 / SphericalHarmonics.projectionScale(order: SphericalHarmonics.order(ofChannel: a)) : 0
                #expect(abs(gram[a][b] - expected) < 1e-9, "channels \(a), \(b)")
            }
        }
    }

    @Test func harmonicsFollowTheSOFAAzimuth() {
        // +90° is left: ambisonic Y (ACN 1) is +1 there; ahead is X (ACN 3).
        let left = SphericalHarmonics.sn3d(SphericalPosition(azimuthDegrees: 90).cartesian)
        let ahead = SphericalHarmonics.sn3d(SphericalPosition(azimuthDegrees: 0).cartesian)
        let up = SphericalHarmonics.sn3d(SphericalPosition(azimuthDegrees: 0, elevationDegrees: 90).cartesian)
        #expect(abs(left[1] - 1) < 1e-6 && abs(ahead[3] - 1) < 1e-6 && abs(up[2] - 1) < 1e-6)
    }

    /// M · Y(d) = Y(q⁻¹ d) for any direction: the matrix turns the world field into the head's.
    @Test(arguments: [Quaternion(yawDegrees: 90), Quaternion(yawDegrees: -37, pitchDegrees: 20, rollDegrees: 11),
                      Quaternion(yawDegrees: 170, pitchDegrees: -65, rollDegrees: 40)])
    func rotationMatrixRotatesTheHarmonics(orientation: Quaternion) {
        let rotator = AmbisonicRotator()
        var m = [Float](repeating: 0, count: AmbisonicRotationKernel.matrixCount)
        rotator.matrix(for: orientation, into: &m)
        var noise = WhiteNoise(seed: 5)
        for _ in 0..<20 {
            let d = Self.randomDirection(&noise)
            let world = SphericalHarmonics.sn3d(d)
            let expected = SphericalHarmonics.sn3d(orientation.conjugate.rotate(d))
            // Apply M as a one-frame, constant rotation through the reference kernel.
            let input = (0..<16).map { world[$0] }
            var output = [Float](repeating: 0, count: 16)
            AmbisonicRotationKernel.rotateScalar(input: input, inputStride: 1, output: &output, outputStride: 1, frames: 1,
                                                 from: m, to: m)
            for a in 0..<16 { #expect(abs(output[a] - expected[a]) < 1e-5, "channel \(a)") }
        }
    }

    /// The register-blocked sum of several sources at constant gains against one scalar pass
    /// per source, through the table the engine runs (the checks the AVX2 and AVX-512 tables share).
    @Test(arguments: KernelConformance.encodingCases)
    func encoderSumMatchesScalar(frames: Int, sources: Int) {
        KernelConformance.encodingMatchesScalar(.portable, frames: frames, sources: sources)
    }

    @Test(arguments: [128, 131])
    func decoderFastMatchesScalar(frames: Int) {
        var noise = WhiteNoise(seed: 11)
        let taps = 128
        let stride = taps - 1 + frames
        let field = noise.samples(16 * stride, amplitude: 0.1)
        let filters = noise.samples(16 * 2 * taps, amplitude: 0.02)
        var scratch = [Float](repeating: 0, count: frames)
        var scalarLeft = [Float](repeating: 0, count: frames), scalarRight = scalarLeft
        var fastLeft = scalarLeft, fastRight = scalarLeft
        let other = noise.samples(16 * stride, amplitude: 0.1)
        AmbisonicDecodeKernel.decodeScalar(left: field, right: other, channelStride: stride, frames: frames,
                                           reversedFilters: filters, taps: taps, scratch: &scratch,
                                           leftOutput: &scalarLeft, rightOutput: &scalarRight)
        AmbisonicDecodeKernel.decode(left: field, right: other, channelStride: stride, frames: frames,
                                     reversedFilters: filters, taps: taps, scratch: &scratch,
                                     leftOutput: &fastLeft, rightOutput: &fastRight)
        #expect(maximumDifference(scalarLeft, fastLeft) < Self.tolerance)
        #expect(maximumDifference(scalarRight, fastRight) < Self.tolerance)
        #expect(scalarLeft.contains { $0 != 0 })
    }

    @Test(arguments: KernelConformance.rotationFrames)
    func rotationFastMatchesScalar(frames: Int) {
        KernelConformance.rotationMatchesScalar(.portable, frames: frames)
    }
}
