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
    /// row of four input vectors into independent sums (no horizontal adds, and enough chains
    /// to keep the adders busy) — of sixteen samples where there are sixteen 256-bit registers
    /// (`wideRegisters`, the AVX2 build), of eight otherwise. Then eight samples at a time,
    /// then one. `taps` must be a multiple of 8 (HRTFSet guarantees it). `fusedMultiplyAdd`: the
    /// rows' products and sums as one instruction each (a build with FMA).
    @inlinable @inline(__always)
    public static func convolve(input: UnsafePointer<Float>, reversedTaps: UnsafePointer<Float>, taps: Int,
                                output: UnsafeMutablePointer<Float>, frames: Int, wideRegisters: Bool = false,
                                fusedMultiplyAdd: Bool = false) {
        precondition(taps % 8 == 0)
        let x = UnsafeRawPointer(input), h = UnsafeRawPointer(reversedTaps)
        let out = UnsafeMutableRawPointer(output)
        let size = MemoryLayout<Float>.stride
        @inline(__always) func load(_ offset: Int) -> SIMD8<Float> {
            x.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self)
        }
        var n = 0
        if wideRegisters { convolveRows(of: SIMD16<Float>.self, x, reversedTaps, taps, out, fusedMultiplyAdd, &n, frames) }
        convolveRows(of: SIMD8<Float>.self, x, reversedTaps, taps, out, fusedMultiplyAdd, &n, frames)
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

    /// Outputs from `n` in rows of four vectors of `V`, while whole rows fit.
    @inlinable @inline(__always)
    static func convolveRows<V: SIMD>(of _: V.Type, _ x: UnsafeRawPointer, _ reversedTaps: UnsafePointer<Float>, _ taps: Int,
                                      _ out: UnsafeMutableRawPointer, _ fusedMultiplyAdd: Bool, _ n: inout Int,
                                      _ frames: Int) where V.Scalar == Float {
        let size = MemoryLayout<Float>.stride, vectorBytes = V.scalarCount &* size
        @inline(__always) func add(_ sum: inout V, _ c: V, _ offset: Int) {
            let v = x.loadUnaligned(fromByteOffset: offset, as: V.self)
            if fusedMultiplyAdd { sum = sum.addingProduct(c, v) } else { sum += c * v }
        }
        while n &+ 4 &* V.scalarCount <= frames {
            var a0 = V(), a1 = V(), a2 = V(), a3 = V()
            var j = 0
            while j < taps {
                let c = V(repeating: reversedTaps[j])
                let base = (n &+ j) &* size
                add(&a0, c, base); add(&a1, c, base &+ vectorBytes)
                add(&a2, c, base &+ 2 &* vectorBytes); add(&a3, c, base &+ 3 &* vectorBytes)
                j &+= 1
            }
            let o = n &* size
            out.storeBytes(of: a0, toByteOffset: o, as: V.self)
            out.storeBytes(of: a1, toByteOffset: o &+ vectorBytes, as: V.self)
            out.storeBytes(of: a2, toByteOffset: o &+ 2 &* vectorBytes, as: V.self)
            out.storeBytes(of: a3, toByteOffset: o &+ 3 &* vectorBytes, as: V.self)
            n &+= 4 &* V.scalarCount
        }
    }
}
