// Diffuse-field equalization of a measured set, designed from the set itself. A measured
// response holds, besides the directional cues, what all directions share: the ear
// simulator's canal resonance and the measuring loudspeaker's response. Played over
// headphones, that common part lands on top of the listener's own ears (KEMAR: +10 dB at
// 2.5 kHz, −15 dB at 100 Hz). Two steps remove it:
//
// 1. Low frequencies the measurement lacks (the loudspeaker's missing bass) are rebuilt as a
//    head has them: below `repairFrequencyHz` each ear's level fades from its measured value
//    to the set's diffuse-field level there, as (f / repairFrequencyHz)² (a small sphere's
//    scattering), so level differences between ears and directions tend to 0 dB; the phase
//    (and so the interaural time difference) stays as measured.
// 2. Every response is divided by the diffuse-field response (DiffuseFieldResponse: both
//    ears, solid-angle weighted, after step 1) of the directions a desktop's sources come
//    from (`desktopFieldWeight`), smoothed to third octaves and bounded. Both ears get the
//    same gain, so interaural cues are untouched.
//
// Both are zero-phase gains on the measured responses; HRTFPreparation then makes its
// minimum-phase filters and onset delays from the result as from any measurement.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How a set's responses are equalized when it is prepared (the daemon's `hrtf_eq`).
public enum HRTFEqualization: String, CaseIterable, Sendable {
    /// Diffuse-field equalized, low frequencies rebuilt (DiffuseFieldEqualization).
    case diffuse
    /// The set's responses as measured.
    case none
}

public enum DiffuseFieldEqualization {
    /// Below this the measured levels fade to the head's low-frequency limit (MIT KEMAR's
    /// loudspeaker falls off below about 160 Hz; a sphere's level differences are a few dB
    /// here and tend to 0 dB an octave or two below).
    public static let repairFrequencyHz = 300.0
    /// The equalizer's gain stays within these bounds (a set's deep notches and its empty
    /// band above the original Nyquist frequency are not filled by boosts).
    public static let maximumBoostDecibels = 12.0
    public static let maximumCutDecibels = 24.0
    /// Above this the boost allowed falls to none at `boostEndHz`: a set's top octave holds
    /// little energy and much direction-dependent detail (MIT KEMAR: −12 dB at 16 kHz), which
    /// a full boost would turn into the loudest, least stable part of the response.
    public static let boostFadeStartHz = 14000.0
    public static let boostEndHz = 20000.0

    static func boostLimitDecibels(frequencyHz f: Double) -> Double {
        guard f > boostFadeStartHz else { return maximumBoostDecibels }
        return maximumBoostDecibels * max(0, 1 - log(f / boostFadeStartHz) / log(boostEndHz / boostFadeStartHz))
    }

    /// Refinements of the equalizer (each one divides by the smoothed residual: three take
    /// the equalized KEMAR field within 0.05 dB of flat in every third octave).
    static let refinementPasses = 3

    /// Which directions the equalization makes flat on average: the directions a desktop's
    /// sources come from, as a weight on the sphere by elevation — full within ±30° (windows on
    /// screens at the listener's distance span about ±20° with the head's pitch on top, and
    /// every virtual surround speaker is at 0°), fading (raised cosine) to none at ±60°.
    /// Azimuth is not weighted: the head turns, screens and speakers surround it. Above 5 kHz
    /// the whole sphere's average differs from this band's by up to ±1.5 dB (KEMAR: rings above
    /// 40° and below −30° hold the pinna's other notches), which equalizing for the whole sphere
    /// left in every desktop sound. The late reverb, which does come from every direction, is
    /// still heard through the whole sphere's response (DiffuseFieldResponse.filter).
    public static func desktopFieldWeight(elevationDegrees: Double) -> Double {
        let a = abs(elevationDegrees)
        if a <= desktopBandDegrees { return 1 }
        if a >= desktopFadeEndDegrees { return 0 }
        return 0.5 + 0.5 * cos(.pi * (a - desktopBandDegrees) / (desktopFadeEndDegrees - desktopBandDegrees))
    }
    public static let desktopBandDegrees = 30.0
    public static let desktopFadeEndDegrees = 60.0

    /// Time kept before and after each response for the gains' zero-phase spread.
    static let marginSeconds = 0.004

    /// The measurements equalized: same directions, responses longer by 2 × marginSeconds
    /// (the same shift in both ears, so the interaural delay is unchanged).
    public static func equalize(_ measurements: [HRIRMeasurement], sampleRateHz: Double,
                                elevationWeight: (Double) -> Double = desktopFieldWeight) -> [HRIRMeasurement] {
        guard !measurements.isEmpty else { return measurements }
        let length = measurements.map { max($0.left.count, $0.right.count) }.max()!
        let n = FFT.size(atLeast: 4 * length)
        let fft = FFT(size: n)
        let bins = n / 2 + 1
        let binHz = sampleRateHz / Double(n)
        let weights = DiffuseFieldResponse.solidAngleWeights(of: measurements.map {
            SphericalPosition(azimuthDegrees: $0.azimuthDegrees, elevationDegrees: $0.elevationDegrees).cartesian
        }, elevationWeight: elevationWeight)

        // Each ear's power spectrum (measurement-major, then ear) and the diffuse field's.
        var spectra: [[Double]] = []
        spectra.reserveCapacity(2 * measurements.count)
        for m in measurements {
            spectra.append(DiffuseFieldResponse.powerSpectrum(m.left, fft: fft))
            spectra.append(DiffuseFieldResponse.powerSpectrum(m.right, fft: fft))
        }
        let earWeights = weights.flatMap { [$0, $0] }
        let raw = DiffuseFieldResponse.averagePower(spectra, weights: earWeights)

        // 1. The low-frequency repair, as a power gain per ear per bin.
        let repair = repairFrequencyHz
        let diffuseAtRepair = bandPower(raw, centreHz: repair, binHz: binHz)
        var gains = spectra.map { spectrum -> [Double] in
            let earAtRepair = bandPower(spectrum, centreHz: repair, binHz: binHz)
            return (0..<bins).map { k in
                let f = Double(k) * binHz
                guard f < 2 * repair else { return 1 }
                // Below the repair frequency the model alone; up to an octave above it, a fade
                // (in dB over log frequency) from the model to the measurement.
                let share = min(1, (f / repair) * (f / repair))
                let modelDecibels = power(decibels: diffuseAtRepair) + share * (power(decibels: earAtRepair) - power(decibels: diffuseAtRepair))
                let measuredDecibels = power(decibels: spectrum[k])
                let fade = f <= repair ? 0 : log2(f / repair)
                let targetDecibels = modelDecibels + fade * (measuredDecibels - modelDecibels)
                let gainDecibels = min(30, max(-30, targetDecibels - measuredDecibels))
                return pow(10, gainDecibels / 10)
            }
        }

        // 2. The diffuse field of the repaired set, smoothed, inverted and bounded.
        for i in spectra.indices { for k in 0..<bins { spectra[i][k] *= gains[i][k] } }
        let repaired = DiffuseFieldResponse.averagePower(spectra, weights: earWeights)
        spectra = []
        // The inverse of the smoothed field leaves the equalized field off flat where the field
        // has structure within a third octave (the mean of D / smooth(D) over a band is not 1:
        // up to 0.5 dB for KEMAR): refined until the equalized field, smoothed as it was, is flat.
        var inverse = thirdOctaveSmoothed(repaired).map { 1 / max($0, 1e-30) }
        for _ in 0..<refinementPasses {
            let residual = thirdOctaveSmoothed(zip(repaired, inverse).map { $0 * $1 })
            for k in inverse.indices { inverse[k] /= max(residual[k], 1e-30) }
        }
        let equalizer = inverse.enumerated().map { k, g -> Double in
            let decibels = min(boostLimitDecibels(frequencyHz: Double(k) * binHz), max(-maximumCutDecibels, power(decibels: g)))
            return pow(10, decibels / 10)
        }
        for i in gains.indices { for k in 0..<bins { gains[i][k] *= equalizer[k] } }

        // Apply as zero-phase amplitude gains, keeping a margin each side for their spread.
        let margin = Int((marginSeconds * sampleRateHz).rounded())
        func apply(_ response: [Float], _ powerGain: [Double]) -> [Float] {
            var re = [Double](repeating: 0, count: n), im = re
            for (t, v) in response.enumerated() { re[t] = Double(v) }
            fft.transform(real: &re, imag: &im)
            for k in 0..<n {
                let g = powerGain[min(k, n - k)].squareRoot()
                re[k] *= g
                im[k] *= g
            }
            fft.transform(real: &re, imag: &im, inverse: true)
            return (0..<(length + 2 * margin)).map { Float(re[($0 - margin + n) % n]) }
        }
        return measurements.enumerated().map { i, m in
            var e = m
            e.left = apply(m.left, gains[2 * i])
            e.right = apply(m.right, gains[2 * i + 1])
            return e
        }
    }

    /// A power in decibels, floored.
    static func power(decibels p: Double) -> Double { 10 * log10(max(p, 1e-30)) }

    /// The mean power of the third-octave band around `centreHz`.
    static func bandPower(_ spectrum: [Double], centreHz: Double, binHz: Double) -> Double {
        let low = max(1, Int((centreHz * pow(2, -1.0 / 6) / binHz).rounded(.up)))
        let high = max(low, min(spectrum.count - 1, Int((centreHz * pow(2, 1.0 / 6) / binHz).rounded(.down))))
        var sum = 0.0
        for k in low...high { sum += spectrum[k] }
        return sum / Double(high - low + 1)
    }

    /// Each bin the mean power of the third octave around it (a running sum: the bands are
    /// thousands of bins wide at high frequencies).
    static func thirdOctaveSmoothed(_ spectrum: [Double]) -> [Double] {
        var cumulative = [Double](repeating: 0, count: spectrum.count + 1)
        for k in spectrum.indices { cumulative[k + 1] = cumulative[k] + spectrum[k] }
        return spectrum.indices.map { k in
            guard k > 0 else { return spectrum[1] }
            let low = max(1, Int((Double(k) * pow(2, -1.0 / 6)).rounded(.down)))
            let high = min(spectrum.count - 1, Int((Double(k) * pow(2, 1.0 / 6)).rounded(.up)))
            return (cumulative[high + 1] - cumulative[low]) / Double(high - low + 1)
        }
    }
}
