// A radix-2 complex FFT in double precision. It serves the off-line work (minimum-phase
// preparation, cue analysis), not the render thread, so clarity wins over speed.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

public struct FFT: Sendable {
    public let size: Int
    private let cosTable: [Double]
    private let sinTable: [Double]
    private let bitReversed: [Int]

    /// `size` must be a power of two.
    public init(size: Int) {
        precondition(size > 0 && size & (size - 1) == 0, "FFT size must be a power of two")
        self.size = size
        cosTable = (0..<max(size / 2, 1)).map { cos(-2 * .pi * Double($0) / Double(size)) }
        sinTable = (0..<max(size / 2, 1)).map { sin(-2 * .pi * Double($0) / Double(size)) }
        var bits = 0
        while 1 << bits < size { bits += 1 }
        bitReversed = (0..<size).map { i in
            var r = 0, v = i
            for _ in 0..<bits { r = (r << 1) | (v & 1); v >>= 1 }
            return r
        }
    }

    /// Smallest power of two ≥ n.
    public static func size(atLeast n: Int) -> Int {
        var s = 1
        while s < n { s <<= 1 }
        return s
    }

    /// In-place forward transform (e^{-iωn}); `inverse` applies e^{+iωn} and divides by size.
    public func transform(real: inout [Double], imag: inout [Double], inverse: Bool = false) {
        precondition(real.count == size && imag.count == size)
        for i in 0..<size {
            let j = bitReversed[i]
            if j > i { real.swapAt(i, j); imag.swapAt(i, j) }
        }
        let sign: Double = inverse ? -1 : 1
        var half = 1
        while half < size {
            let stride = size / (half * 2)
            var start = 0
            while start < size {
                for k in 0..<half {
                    let wr = cosTable[k * stride], wi = sign * sinTable[k * stride]
                    let a = start + k, b = a + half
                    let tr = real[b] * wr - imag[b] * wi
                    let ti = real[b] * wi + imag[b] * wr
                    real[b] = real[a] - tr; imag[b] = imag[a] - ti
                    real[a] += tr; imag[a] += ti
                }
                start += half * 2
            }
            half *= 2
        }
        if inverse {
            let scale = 1 / Double(size)
            for i in 0..<size { real[i] *= scale; imag[i] *= scale }
        }
    }
}
