// Fractional delay by four-point (third-order) Lagrange interpolation, with the delay
// ramped linearly across the block so that a changing interaural delay glides instead of
// stepping by whole samples.
//
// For a delay D = I + f (0 ≤ f < 1) the output is Σ c_k(f) · x[n − I − k], k = −1 … 2, so D
// must be at least 1. `input[0]` is the first new sample; `input[-history ..< 0]` is past.

public enum FractionalDelay {
    @inline(__always)
    static func coefficients(_ f: Float) -> (Float, Float, Float, Float) {
        let fm1 = f - 1, fm2 = f - 2, fp1 = f + 1
        return (-f * fm1 * fm2 / 6, fp1 * fm1 * fm2 / 2, -fp1 * f * fm2 / 2, fp1 * f * fm1 / 6)
    }

    /// The delay at output sample n: from `startDelay` (exclusive) to `endDelay` (reached at
    /// the last sample).
    @inline(__always)
    static func delay(at n: Int, frames: Int, from startDelay: Float, to endDelay: Float) -> Float {
        startDelay + (endDelay - startDelay) * Float(n + 1) / Float(frames)
    }

    /// The reference: coefficients recomputed for every sample.
    public static func processScalar(input: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>, frames: Int,
                                     startDelaySamples: Float, endDelaySamples: Float) {
        for n in 0..<frames {
            let d = delay(at: n, frames: frames, from: startDelaySamples, to: endDelaySamples)
            let whole = Int(d), f = d - Float(whole)
            let c = coefficients(f)
            let p = input + (n - whole)
            output[n] = c.0 * p[1] + c.1 * p[0] + c.2 * p[-1] + c.3 * p[-2]
        }
    }

    /// The same result; a constant delay (the common case: a still source and head) computes
    /// its coefficients once and runs as a four-tap filter the compiler vectorises.
    public static func process(input: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>, frames: Int,
                               startDelaySamples: Float, endDelaySamples: Float) {
        guard startDelaySamples == endDelaySamples else {
            processScalar(input: input, output: output, frames: frames,
                          startDelaySamples: startDelaySamples, endDelaySamples: endDelaySamples)
            return
        }
        let whole = Int(endDelaySamples), f = endDelaySamples - Float(whole)
        let (c0, c1, c2, c3) = coefficients(f)
        let p = input - whole
        if f == 0 {
            output.update(from: p, count: frames)
            return
        }
        for n in 0..<frames {
            output[n] = c0 * p[n + 1] + c1 * p[n] + c2 * p[n - 1] + c3 * p[n - 2]
        }
    }
}
