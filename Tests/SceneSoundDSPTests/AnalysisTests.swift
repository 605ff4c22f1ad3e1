import Testing
import SceneSoundDSP
import Foundation

@Suite struct AnalysisTests {
    @Test func fftMatchesDirectDFT() {
        var noise = WhiteNoise(seed: 5)
        let n = 64
        let x = noise.samples(n).map(Double.init)
        var re = x, im = [Double](repeating: 0, count: n)
        FFT(size: n).transform(real: &re, imag: &im)
        for k in 0..<n {
            var sr = 0.0, si = 0.0
            for t in 0..<n {
                sr += x[t] * cos(-2 * .pi * Double(k * t) / Double(n))
                si += x[t] * sin(-2 * .pi * Double(k * t) / Double(n))
            }
            #expect(abs(sr - re[k]) < 1e-9 && abs(si - im[k]) < 1e-9)
        }
        FFT(size: n).transform(real: &re, imag: &im, inverse: true)
        for t in 0..<n { #expect(abs(re[t] - x[t]) < 1e-12) }
    }

    @Test func minimumPhaseKeepsTheMagnitudeAndFrontLoadsEnergy() {
        // A delayed, smeared response: energy late, so not minimum phase.
        var response = [Float](repeating: 0, count: 64)
        response[20] = 1; response[23] = -0.6; response[30] = 0.3
        let minimum = MinimumPhase.filter(from: response, outputLength: 64)
        func magnitudes(_ h: [Float]) -> [Double] {
            var re = h.map(Double.init) + [Double](repeating: 0, count: 64), im = [Double](repeating: 0, count: 128)
            FFT(size: 128).transform(real: &re, imag: &im)
            return (0..<65).map { (re[$0] * re[$0] + im[$0] * im[$0]).squareRoot() }
        }
        for (a, b) in zip(magnitudes(response), magnitudes(minimum)) { #expect(abs(a - b) < 1e-3) }
        #expect(MinimumPhase.energyFraction(of: minimum, firstTaps: 12) > 0.99)
        #expect(MinimumPhase.energyFraction(of: response, firstTaps: 12) == 0)
    }

    @Test(arguments: [-17.25, -3.0, 0.0, 0.4, 12.6])
    func itdFindsAFractionalLag(lagSamples: Double) {
        // Band-limited noise, delayed on the right by a fractional lag through the frequency domain.
        let n = 8192, rate = 48000.0
        var noise = WhiteNoise(seed: 21)
        var re = noise.samples(n).map(Double.init), im = [Double](repeating: 0, count: n)
        let fft = FFT(size: n)
        fft.transform(real: &re, imag: &im)
        var dr = re, di = im
        for k in 0..<n {
            let f = Double(k <= n / 2 ? k : k - n) / Double(n)
            let phase = -2 * .pi * f * lagSamples
            dr[k] = re[k] * cos(phase) - im[k] * sin(phase)
            di[k] = re[k] * sin(phase) + im[k] * cos(phase)
        }
        fft.transform(real: &re, imag: &im, inverse: true)
        fft.transform(real: &dr, imag: &di, inverse: true)
        let itd = CueAnalysis.itdSeconds(left: re.map(Float.init), right: dr.map(Float.init), sampleRateHz: rate)
        #expect(abs(itd * rate - lagSamples) < 0.05)
    }

    @Test func ildIsTheEnergyRatio() {
        let l: [Float] = [1, -1, 1, -1], r: [Float] = [0.5, -0.5, 0.5, -0.5]
        #expect(abs(CueAnalysis.ildDecibels(left: l, right: r) - 20 * log10(2)) < 1e-9)
    }
}
