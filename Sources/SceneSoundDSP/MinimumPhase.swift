// Minimum-phase reconstruction by the real cepstrum (folding the cepstrum onto positive
// quefrencies). A minimum-phase filter has the same magnitude response as the measured one
// with its energy packed at the start, so it can be truncated hard and interpolated between
// directions without comb filtering; the interaural delay is carried separately.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

public enum MinimumPhase {
    /// The minimum-phase version of `impulseResponse`, `outputLength` taps long.
    /// The FFT is oversized (≥ 8× the response) to keep cepstral aliasing negligible.
    public static func filter(from impulseResponse: [Float], outputLength: Int) -> [Float] {
        let n = FFT.size(atLeast: max(impulseResponse.count, outputLength) * 8)
        let fft = FFT(size: n)
        var re = [Double](repeating: 0, count: n), im = [Double](repeating: 0, count: n)
        for (i, v) in impulseResponse.enumerated() { re[i] = Double(v) }
        fft.transform(real: &re, imag: &im)

        // log|H|, floored 200 dB below the peak so that spectral zeros stay finite.
        var peak = 0.0
        for i in 0..<n { peak = max(peak, (re[i] * re[i] + im[i] * im[i]).squareRoot()) }
        let floor = max(peak * 1e-10, .leastNormalMagnitude)
        for i in 0..<n {
            re[i] = log(max((re[i] * re[i] + im[i] * im[i]).squareRoot(), floor))
            im[i] = 0
        }
        fft.transform(real: &re, imag: &im, inverse: true)  // real cepstrum

        // Fold: keep c[0] and c[n/2], double the positive quefrencies, drop the negative ones.
        for i in 1..<n / 2 { re[i] *= 2; im[i] = 0 }
        for i in n / 2 + 1..<n { re[i] = 0; im[i] = 0 }
        im[0] = 0; im[n / 2] = 0
        fft.transform(real: &re, imag: &im)

        // exp of the folded log-spectrum is the minimum-phase spectrum.
        for i in 0..<n {
            let magnitude = exp(re[i])
            let phase = im[i]
            re[i] = magnitude * cos(phase)
            im[i] = magnitude * sin(phase)
        }
        fft.transform(real: &re, imag: &im, inverse: true)
        return (0..<outputLength).map { Float(re[$0]) }
    }

    /// Fraction of the energy of `response` that lies in its first `taps` samples.
    public static func energyFraction(of response: [Float], firstTaps taps: Int) -> Double {
        var head = 0.0, total = 0.0
        for (i, v) in response.enumerated() {
            let e = Double(v) * Double(v)
            total += e
            if i < taps { head += e }
        }
        return total > 0 ? head / total : 1
    }
}
