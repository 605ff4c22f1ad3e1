// A first-order low-pass for air absorption and muffling (occluded or minimised windows).
// Its coefficient glides across each block so that a change of cutoff does not click.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

public struct OnePoleLowpass: Sendable {
    public private(set) var coefficient: Float = 1   // 1 = pass-through
    private var state: Float = 0

    public init() {}

    /// The smoothing coefficient for a cutoff; 1 (bypass) at or above 0.45 × the rate.
    public static func coefficient(cutoffHz: Double, sampleRateHz: Double) -> Float {
        guard cutoffHz.isFinite, cutoffHz < 0.45 * sampleRateHz else { return 1 }
        return Float(1 - exp(-2 * .pi * max(cutoffHz, 1) / sampleRateHz))
    }

    public mutating func reset() { state = 0; coefficient = 1 }

    /// What `process` does for a span it passes unchanged (coefficient 1 throughout): only
    /// the state follows the input.
    public mutating func pass(_ samples: UnsafePointer<Float>, frames: Int) {
        if frames > 0 { state = samples[frames - 1] }
    }

    /// Filters in place, moving the coefficient to `targetCoefficient` over the block.
    public mutating func process(_ samples: UnsafeMutablePointer<Float>, frames: Int, targetCoefficient: Float) {
        let start = coefficient
        coefficient = targetCoefficient
        if start == 1 && targetCoefficient == 1 {
            if frames > 0 { state = samples[frames - 1] }
            return
        }
        var y = state
        let step = (targetCoefficient - start) / Float(frames)
        for n in 0..<frames {
            let a = start + step * Float(n + 1)
            y += a * (samples[n] - y)
            samples[n] = y
        }
        state = y
    }
}
