// The LFE channel of a surround stream: low-passed (fourth-order Butterworth, two biquads by
// the bilinear transform) and added to both ears alike. It has no direction, so it is not a
// voice. The state is kept in Double: at 120 Hz and 48 kHz the poles sit so close to z = 1
// that single precision would add audible noise.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

public struct LowFrequencyEffectsFilter: Sendable {
    /// The LFE channel's band (ITU-R BS.775, Dolby: content above 120 Hz is not expected).
    public static let cutoffHz = 120.0

    private struct Section: Sendable {
        var b0 = 0.0, b1 = 0.0, b2 = 0.0, a1 = 0.0, a2 = 0.0
        var z1 = 0.0, z2 = 0.0

        @inline(__always) mutating func process(_ x: Double) -> Double {
            let y = b0 * x + z1
            z1 = b1 * x - a1 * y + z2
            z2 = b2 * x - a2 * y
            return y
        }
    }
    private var first = Section(), second = Section()
    /// The gain reached at the end of the last span (the next one glides from it).
    public private(set) var appliedGain: Float = 0

    public init(sampleRateHz: Double, cutoffHz: Double = LowFrequencyEffectsFilter.cutoffHz) {
        let k = tan(.pi * cutoffHz / sampleRateHz)
        // The pole pairs of a fourth-order Butterworth: Q = 1 / (2 cos(π/8)), 1 / (2 cos(3π/8)).
        var sections: [Section] = []
        for q in [0.541_196_100_146_197, 1.306_562_964_876_376_7] {
            let norm = 1 / (1 + k / q + k * k)
            let b0 = k * k * norm
            sections.append(Section(b0: b0, b1: 2 * b0, b2: b0, a1: 2 * (k * k - 1) * norm, a2: (1 - k / q + k * k) * norm))
        }
        first = sections[0]
        second = sections[1]
    }

    public mutating func reset() {
        first.z1 = 0; first.z2 = 0; second.z1 = 0; second.z2 = 0
    }

    /// Filters `frames` of `input` and adds them × the gain, gliding from the last span's to
    /// `gain`, to both `left` and `right`. Allocation-free (render thread).
    public mutating func process(_ input: UnsafePointer<Float>, gain: Float, addingTo left: UnsafeMutablePointer<Float>,
                                 _ right: UnsafeMutablePointer<Float>, frames: Int) {
        let start = appliedGain
        appliedGain = gain
        let step = (gain - start) / Float(max(frames, 1))
        for n in 0..<frames {
            let y = Float(second.process(first.process(Double(input[n]))))
            let out = y * (start + step * Float(n + 1))
            left[n] += out
            right[n] += out
        }
    }
}
