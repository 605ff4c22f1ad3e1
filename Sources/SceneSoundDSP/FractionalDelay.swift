// Fractional delay by four-point (third-order) Lagrange interpolation, in the time domain. The
// binaural voices used its interpolator as a filter until it was found to droop above 10 kHz
// (up to 1 dB of an ear's broadband level against the bus); they now fold an eight-tap
// band-limited one into their filters (SpectralVoiceMix.delayCoefficients). A changing delay
// (a moving source, a turning head) is read at the block's start and end delays and the two
// readings are crossfaded across the block: for the small steps between blocks (hundredths
// of a sample when a source passes the ear at 90°/s) that is the interpolated glide to within
// rounding, both readings run as fixed four-tap filters, and a jump blends instead of
// bending the pitch.
//
// For a delay D = I + f (0 ≤ f < 1) the output is Σ c_k(f) · x[n − I − k], k = −1 … 2, so D
// must be at least 1. `input[0]` is the first new sample; `input[-history ..< 0]` is past.

public enum FractionalDelay {
    @inline(__always)
    static func coefficients(_ f: Float) -> (Float, Float, Float, Float) {
        let fm1 = f - 1, fm2 = f - 2, fp1 = f + 1
        return (-f * fm1 * fm2 / 6, fp1 * fm1 * fm2 / 2, -fp1 * f * fm2 / 2, fp1 * f * fm1 / 6)
    }

    /// One sample of a constant-delay reading.
    @inline(__always)
    static func read(_ input: UnsafePointer<Float>, at n: Int, delaySamples d: Float) -> Float {
        let whole = Int(d)
        let c = coefficients(d - Float(whole))
        let p = input + (n - whole)
        return c.0 * p[1] + c.1 * p[0] + c.2 * p[-1] + c.3 * p[-2]
    }

    /// The reference, sample by sample: the start-delay reading fading into the end-delay one,
    /// out[n] = A[n] + (B[n] − A[n]) · (n + 1) / frames.
    public static func processScalar(input: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>, frames: Int,
                                     startDelaySamples: Float, endDelaySamples: Float) {
        for n in 0..<frames {
            let a = read(input, at: n, delaySamples: startDelaySamples)
            let b = read(input, at: n, delaySamples: endDelaySamples)
            output[n] = a + (b - a) * (Float(n + 1) / Float(frames))
        }
    }

    /// The same result, eight samples a step; a constant delay (the common case: a still
    /// source and head) reads once, and a whole-sample one is a copy.
    public static func process(input: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>, frames: Int,
                               startDelaySamples: Float, endDelaySamples: Float) {
        let startWhole = Int(startDelaySamples), endWhole = Int(endDelaySamples)
        let a = coefficients(startDelaySamples - Float(startWhole))
        let pa = input - startWhole
        if startDelaySamples == endDelaySamples {
            if startDelaySamples == Float(startWhole) {
                output.update(from: pa, count: frames)
                return
            }
            for n in 0..<frames {
                output[n] = a.0 * pa[n + 1] + a.1 * pa[n] + a.2 * pa[n - 1] + a.3 * pa[n - 2]
            }
            return
        }
        let b = coefficients(endDelaySamples - Float(endWhole))
        let pb = input - endWhole
        let size = MemoryLayout<Float>.stride
        let ra = UnsafeRawPointer(pa), rb = UnsafeRawPointer(pb), out = UnsafeMutableRawPointer(output)
        @inline(__always) func load(_ p: UnsafeRawPointer, _ n: Int) -> SIMD8<Float> {
            p.loadUnaligned(fromByteOffset: n &* size, as: SIMD8<Float>.self)
        }
        let inverse = 1 / Float(frames)
        var ramp = SIMD8<Float>(1, 2, 3, 4, 5, 6, 7, 8) * inverse
        let step = SIMD8<Float>(repeating: 8 * inverse)
        var n = 0
        while n + 8 <= frames {
            let x = a.0 * load(ra, n &+ 1) + a.1 * load(ra, n) + a.2 * load(ra, n &- 1) + a.3 * load(ra, n &- 2)
            let y = b.0 * load(rb, n &+ 1) + b.1 * load(rb, n) + b.2 * load(rb, n &- 1) + b.3 * load(rb, n &- 2)
            out.storeBytes(of: x + (y - x) * ramp, toByteOffset: n &* size, as: SIMD8<Float>.self)
            ramp += step
            n &+= 8
        }
        while n < frames {
            let x = a.0 * pa[n + 1] + a.1 * pa[n] + a.2 * pa[n - 1] + a.3 * pa[n - 2]
            let y = b.0 * pb[n + 1] + b.1 * pb[n] + b.2 * pb[n - 1] + b.3 * pb[n - 2]
            output[n] = x + (y - x) * (Float(n + 1) * inverse)
            n += 1
        }
    }
}
