// Second-order sections from R. Bristow-Johnson's "Audio EQ Cookbook": the peaking and shelving
// filters that headphone equalization files (AutoEQ's ParametricEQ.txt) are written for.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One biquad's coefficients, normalised so that a0 = 1:
/// y[n] = b0·x[n] + b1·x[n−1] + b2·x[n−2] − a1·y[n−1] − a2·y[n−2].
public struct BiquadCoefficients: Equatable, Sendable {
    public var b0: Double, b1: Double, b2: Double, a1: Double, a2: Double

    public init(b0: Double, b1: Double, b2: Double, a1: Double, a2: Double) {
        (self.b0, self.b1, self.b2, self.a1, self.a2) = (b0, b1, b2, a1, a2)
    }

    public static let identity = BiquadCoefficients(b0: 1, b1: 0, b2: 0, a1: 0, a2: 0)

    public enum Shape: String, Sendable, CaseIterable {
        /// A bell around the centre frequency (AutoEQ's `PK`).
        case peaking
        /// Everything below the corner raised or lowered (`LSC`).
        case lowShelf
        /// Everything above the corner (`HSC`).
        case highShelf
    }

    /// The cookbook's design; `q` is the cookbook's Q for every shape (shelves included, as
    /// AutoEQ and EqualizerAPO use it). `frequencyHz` must lie strictly between 0 and Nyquist.
    public init(_ shape: Shape, frequencyHz: Double, gainDecibels: Double, q: Double, sampleRateHz: Double) {
        precondition(frequencyHz > 0 && frequencyHz < sampleRateHz / 2 && q > 0)
        let a = pow(10, gainDecibels / 40)
        let w0 = 2 * Double.pi * frequencyHz / sampleRateHz
        let cosW0 = cos(w0)
        let alpha = sin(w0) / (2 * q)
        let (b0, b1, b2, a0, a1, a2): (Double, Double, Double, Double, Double, Double)
        switch shape {
        case .peaking:
            (b0, b1, b2) = (1 + alpha * a, -2 * cosW0, 1 - alpha * a)
            (a0, a1, a2) = (1 + alpha / a, -2 * cosW0, 1 - alpha / a)
        case .lowShelf:
            let twoRootAAlpha = 2 * a.squareRoot() * alpha
            b0 = a * ((a + 1) - (a - 1) * cosW0 + twoRootAAlpha)
            b1 = 2 * a * ((a - 1) - (a + 1) * cosW0)
            b2 = a * ((a + 1) - (a - 1) * cosW0 - twoRootAAlpha)
            a0 = (a + 1) + (a - 1) * cosW0 + twoRootAAlpha
            a1 = -2 * ((a - 1) + (a + 1) * cosW0)
            a2 = (a + 1) + (a - 1) * cosW0 - twoRootAAlpha
        case .highShelf:
            let twoRootAAlpha = 2 * a.squareRoot() * alpha
            b0 = a * ((a + 1) + (a - 1) * cosW0 + twoRootAAlpha)
            b1 = -2 * a * ((a - 1) + (a + 1) * cosW0)
            b2 = a * ((a + 1) + (a - 1) * cosW0 - twoRootAAlpha)
            a0 = (a + 1) - (a - 1) * cosW0 + twoRootAAlpha
            a1 = 2 * ((a - 1) - (a + 1) * cosW0)
            a2 = (a + 1) - (a - 1) * cosW0 - twoRootAAlpha
        }
        self.init(b0: b0 / a0, b1: b1 / a0, b2: b2 / a0, a1: a1 / a0, a2: a2 / a0)
    }

    /// |H(e^jω)| in dB at `frequencyHz` (for tests and displays).
    public func magnitudeDecibels(atHz frequencyHz: Double, sampleRateHz: Double) -> Double {
        let w = 2 * Double.pi * frequencyHz / sampleRateHz
        // Numerator and denominator evaluated at z = e^{jω}.
        let (c1, s1, c2, s2) = (cos(w), -sin(w), cos(2 * w), -sin(2 * w))
        let nr = b0 + b1 * c1 + b2 * c2, ni = b1 * s1 + b2 * s2
        let dr = 1 + a1 * c1 + a2 * c2, di = a1 * s1 + a2 * s2
        return 10 * log10((nr * nr + ni * ni) / (dr * dr + di * di))
    }
}
