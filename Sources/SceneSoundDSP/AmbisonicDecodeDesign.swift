// The binaural decoder of the third-order bus: sixteen filters per ear (one per ACN channel),
// designed once per HRTF set.
//
// Each ear has its own field, into which every source is encoded already delayed by that
// ear's onset delay (AmbisonicBusVoice), so the filters carry only the set's minimum-phase
// responses — time-aligned, without the interaural delay (time-aligned decoding, Zaunschirm,
// Schörkhuber and Höldrich 2018, taken to its end by restoring the ITD per source).
//
// The fit is magnitude least squares (MagLS; Schörkhuber, Zaunschirm and Zotter 2018), per
// frequency bin and ear. Below the order's aliasing limit, N·c / (2π·r) ≈ 1.9 kHz for N = 3
// and a head radius of 8.75 cm, the decoder matches the responses in the least-squares sense.
// Above it a third-order field cannot follow their phase across directions, and trying to
// costs magnitude; so only the magnitudes are fitted there, each direction's target phase
// continued from the decoder's own response in the previous bin by the set's own phase step
// between the two bins (continuing with a constant phase instead, as plain MagLS does, puts
// the high frequencies ahead of the low ones, partly before the filter's start, and moved
// the measured ITD by up to 100 µs).
//
// What order 3 still cannot hold — the far ear's shadow and bright spot at the sides, the
// low-frequency phase of the responses below the horizon — is mostly a broadband level per
// ear and a small delay, and the bus knows every source's direction: the design tabulates on
// the set's grid the gain that brings each ear's decoded energy to the set's own, and how far
// the decoded responses' ITD (measured as the cue tests measure it) strays from the set's;
// the bus applies the gains with the source's encoding gains and takes the stray delay off
// the source's onset delays (AmbisonicBus.encode). Measured against KEMAR's own cues for
// noise (Tests: AmbisonicBusCueTests), the worst ILD error over 0…180° and ±30° elevation is
// 3.1 dB for the plain projection, 2.3 dB for MagLS, 0.2 dB with the level corrections; the
// worst ITD error 58 µs below the horizon at the sides without the delay corrections, 14 µs
// with them (whole-sample delays).
//
// The fit samples the set (bilinear on its 5° grid, as the voices see it) on a 16 × 32
// Gauss–Legendre product grid, exact for products of harmonics below order 16, so the least-
// squares solution is the grid's weighted projection and higher-order detail does not alias
// into the sixteen coefficients. The filters keep the first 64 taps (1.3 ms at 48 kHz, under
// a short fade): the decode (32 FIRs per block, whatever the number of sources) costs half
// of 128 taps.

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
    /// Node-major on the HRTF set's grid, then ear: the broadband gain that brings the
    /// decoded response to the level of the set's own (see earLevels).
    public let earLevelCorrections: [Float]
    /// The same grid, one per node: how many samples the decoded responses' ITD exceeds the
    /// set's (see earDelays).
    public let itdExcessSamples: [Float]

    public static let zNodes = 16, azimuthNodes = 32
    /// Where the fit turns from complex least squares to magnitude only: N·c / (2π·r).
    public static let magnitudeOnlyAboveHz = Double(SphericalHarmonics.order) * 343 / (2 * Double.pi * 0.0875)
    /// The fit's transform length: 94 Hz bins at 48 kHz.
    static let fitLength = 512

    /// `taps`: the decoder's length, at most the set's; the responses are fitted at full
    /// length and the first `taps` samples of the result kept under a short fade.
    /// `magnitudeOnlyAboveHz`: infinity gives the plain least-squares (projection) decoder;
    /// `levelCorrection`: false leaves every earLevels at 1 (the decoder alone, for measuring).
    public static func design(from hrtf: HRTFSet, taps requestedTaps: Int = defaultTaps,
                              magnitudeOnlyAboveHz cutoffHz: Double = magnitudeOnlyAboveHz,
                              levelCorrection: Bool = true) -> AmbisonicDecodeFilters {
        let setTaps = hrtf.filterTaps
        let taps = min(requestedTaps, setTaps)
        let channels = SphericalHarmonics.channelCount
        let n = max(fitLength, FFT.size(atLeast: 4 * setTaps))
        let bins = n / 2 + 1
        let fft = FFT(size: n)

        // The grid: each direction's quadrature weight times its harmonics (scaled so that
        // a weighted sum is a projection coefficient), and its harmonics.
        var projectors: [SIMD16<Double>] = [], harmonics: [SIMD16<Double>] = []
        // Each direction's spectra, direction-major, then ear, then bins.
        var spectraReal: [Double] = [], spectraImaginary: [Double] = []
        var scale = SIMD16<Double>()
        for a in 0..<channels { scale[a] = SphericalHarmonics.projectionScale(order: SphericalHarmonics.order(ofChannel: a)) }
        var reversed = ([Float](repeating: 0, count: setTaps), [Float](repeating: 0, count: setTaps))
        let rule = GaussLegendre.rule(count: zNodes)
        for (z, zWeight) in zip(rule.nodes, rule.weights) {
            let ring = (1 - z * z).squareRoot()
            for k in 0..<azimuthNodes {
                let phi = 2 * Double.pi * Double(k) / Double(azimuthNodes)
                let weight = zWeight * 2 * Double.pi / Double(azimuthNodes)
                _ = hrtf.interpolate(azimuthDegrees: phi * 180 / .pi, elevationDegrees: asin(z) * 180 / .pi,
                                     reversedLeft: &reversed.0, reversedRight: &reversed.1)
                let y = SphericalHarmonics.sn3d(x: ring * cos(phi), y: ring * sin(phi), z: z)
                harmonics.append(y)
                projectors.append(y * scale * weight)
                for response in [reversed.0, reversed.1] {
                    var re = [Double](repeating: 0, count: n), im = re
                    for t in 0..<setTaps { re[t] = Double(response[setTaps - 1 - t]) }
                    fft.transform(real: &re, imag: &im)
                    spectraReal.append(contentsOf: re[0..<bins])
                    spectraImaginary.append(contentsOf: im[0..<bins])
                }
            }
        }
        let directions = harmonics.count

        // Per ear and bin, the sixteen complex coefficients.
        var coefficients = [[(re: SIMD16<Double>, im: SIMD16<Double>)]](
            repeating: [(re: SIMD16<Double>, im: SIMD16<Double>)](repeating: (SIMD16(), SIMD16()), count: bins), count: 2)
        for ear in 0..<2 {
            for bin in 0..<bins {
                let frequencyHz = Double(bin) * hrtf.sampleRateHz / Double(n)
                let magnitudeOnly = frequencyHz >= cutoffHz && bin > 0
                let previous: (re: SIMD16<Double>, im: SIMD16<Double>) = magnitudeOnly ? coefficients[ear][bin - 1] : (SIMD16(), SIMD16())
                var sum = (re: SIMD16<Double>(), im: SIMD16<Double>())
                for d in 0..<directions {
                    let index = (d * 2 + ear) * bins + bin
                    var target = (re: spectraReal[index], im: spectraImaginary[index])
                    if magnitudeOnly {
                        // The decoder's own response here in the previous bin gives the phase.
                        let estimate = (re: (harmonics[d] * previous.re).sum(), im: (harmonics[d] * previous.im).sum())
                        let size = (estimate.re * estimate.re + estimate.im * estimate.im).squareRoot()
                        let magnitude = (target.re * target.re + target.im * target.im).squareRoot()
                        let before = (d * 2 + ear) * bins + bin - 1
                        let step = atan2(target.im, target.re) - atan2(spectraImaginary[before], spectraReal[before])
                        let phase = (size > 0 ? atan2(estimate.im, estimate.re) : 0) + step
                        target = (magnitude * cos(phase), magnitude * sin(phase))
                    }
                    sum.re += projectors[d] * target.re
                    sum.im += projectors[d] * target.im
                }
                coefficients[ear][bin] = sum
            }
        }

        // Back to impulse responses; keep the first `taps` samples, the last under a fade,
        // stored time-reversed.
        let fadeTaps = taps < n ? max(1, taps / 8) : 0
        var filters = [Float](repeating: 0, count: channels * 2 * taps)
        for a in 0..<channels {
            for ear in 0..<2 {
                var re = [Double](repeating: 0, count: n), im = re
                for bin in 0..<bins {
                    re[bin] = coefficients[ear][bin].re[a]
                    im[bin] = (bin == 0 || bin == n / 2) ? 0 : coefficients[ear][bin].im[a]
                    if bin > 0 && bin < n / 2 { re[n - bin] = re[bin]; im[n - bin] = -im[bin] }
                }
                fft.transform(real: &re, imag: &im, inverse: true)
                for t in 0..<taps {
                    let fromEnd = taps - 1 - t
                    let fade = fromEnd < fadeTaps ? 0.5 - 0.5 * cos(Double.pi * Double(fromEnd + 1) / Double(fadeTaps + 1)) : 1
                    filters[(a * 2 + ear) * taps + fromEnd] = Float(re[t] * fade)
                }
            }
        }
        let corrections: (levels: [Float], itdExcessSamples: [Float]) = levelCorrection
            ? earCorrections(of: hrtf, reversedFilters: filters, taps: taps)
            : ([Float](repeating: 1, count: hrtf.nodeCount * 2), [Float](repeating: 0, count: hrtf.nodeCount))
        return AmbisonicDecodeFilters(taps: taps, reversedFilters: filters, earLevelCorrections: corrections.levels,
                                      itdExcessSamples: corrections.itdExcessSamples)
    }

    /// For every node of the set's grid: each ear's gain that brings the decoder's response
    /// to that direction to the energy of the set's own (within ±12 dB), and how much the
    /// decoded responses' ITD exceeds the set's, in samples, measured as CueAnalysis measures
    /// it (the peak of their cross-correlation below 1.5 kHz).
    static func earCorrections(of hrtf: HRTFSet, reversedFilters: [Float], taps: Int)
        -> (levels: [Float], itdExcessSamples: [Float])
    {
        let channels = SphericalHarmonics.channelCount
        var levels = [Float](repeating: 1, count: hrtf.nodeCount * 2)
        var excess = [Float](repeating: 0, count: hrtf.nodeCount)
        // Long enough for the low-pass to ring out past the responses (5 ms).
        let length = max(taps, hrtf.filterTaps) + Int(0.005 * hrtf.sampleRateHz)
        // Time-aligned responses: what is left between them is the filters' own part of the
        // ITD, a fraction of a millisecond.
        let maximumLag = Int((0.0005 * hrtf.sampleRateHz).rounded(.up))
        let lowpass = ButterworthLowpass(cutoffHz: CueAnalysis.itdCutoffHz, sampleRateHz: hrtf.sampleRateHz)
        /// Lag of `right` behind `left` at the peak of their cross-correlation, refined by a parabola.
        func lag(_ leftSamples: [Double], _ rightSamples: [Double]) -> Double {
            leftSamples.withUnsafeBufferPointer { left in
                rightSamples.withUnsafeBufferPointer { right in
                    func c(_ k: Int) -> Double {
                        var sum = 0.0
                        for t in max(0, -k)..<min(length, length - k) { sum += left[t] * right[t + k] }
                        return sum
                    }
                    var best = 0, bestValue = c(0)
                    for k in -maximumLag...maximumLag where k != 0 {
                        let value = c(k)
                        if value > bestValue { best = k; bestValue = value }
                    }
                    let (a, d) = (c(best - 1), c(best + 1))
                    let denominator = a - 2 * bestValue + d
                    return Double(best) + (denominator != 0 ? max(-0.5, min(0.5, 0.5 * (a - d) / denominator)) : 0)
                }
            }
        }
        var decoded = [[Float]](repeating: [Float](repeating: 0, count: taps), count: 2)
        var measured = [[Float]](repeating: [Float](repeating: 0, count: hrtf.filterTaps), count: 2)
        for e in 0..<hrtf.elevationCount {
            let elevation = (-90 + Double(e) * hrtf.elevationStepDegrees) * .pi / 180
            for a in 0..<hrtf.azimuthCount {
                let azimuth = Double(a) * hrtf.azimuthStepDegrees * .pi / 180
                let y = SphericalHarmonics.sn3d(x: cos(elevation) * cos(azimuth), y: cos(elevation) * sin(azimuth),
                                                z: sin(elevation))
                let node = e * hrtf.azimuthCount + a
                for ear in 0..<2 {
                    // Both in natural order.
                    var response = [Double](repeating: 0, count: taps)
                    for c in 0..<channels {
                        let base = (c * 2 + ear) * taps
                        for t in 0..<taps { response[taps - 1 - t] += y[c] * Double(reversedFilters[base + t]) }
                    }
                    let base = (node * 2 + ear) * hrtf.filterTaps
                    for t in 0..<hrtf.filterTaps { measured[ear][hrtf.filterTaps - 1 - t] = hrtf.reversedFilters[base + t] }
                    decoded[ear] = response.map { Float($0) }
                    let decodedEnergy = response.reduce(0) { $0 + $1 * $1 }
                    let measuredEnergy = measured[ear].reduce(0) { $0 + Double($1) * Double($1) }
                    let gain = decodedEnergy > 0 ? (measuredEnergy / decodedEnergy).squareRoot() : 1
                    levels[node * 2 + ear] = Float(min(4, max(0.25, gain)))
                }
                let setITD = lag(lowpass.filter(measured[0], length: length), lowpass.filter(measured[1], length: length))
                let decodedITD = lag(lowpass.filter(decoded[0], length: length), lowpass.filter(decoded[1], length: length))
                excess[node] = Float(decodedITD - setITD)
            }
        }
        return (levels, excess)
    }

    /// How many samples to take off each ear's onset delay for a direction so that the
    /// decoded ITD is the set's: half the excess from each ear, bilinear like earLevels.
    /// Real-time safe.
    @inline(__always)
    public func earDelays(_ hood: HRTFSet.Neighbourhood) -> (left: Float, right: Float) {
        let (n0, n1, n2, n3) = hood.nodes
        let (w0, w1, w2, w3) = hood.weights
        let excess = itdExcessSamples.withUnsafeBufferPointer { c in w0 * c[n0] + w1 * c[n1] + w2 * c[n2] + w3 * c[n3] }
        return (-0.5 * excess, 0.5 * excess)
    }

    /// The per-ear level corrections for a direction, bilinear on the set's grid as its
    /// filters are. Real-time safe.
    @inline(__always)
    public func earLevels(_ hood: HRTFSet.Neighbourhood) -> (left: Float, right: Float) {
        let (n0, n1, n2, n3) = hood.nodes
        let (w0, w1, w2, w3) = hood.weights
        return earLevelCorrections.withUnsafeBufferPointer { c in
            (w0 * c[n0 * 2] + w1 * c[n1 * 2] + w2 * c[n2 * 2] + w3 * c[n3 * 2],
             w0 * c[n0 * 2 + 1] + w1 * c[n1 * 2 + 1] + w2 * c[n2 * 2 + 1] + w3 * c[n3 * 2 + 1])
        }
    }
}
