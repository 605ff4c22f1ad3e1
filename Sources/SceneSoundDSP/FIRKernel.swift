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

    /// Many output samples per pass, as vectors: each tap is broadcast once and multiplies a
    /// row of input vectors into independent sums (no horizontal adds, and enough chains to
    /// keep the adders busy) — eight vectors where there are sixteen vector registers of
    /// 256 bits (`wideRegisters`, the AVX2 build), four otherwise. Then eight samples at a
    /// time, then one. `taps` must be a multiple of 8 (HRTFSet guarantees it).
    @inlinable @inline(__always)
    public static func convolve(input: UnsafePointer<Float>, reversedTaps: UnsafePointer<Float>, taps: Int,
                                output: UnsafeMutablePointer<Float>, frames: Int, wideRegisters: Bool = false) {
        precondition(taps % 8 == 0)
        let x = UnsafeRawPointer(input), h = UnsafeRawPointer(reversedTaps)
        let out = UnsafeMutableRawPointer(output)
        let size = MemoryLayout<Float>.stride
        @inline(__always) func load(_ offset: Int) -> SIMD8<Float> {
            x.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self)
        }
        var n = 0
        while wideRegisters && n &+ 64 <= frames {
            var a0 = SIMD8<Float>(), a1 = SIMD8<Float>(), a2 = SIMD8<Float>(), a3 = SIMD8<Float>()
            var a4 = SIMD8<Float>(), a5 = SIMD8<Float>(), a6 = SIMD8<Float>(), a7 = SIMD8<Float>()
            var j = 0
            while j < taps {
                let c = SIMD8(repeating: reversedTaps[j])
                let base = (n &+ j) &* size
                a0 += c * load(base); a1 += c * load(base &+ 32)
                a2 += c * load(base &+ 64); a3 += c * load(base &+ 96)
                a4 += c * load(base &+ 128); a5 += c * load(base &+ 160)
                a6 += c * load(base &+ 192); a7 += c * load(base &+ 224)
                j &+= 1
            }
            let o = n &* size
            out.storeBytes(of: a0, toByteOffset: o, as: SIMD8<Float>.self)
            out.storeBytes(of: a1, toByteOffset: o &+ 32, as: SIMD8<Float>.self)
            out.storeBytes(of: a2, toByteOffset: o &+ 64, as: SIMD8<Float>.self)
            out.storeBytes(of: a3, toByteOffset: o &+ 96, as: SIMD8<Float>.self)
            out.storeBytes(of: a4, toByteOffset: o &+ 128, as: SIMD8<Float>.self)
            out.storeBytes(of: a5, toByteOffset: o &+ 160, as: SIMD8<Float>.self)
            out.storeBytes(of: a6, toByteOffset: o &+ 192, as: SIMD8<Float>.self)
            out.storeBytes(of: a7, toByteOffset: o &+ 224, as: SIMD8<Float>.self)
            n &+= 64
        }
        while n &+ 32 <= frames {
            var a0 = SIMD8<Float>(), a1 = SIMD8<Float>(), a2 = SIMD8<Float>(), a3 = SIMD8<Float>()
            var j = 0
            while j < taps {
                let c = SIMD8(repeating: reversedTaps[j])
                let base = (n &+ j) &* size
                a0 += c * load(base); a1 += c * load(base &+ 32)
                a2 += c * load(base &+ 64); a3 += c * load(base &+ 96)
                j &+= 1
            }
            let o = n &* size
            out.storeBytes(of: a0, toByteOffset: o, as: SIMD8<Float>.self)
            out.storeBytes(of: a1, toByteOffset: o &+ 32, as: SIMD8<Float>.self)
            out.storeBytes(of: a2, toByteOffset: o &+ 64, as: SIMD8<Float>.self)
            out.storeBytes(of: a3, toByteOffset: o &+ 96, as: SIMD8<Float>.self)
            n &+= 32
        }
        while n &+ 8 <= frames {
            var even = SIMD8<Float>(), odd = SIMD8<Float>()
            var j = 0
            while j < taps {
                let base = (n &+ j) &* size
                even += SIMD8(repeating: reversedTaps[j]) * load(base)
                odd += SIMD8(repeating: reversedTaps[j &+ 1]) * load(base &+ size)
                j &+= 2
            }
            out.storeBytes(of: even + odd, toByteOffset: n &* size, as: SIMD8<Float>.self)
            n &+= 8
        }
        while n < frames {
            var a = SIMD8<Float>()
            var j = 0
            while j < taps {
                a += h.loadUnaligned(fromByteOffset: j &* size, as: SIMD8<Float>.self) * load((n &+ j) &* size)
                j &+= 8
            }
            output[n] = a.sum()
            n &+= 1
        }
    }
}
