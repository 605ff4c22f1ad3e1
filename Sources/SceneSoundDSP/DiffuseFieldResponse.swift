// The ears' response to a diffuse field: the power average of an HRTF set's responses over
// the sphere (both ears, each direction weighted by the solid angle it stands for), as a
// minimum-phase filter. The late reverb is heard through it, so that the tail has the same
// ear-canal colouring as the direct sound: the reverb's level against a tone then follows the
// set's directivity (a few dB), not the ear canal's resonances (twenty).

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
        var power = [Double](repeating: 0, count: n)
        var totalWeight = 0.0
        for e in 0..<hrtf.elevationCount {
            let elevation = -90 + Double(e) * hrtf.elevationStepDegrees
            // A ring's nodes share its band of the sphere (∝ cos elevation); at the poles the
            // ring is one point standing for a cap half a step wide.
            let step = hrtf.elevationStepDegrees * .pi / 180
            let weight = abs(elevation) >= 90 ? (1 - cos(step / 2)) / step : cos(elevation * .pi / 180)
            for a in 0..<hrtf.azimuthCount {
                let node = e * hrtf.azimuthCount + a
                for ear in 0..<2 {
                    var re = [Double](repeating: 0, count: n), im = re
                    let base = (node * 2 + ear) * hrtf.filterTaps
                    for t in 0..<hrtf.filterTaps { re[t] = Double(hrtf.reversedFilters[base + hrtf.filterTaps - 1 - t]) }
                    fft.transform(real: &re, imag: &im)
                    for k in 0..<n { power[k] += weight * (re[k] * re[k] + im[k] * im[k]) }
                    totalWeight += weight
                }
            }
        }
        // A zero-phase response with the average magnitude, then its minimum-phase version.
        var re = power.map { ($0 / totalWeight).squareRoot() }, im = [Double](repeating: 0, count: n)
        fft.transform(real: &re, imag: &im, inverse: true)
        var symmetric = [Float](repeating: 0, count: n)
        for t in 0..<n { symmetric[(t + n / 2) % n] = Float(re[t]) }
        return MinimumPhase.filter(from: symmetric, outputLength: taps)
    }
}
