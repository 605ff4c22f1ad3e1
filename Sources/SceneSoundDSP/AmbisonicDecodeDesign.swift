// The binaural decoder of the third-order bus: sixteen filters per ear (one per ACN channel),
// designed once per HRTF set.
//
// Each ear has its own field, into which every source is encoded already delayed by that
// ear's onset delay (AmbisonicBusVoice), so the filters carry only the set's minimum-phase
// responses — time-aligned, without the interaural delay. Those vary smoothly with
// direction, so a third-order projection keeps their magnitudes and with them the level
// differences (measured against KEMAR's own cues: ILD within 0.8, 1.5 and 2.3 dB at 30, 60
// and 90°, ITD within 9 µs with whole-sample delays), the idea of time-aligned decoding
// (Zaunschirm, Schörkhuber and Höldrich, 2018) taken to its end by restoring the ITD per
// source.
//
// The projection samples the set (bilinear on its 5° grid, as the voices see it) on a
// 16 × 32 Gauss–Legendre product grid, exact below order 16, so that higher-order detail
// does not alias into the sixteen coefficients. The filters keep the first 64 taps of the
// set's minimum-phase responses (1.3 ms at 48 kHz, under a short fade): the cues above moved
// by under 0.03 dB from 128 taps, and the decode (32 FIRs per block, whatever the number of
// sources) costs half.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

public struct AmbisonicDecodeFilters: Sendable {
    public static let defaultTaps = 64
    public let taps: Int
    /// Channel-major, then ear (left, right), then taps — time-reversed for FIRKernel.
    public let reversedFilters: [Float]

    public static let zNodes = 16, azimuthNodes = 32

    /// `taps`: the decoder's length, at most the set's; a shorter one keeps the responses'
    /// first `taps` samples (minimum phase puts their energy there) under a short fade.
    public static func design(from hrtf: HRTFSet, taps requestedTaps: Int = defaultTaps) -> AmbisonicDecodeFilters {
        let setTaps = hrtf.filterTaps
        let taps = min(requestedTaps, setTaps)
        let channels = SphericalHarmonics.channelCount
        var projection = [Double](repeating: 0, count: channels * 2 * taps)
        var reversed = ([Float](repeating: 0, count: setTaps), [Float](repeating: 0, count: setTaps))
        // Reversed storage: the response's first `taps` samples are the last `taps` entries.
        let skipped = setTaps - taps
        let fadeTaps = taps < setTaps ? max(1, taps / 8) : 0
        let window = (0..<taps).map { t -> Double in
            guard t < fadeTaps else { return 1 }   // t counts back from the last kept sample
            return 0.5 - 0.5 * cos(Double.pi * Double(t + 1) / Double(fadeTaps + 1))
        }
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
                        projection[(a * 2) * taps + t] += c * window[t] * Double(reversed.0[skipped + t])
                        projection[(a * 2 + 1) * taps + t] += c * window[t] * Double(reversed.1[skipped + t])
                    }
                }
            }
        }
        return AmbisonicDecodeFilters(taps: taps, reversedFilters: projection.map { Float($0) })
    }
}
