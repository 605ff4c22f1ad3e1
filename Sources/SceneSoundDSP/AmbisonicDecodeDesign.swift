// The binaural decoder of the third-order bus: sixteen filters per ear (one per ACN channel),
// designed once per HRTF set.
//
// Each ear has its own field, into which every source is encoded already delayed by that
// ear's onset delay (AmbisonicBusVoice), so the filters carry only the set's minimum-phase
// responses — time-aligned, without the interaural delay. Those vary smoothly with
// direction, so a third-order projection keeps their magnitudes and with them the level
// differences (measured against KEMAR's own cues: ILD within 0.7, 1.5 and 2.4 dB at 30, 60
// and 90°, ITD within 14 µs), the idea of
// time-aligned decoding (Zaunschirm, Schörkhuber and Höldrich, 2018) taken to its end by
// restoring the exact ITD per source.
//
// The projection samples the set (bilinear on its 5° grid, as the voices see it) on a
// 16 × 32 Gauss–Legendre product grid, exact below order 16, so that higher-order detail
// does not alias into the sixteen coefficients. The filters keep the set's length (128 taps
// at 48 kHz): the decode costs 32 FIRs per block whatever the number of sources.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

public struct AmbisonicDecodeFilters: Sendable {
    public let taps: Int
    /// Channel-major, then ear (left, right), then taps — time-reversed for FIRKernel.
    public let reversedFilters: [Float]

    public static let zNodes = 16, azimuthNodes = 32

    public static func design(from hrtf: HRTFSet) -> AmbisonicDecodeFilters {
        let taps = hrtf.filterTaps
        let channels = SphericalHarmonics.channelCount
        var projection = [Double](repeating: 0, count: channels * 2 * taps)
        var reversed = ([Float](repeating: 0, count: taps), [Float](repeating: 0, count: taps))
        let rule = GaussLegendre.rule(count: zNodes)
        for (z, zWeight) in zip(rule.nodes, rule.weights) {
            let ring = (1 - z * z).squareRoot()
            for k in 0..<azimuthNodes {
                let phi = 2 * Double.pi * Double(k) / Double(azimuthNodes)
                let weight = zWeight * 2 * Double.pi / Double(azimuthNodes)
                _ = hrtf.interpolate(azimuthDegrees: phi * 180 / .pi, elevationDegrees: asin(z) * 180 / .pi,
                                     reversedLeft: &reversed.0, reversedRight: &reversed.1)
                let harmonics = SphericalHarmonics.sn3d(x: ring * cos(phi), y: ring * sin(phi), z: z)
                for a in 0..<channels {
                    let c = weight * harmonics[a] * SphericalHarmonics.projectionScale(order: SphericalHarmonics.order(ofChannel: a))
                    for t in 0..<taps {  // both stored time-reversed
                        projection[(a * 2) * taps + t] += c * Double(reversed.0[t])
                        projection[(a * 2 + 1) * taps + t] += c * Double(reversed.1[t])
                    }
                }
            }
        }
        return AmbisonicDecodeFilters(taps: taps, reversedFilters: projection.map { Float($0) })
    }
}
