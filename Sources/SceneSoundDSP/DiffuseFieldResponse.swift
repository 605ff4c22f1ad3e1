// The ears' response to a diffuse field: the power average of an HRTF set's responses over
// the sphere (both ears, each direction weighted by the solid angle it stands for). Two users
// share this one average: the late reverb is heard through it as a minimum-phase filter (so
// that the tail has the same colouring as the direct sound), and DiffuseFieldEqualization
// removes it from every response of a set when the set is prepared.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

public enum DiffuseFieldResponse {
    public static let defaultTaps = 64

    /// The filter, `taps` long (a multiple of 8), in natural (not reversed) order. Off-line
    /// (allocates).
    public static func filter(of hrtf: HRTFSet, taps: Int = defaultTaps) -> [Float] {
        precondition(taps > 0 && taps % 8 == 0)
        let n = FFT.size(atLeast: 2 * hrtf.filterTaps)
        let fft = FFT(size: n)
        var spectra: [[Double]] = [], weights: [Double] = []
        for e in 0..<hrtf.elevationCount {
            let elevation = -90 + Double(e) * hrtf.elevationStepDegrees
            // A ring's nodes share its band of the sphere (∝ cos elevation); at the poles the
            // ring is one point standing for a cap half a step wide.
            let step = hrtf.elevationStepDegrees * .pi / 180
            let weight = abs(elevation) >= 90 ? (1 - cos(step / 2)) / step : cos(elevation * .pi / 180)
            for a in 0..<hrtf.azimuthCount {
                let node = e * hrtf.azimuthCount + a
                for ear in 0..<2 {
                    let base = (node * 2 + ear) * hrtf.filterTaps
                    let response = (0..<hrtf.filterTaps).map { hrtf.reversedFilters[base + hrtf.filterTaps - 1 - $0] }
                    spectra.append(powerSpectrum(response, fft: fft))
                    weights.append(weight)
                }
            }
        }
        let power = averagePower(spectra, weights: weights)
        // A zero-phase response with the average magnitude, then its minimum-phase version.
        var re = (0..<n).map { power[min($0, n - $0)].squareRoot() }, im = [Double](repeating: 0, count: n)
        fft.transform(real: &re, imag: &im, inverse: true)
        var symmetric = [Float](repeating: 0, count: n)
        for t in 0..<n { symmetric[(t + n / 2) % n] = Float(re[t]) }
        return MinimumPhase.filter(from: symmetric, outputLength: taps)
    }

    /// |H(k)|² for bins 0 … size/2 of a response zero-padded to the transform's size.
    public static func powerSpectrum(_ response: [Float], fft: FFT) -> [Double] {
        let n = fft.size
        var re = [Double](repeating: 0, count: n), im = re
        for (t, v) in response.prefix(n).enumerated() { re[t] = Double(v) }
        fft.transform(real: &re, imag: &im)
        return (0...(n / 2)).map { re[$0] * re[$0] + im[$0] * im[$0] }
    }

    /// The weighted average of power spectra, bin by bin: the diffuse-field power when the
    /// spectra are both ears' responses over the sphere and the weights their solid angles.
    public static func averagePower(_ spectra: [[Double]], weights: [Double]) -> [Double] {
        precondition(spectra.count == weights.count && !spectra.isEmpty)
        var sum = [Double](repeating: 0, count: spectra[0].count), total = 0.0
        for (spectrum, weight) in zip(spectra, weights) {
            for k in sum.indices { sum[k] += weight * spectrum[k] }
            total += weight
        }
        return sum.map { $0 / max(total, .leastNormalMagnitude) }
    }

    /// The solid angle each of `directions` (unit vectors) stands for: the share of the sphere
    /// nearer to it than to any other (its Voronoi cell), counted on a 2° grid. A set measured
    /// densely in one region and sparsely in another is averaged over the sphere, not over
    /// its list; one that lacks a region lets its nearest measurements stand for it.
    ///
    /// `elevationWeight` weights the sphere itself by elevation (1 everywhere: the whole
    /// sphere); each direction then stands for its cell's weighted area.
    public static func solidAngleWeights(of directions: [Vector3],
                                         elevationWeight: (Double) -> Double = { _ in 1 }) -> [Double] {
        var weights = [Double](repeating: 0, count: directions.count)
        let step = 2.0
        var elevation = -90 + step / 2
        while elevation < 90 {
            let ringWeight = cos(elevation * .pi / 180) * elevationWeight(elevation)
            guard ringWeight > 0 else { elevation += step; continue }
            var azimuth = step / 2
            while azimuth < 360 {
                let point = SphericalPosition(azimuthDegrees: azimuth, elevationDegrees: elevation).cartesian
                var best = 0, bestDot = -2.0
                for (i, d) in directions.enumerated() {
                    let dot = d.dot(point)
                    if dot > bestDot { bestDot = dot; best = i }
                }
                weights[best] += ringWeight
                azimuth += step
            }
            elevation += step
        }
        return weights
    }
}
