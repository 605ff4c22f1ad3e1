// Binaural cue measurement on rendered audio, as docs/ARCHITECTURE.md "Quality and performance bars" defines it: the interaural time
// difference by cross-correlation of the two ears below 1.5 kHz, the interaural level
// difference broadband. Used to prepare HRTF sets, by the tests and by `scenesound cues`.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

public struct BinauralCues: Equatable, Sendable {
    /// Positive when the right ear lags (the source is on the left).
    public var interauralTimeDifferenceSeconds: Double
    /// Positive when the left ear is louder.
    public var interauralLevelDifferenceDecibels: Double

    public var itdMicroseconds: Double { interauralTimeDifferenceSeconds * 1e6 }

    public init(interauralTimeDifferenceSeconds: Double, interauralLevelDifferenceDecibels: Double) {
        self.interauralTimeDifferenceSeconds = interauralTimeDifferenceSeconds
        self.interauralLevelDifferenceDecibels = interauralLevelDifferenceDecibels
    }
}

public enum CueAnalysis {
    public static let itdCutoffHz = 1500.0
    public static let maximumITDSeconds = 0.001

    public static func cues(left: [Float], right: [Float], sampleRateHz: Double) -> BinauralCues {
        BinauralCues(interauralTimeDifferenceSeconds: itdSeconds(left: left, right: right, sampleRateHz: sampleRateHz),
                     interauralLevelDifferenceDecibels: ildDecibels(left: left, right: right))
    }

    /// Broadband level difference, left over right.
    public static func ildDecibels(left: [Float], right: [Float]) -> Double {
        var el = 0.0, er = 0.0
        for v in left { el += Double(v) * Double(v) }
        for v in right { er += Double(v) * Double(v) }
        guard el > 0, er > 0 else { return el > 0 ? .infinity : (er > 0 ? -.infinity : 0) }
        return 10 * log10(el / er)
    }

    /// Lag of the right ear behind the left at the peak of their cross-correlation, both
    /// low-passed by a fourth-order Butterworth filter at `cutoffHz` (the reference figures in
    /// docs/ARCHITECTURE.md are measured that way), refined to a fraction of a sample by a parabola
    /// through the peak. Short signals (impulse responses) are padded so that the filter can
    /// ring out.
    public static func itdSeconds(left: [Float], right: [Float], sampleRateHz: Double,
                                  cutoffHz: Double = itdCutoffHz,
                                  maximumLagSeconds: Double = maximumITDSeconds) -> Double {
        let padding = Int(0.05 * sampleRateHz)
        let count = max(left.count, right.count) + padding
        let l = ButterworthLowpass(cutoffHz: cutoffHz, sampleRateHz: sampleRateHz).filter(left, length: count)
        let r = ButterworthLowpass(cutoffHz: cutoffHz, sampleRateHz: sampleRateHz).filter(right, length: count)

        let maxLag = Int((maximumLagSeconds * sampleRateHz).rounded(.up))
        let n = FFT.size(atLeast: count + maxLag + 1)
        let fft = FFT(size: n)
        var lr = l + [Double](repeating: 0, count: n - count), li = [Double](repeating: 0, count: n)
        var rr = r + [Double](repeating: 0, count: n - count), ri = li
        fft.transform(real: &lr, imag: &li)
        fft.transform(real: &rr, imag: &ri)
        // conj(L)·R, so that c[k] = Σ l[t]·r[t+k] peaks at k > 0 when the right ear lags.
        var cr = [Double](repeating: 0, count: n), ci = cr
        for k in 0..<n {
            cr[k] = lr[k] * rr[k] + li[k] * ri[k]
            ci[k] = lr[k] * ri[k] - li[k] * rr[k]
        }
        fft.transform(real: &cr, imag: &ci, inverse: true)

        func c(_ lag: Int) -> Double { cr[(lag + n) % n] }
        var best = 0
        for lag in -maxLag...maxLag where c(lag) > c(best) { best = lag }
        let (a, b, d) = (c(best - 1), c(best), c(best + 1))
        let denominator = a - 2 * b + d
        let offset = denominator != 0 ? 0.5 * (a - d) / denominator : 0
        return (Double(best) + max(-0.5, min(0.5, offset))) / sampleRateHz
    }
}

/// A fourth-order Butterworth low-pass (two biquads by the bilinear transform), for analysis.
struct ButterworthLowpass {
    private var sections: [(b0: Double, b1: Double, b2: Double, a1: Double, a2: Double)] = []

    init(cutoffHz: Double, sampleRateHz: Double) {
        let k = tan(.pi * cutoffHz / sampleRateHz)
        // The pole pairs of a fourth-order Butterworth: Q = 1 / (2 cos(π/8)), 1 / (2 cos(3π/8)).
        for q in [0.541_196_100_146_197, 1.306_562_964_876_376_7] {
            let norm = 1 / (1 + k / q + k * k)
            let b0 = k * k * norm
            sections.append((b0, 2 * b0, b0, 2 * (k * k - 1) * norm, (1 - k / q + k * k) * norm))
        }
    }

    /// Filters `x`, zero-extended to `length` samples.
    func filter(_ x: [Float], length: Int) -> [Double] {
        var y = (0..<length).map { $0 < x.count ? Double(x[$0]) : 0 }
        for s in sections {
            var z1 = 0.0, z2 = 0.0
            for i in 0..<length {
                let input = y[i]
                let output = s.b0 * input + z1
                z1 = s.b1 * input - s.a1 * output + z2
                z2 = s.b2 * input - s.a2 * output
                y[i] = output
            }
        }
        return y
    }
}

/// A reproducible white-noise source (xorshift64*), uniform in [−amplitude, amplitude).
public struct WhiteNoise: Sendable {
    private var state: UInt64

    public init(seed: UInt64 = 0x9E37_79B9_7F4A_7C15) { state = seed == 0 ? 1 : seed }

    public mutating func next(amplitude: Float = 1) -> Float {
        state ^= state >> 12; state ^= state << 25; state ^= state >> 27
        let bits = (state &* 0x2545_F491_4F6C_DD1D) >> 40  // 24 random bits
        return (Float(bits) / Float(1 << 23) - 1) * amplitude
    }

    public mutating func samples(_ count: Int, amplitude: Float = 1) -> [Float] {
        (0..<count).map { _ in next(amplitude: amplitude) }
    }
}

/// The level of one frequency in a signal, for measuring tones in recordings.
public enum ToneAnalysis {
    /// Amplitude of the component at `frequencyHz` (a Goertzel filter): over a whole number of
    /// periods a sine of amplitude A gives A; gaps, clicks or other tones give less.
    public static func amplitude<Samples: Collection>(of samples: Samples, frequencyHz: Double,
                                                      sampleRateHz: Double) -> Double where Samples.Element == Float {
        guard !samples.isEmpty else { return 0 }
        let coefficient = 2 * cos(2 * Double.pi * frequencyHz / sampleRateHz)
        var s1 = 0.0, s2 = 0.0
        for x in samples {
            let s0 = Double(x) + coefficient * s1 - s2
            s2 = s1
            s1 = s0
        }
        let power = max(0, s1 * s1 + s2 * s2 - coefficient * s1 * s2)
        return 2 * power.squareRoot() / Double(samples.count)
    }
}

/// Power per third octave of a signal, for measuring spectra of rendered audio.
public enum BandAnalysis {
    /// Third-octave centres (nominal) from 200 Hz to 12.5 kHz, the span the timbre bars cover.
    public static let thirdOctavesHz: [Double] = [200, 250, 315, 400, 500, 630, 800, 1000, 1250, 1600, 2000, 2500,
                                                  3150, 4000, 5000, 6300, 8000, 10000, 12500]

    /// The mean power per band (Welch: Hann-windowed, half-overlapping segments of
    /// `segmentFrames`), band edges a sixth of an octave each side of the centre. Compare two
    /// signals' results band by band: the scale is the same for both.
    public static func thirdOctavePowers(of signal: [Float], centresHz: [Double] = thirdOctavesHz,
                                         sampleRateHz: Double, segmentFrames: Int = 8192) -> [Double] {
        let n = segmentFrames
        let fft = FFT(size: n)
        let window = (0..<n).map { 0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(n)) }
        var power = [Double](repeating: 0, count: n / 2 + 1)
        var start = 0
        while start + n <= signal.count {
            var re = (0..<n).map { Double(signal[start + $0]) * window[$0] }, im = [Double](repeating: 0, count: n)
            fft.transform(real: &re, imag: &im)
            for k in power.indices { power[k] += re[k] * re[k] + im[k] * im[k] }
            start += n / 2
        }
        let binHz = sampleRateHz / Double(n)
        return centresHz.map { centre in
            let low = max(1, Int((centre * pow(2, -1.0 / 6) / binHz).rounded(.up)))
            let high = min(n / 2, Int((centre * pow(2, 1.0 / 6) / binHz).rounded(.down)))
            var sum = 0.0
            for k in low...max(low, high) { sum += power[k] }
            return sum / Double(max(1, high - low + 1))
        }
    }
}
