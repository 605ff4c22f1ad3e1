// Direct-form FIR convolution. The filter is stored time-reversed, so that every output
// sample is a dot product of two contiguous vectors:
//     output[n] = Σ_j reversedTaps[j] · input[n + j],   j = 0 ..< taps
// where `input` holds taps − 1 samples of history followed by the new frames.

public enum FIRKernel {
    /// The reference: one multiply-add at a time.
    public static func convolveScalar(input: UnsafePointer<Float>, reversedTaps: UnsafePointer<Float>, taps: Int,
                                      output: UnsafeMutablePointer<Float>, frames: Int) {
        for n in 0..<frames {
            var sum: Float = 0
            for j in 0..<taps { sum += reversedTaps[j] * input[n + j] }
            output[n] = sum
        }
    }

    /// Eight taps per step with SIMD, four output samples per pass sharing each filter load.
    /// `taps` must be a multiple of 8 (HRTFSet guarantees it).
    @inlinable @inline(__always)
    public static func convolve(input: UnsafePointer<Float>, reversedTaps: UnsafePointer<Float>, taps: Int,
                                output: UnsafeMutablePointer<Float>, frames: Int) {
        precondition(taps % 8 == 0)
        let x = UnsafeRawPointer(input), h = UnsafeRawPointer(reversedTaps)
        let stride = MemoryLayout<Float>.stride
        var n = 0
        while n + 4 <= frames {
            var a0 = SIMD8<Float>(), a1 = SIMD8<Float>(), a2 = SIMD8<Float>(), a3 = SIMD8<Float>()
            var j = 0
            while j < taps {
                let c = h.loadUnaligned(fromByteOffset: j * stride, as: SIMD8<Float>.self)
                let base = (n + j) * stride
                a0 += c * x.loadUnaligned(fromByteOffset: base, as: SIMD8<Float>.self)
                a1 += c * x.loadUnaligned(fromByteOffset: base + stride, as: SIMD8<Float>.self)
                a2 += c * x.loadUnaligned(fromByteOffset: base + 2 * stride, as: SIMD8<Float>.self)
                a3 += c * x.loadUnaligned(fromByteOffset: base + 3 * stride, as: SIMD8<Float>.self)
                j += 8
            }
            output[n] = a0.sum(); output[n + 1] = a1.sum(); output[n + 2] = a2.sum(); output[n + 3] = a3.sum()
            n += 4
        }
        while n < frames {
            var a = SIMD8<Float>()
            var j = 0
            while j < taps {
                a += h.loadUnaligned(fromByteOffset: j * stride, as: SIMD8<Float>.self)
                    * x.loadUnaligned(fromByteOffset: (n + j) * stride, as: SIMD8<Float>.self)
                j += 8
            }
            output[n] = a.sum()
            n += 1
        }
    }
}
