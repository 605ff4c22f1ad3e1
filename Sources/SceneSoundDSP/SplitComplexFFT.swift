// A complex FFT in single precision for the render thread, on split arrays (real parts in
// one, imaginary parts in another), so that eight bins are one vector with no shuffling.
// Stockham autosort: every pass reads one buffer and writes the other, so input and output
// are both in natural order and no bit-reversal pass is needed. Radix-4 passes (three
// complex multiplies per four points instead of four), then one radix-2 pass when log2(size)
// is odd. Each pass's twiddles are precomputed in the order its vector loop reads them.
//
// The inverse is the same transform with the real and imaginary arrays swapped on the way in
// and out (conj(FFT(conj x)) = N·IFFT x): unscaled, the caller folds 1/size into its filters.
//
// `FFT` (double precision, radix-2) stays the reference and serves the off-line work.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

public final class SplitComplexFFT: @unchecked Sendable {  // immutable after init
    public let size: Int
    /// Per radix-4 pass with stride s = 1, 4, 16, …: six rows of size / 4 floats — w^p, w^2p,
    /// w^3p (real, imaginary) for element i = q + s·p, w = e^(−2πi·s/size).
    public let twiddles: UnsafeMutablePointer<Float>
    private let twiddleCount: Int

    /// `size`: a power of two, at least 32 (the passes run eight points a step).
    public init(size: Int) {
        precondition(size >= 32 && size & (size - 1) == 0, "the FFT size must be a power of two, at least 32")
        self.size = size
        var passes = 0, n = size
        while n >= 4 { n /= 4; passes += 1 }
        let quarter = size / 4
        twiddleCount = max(1, passes) * 6 * quarter
        twiddles = .allocate(capacity: twiddleCount)
        var stride = 1
        for pass in 0..<passes {
            let rows = twiddles + pass * 6 * quarter
            for i in 0..<quarter {
                let p = i / stride
                for power in 1...3 {
                    let angle = -2 * Double.pi * Double(power * p * stride) / Double(size)
                    rows[(2 * power - 2) * quarter + i] = Float(cos(angle))
                    rows[(2 * power - 1) * quarter + i] = Float(sin(angle))
                }
            }
            stride *= 4
        }
    }

    deinit { twiddles.deallocate() }

    /// Forward transform (e^(−iωn)) of `input` into `output`; `scratch` (size floats each) is
    /// overwritten, `input` is not. Input and output may not overlap the scratch.
    @inlinable @inline(__always)
    public static func forward(size: Int, twiddles: UnsafePointer<Float>,
                               inputReal: UnsafePointer<Float>, inputImag: UnsafePointer<Float>,
                               outputReal: UnsafeMutablePointer<Float>, outputImag: UnsafeMutablePointer<Float>,
                               scratchReal: UnsafeMutablePointer<Float>, scratchImag: UnsafeMutablePointer<Float>) {
        var radix4 = 0, n = size
        while n >= 4 { n /= 4; radix4 &+= 1 }
        // An odd log2(size) ends with n = 8 after the radix-4 passes: one radix-8 pass does it
        // (where its stride holds a vector), instead of a radix-4 and a radix-2 pass.
        let radix8 = n == 2 && size / 8 >= 8
        if radix8 { radix4 &-= 1 }
        let passes = radix4 &+ (n == 2 ? 1 : 0)
        let quarter = size / 4
        var fromReal = inputReal, fromImag = inputImag
        var stride = 1
        for pass in 0..<passes {
            // The last pass lands in the output; the ones before alternate so that it does.
            let toOutput = (passes &- 1 &- pass) & 1 == 0
            let toReal = toOutput ? outputReal : scratchReal, toImag = toOutput ? outputImag : scratchImag
            if pass < radix4 {
                radix4Pass(size: size, stride: stride, twiddles: twiddles + pass &* 6 &* quarter,
                           fromReal, fromImag, toReal, toImag)
                stride &*= 4
            } else if radix8 {
                radix8Pass(size: size, fromReal, fromImag, toReal, toImag)
            } else {
                radix2Pass(size: size, fromReal, fromImag, toReal, toImag)
            }
            fromReal = UnsafePointer(toReal)
            fromImag = UnsafePointer(toImag)
        }
    }

    /// The unscaled inverse (e^(+iωn)): size × the inverse DFT.
    @inlinable @inline(__always)
    public static func inverse(size: Int, twiddles: UnsafePointer<Float>,
                               inputReal: UnsafePointer<Float>, inputImag: UnsafePointer<Float>,
                               outputReal: UnsafeMutablePointer<Float>, outputImag: UnsafeMutablePointer<Float>,
                               scratchReal: UnsafeMutablePointer<Float>, scratchImag: UnsafeMutablePointer<Float>) {
        forward(size: size, twiddles: twiddles, inputReal: inputImag, inputImag: inputReal,
                outputReal: outputImag, outputImag: outputReal, scratchReal: scratchImag, scratchImag: scratchReal)
    }

    /// One radix-4 decimation-in-frequency pass: for i = q + s·p (p < n/4, q < s),
    /// a, b, c, d = x[i + k·size/4] become y[q + s·(4p + j)], j = 0 … 3.
    @inlinable @inline(__always)
    static func radix4Pass(size: Int, stride s: Int, twiddles: UnsafePointer<Float>,
                           _ xr: UnsafePointer<Float>, _ xi: UnsafePointer<Float>,
                           _ yr: UnsafeMutablePointer<Float>, _ yi: UnsafeMutablePointer<Float>) {
        typealias V = SIMD8<Float>
        let quarter = size / 4
        let ar = UnsafeRawPointer(xr), ai = UnsafeRawPointer(xi), tw = UnsafeRawPointer(twiddles)
        let orr = UnsafeMutableRawPointer(yr), oi = UnsafeMutableRawPointer(yi)
        let f = MemoryLayout<Float>.stride
        @inline(__always) func load(_ p: UnsafeRawPointer, _ index: Int) -> V {
            p.loadUnaligned(fromByteOffset: index &* f, as: V.self)
        }
        var i = 0
        while i < quarter {
            let a = (load(ar, i), load(ai, i))
            let b = (load(ar, i &+ quarter), load(ai, i &+ quarter))
            let c = (load(ar, i &+ 2 &* quarter), load(ai, i &+ 2 &* quarter))
            let d = (load(ar, i &+ 3 &* quarter), load(ai, i &+ 3 &* quarter))
            let apcR = a.0 + c.0, apcI = a.1 + c.1
            let amcR = a.0 - c.0, amcI = a.1 - c.1
            let bpdR = b.0 + d.0, bpdI = b.1 + d.1
            let bmdR = b.0 - d.0, bmdI = b.1 - d.1
            let y0R = apcR + bpdR, y0I = apcI + bpdI
            // (a − c) − i(b − d), (a + c) − (b + d), (a − c) + i(b − d), each by its twiddle.
            let u1R = amcR + bmdI, u1I = amcI - bmdR
            let u2R = apcR - bpdR, u2I = apcI - bpdI
            let u3R = amcR - bmdI, u3I = amcI + bmdR
            let w1R = load(tw, i), w1I = load(tw, i &+ quarter)
            let w2R = load(tw, i &+ 2 &* quarter), w2I = load(tw, i &+ 3 &* quarter)
            let w3R = load(tw, i &+ 4 &* quarter), w3I = load(tw, i &+ 5 &* quarter)
            // Fused multiply-adds where the build has them (Swift does not contract a·b + c).
            let y1R = (u1R * w1R).addingProduct(-u1I, w1I), y1I = (u1R * w1I).addingProduct(u1I, w1R)
            let y2R = (u2R * w2R).addingProduct(-u2I, w2I), y2I = (u2R * w2I).addingProduct(u2I, w2R)
            let y3R = (u3R * w3R).addingProduct(-u3I, w3I), y3I = (u3R * w3I).addingProduct(u3I, w3R)
            if s >= 8 {
                // Eight consecutive q of one p: four contiguous runs, s apart.
                let base = i &+ 3 &* s &* (i / s)
                @inline(__always) func store(_ j: Int, _ r: V, _ m: V) {
                    orr.storeBytes(of: r, toByteOffset: (base &+ j &* s) &* f, as: V.self)
                    oi.storeBytes(of: m, toByteOffset: (base &+ j &* s) &* f, as: V.self)
                }
                store(0, y0R, y0I); store(1, y1R, y1I); store(2, y2R, y2I); store(3, y3R, y3I)
            } else if s == 4 {
                // Two p's of four q each: runs of four, 16 apart between the p's.
                let base = i &+ 12 &* (i / 4)
                @inline(__always) func store(_ j: Int, _ r: V, _ m: V) {
                    let low = (base &+ 4 &* j) &* f, high = (base &+ 16 &+ 4 &* j) &* f
                    orr.storeBytes(of: r.lowHalf, toByteOffset: low, as: SIMD4<Float>.self)
                    orr.storeBytes(of: r.highHalf, toByteOffset: high, as: SIMD4<Float>.self)
                    oi.storeBytes(of: m.lowHalf, toByteOffset: low, as: SIMD4<Float>.self)
                    oi.storeBytes(of: m.highHalf, toByteOffset: high, as: SIMD4<Float>.self)
                }
                store(0, y0R, y0I); store(1, y1R, y1I); store(2, y2R, y2I); store(3, y3R, y3I)
            } else {
                // s = 1: y[4p + j], the four results interleaved (a 4 × 8 transpose).
                let base = 4 &* i &* f
                store4Interleaved(orr, base, y0R, y1R, y2R, y3R)
                store4Interleaved(oi, base, y0I, y1I, y2I, y3I)
            }
            i &+= 8
        }
    }

    /// The 4 × 8 transpose as shuffles of two vectors at a time (unpack, then a shuffle within
    /// 128-bit lanes, then the lanes exchanged), which the compiler turns into one instruction
    /// each; a row gathered lane by lane from four vectors became blends and permutes.
    @inlinable @inline(__always)
    static func store4Interleaved(_ out: UnsafeMutableRawPointer, _ offset: Int,
                                  _ v0: SIMD8<Float>, _ v1: SIMD8<Float>, _ v2: SIMD8<Float>, _ v3: SIMD8<Float>) {
        typealias V = SIMD8<Float>
        let f = MemoryLayout<Float>.stride
        @inline(__always) func low(_ a: V, _ b: V) -> V { V(a[0], b[0], a[1], b[1], a[4], b[4], a[5], b[5]) }
        @inline(__always) func high(_ a: V, _ b: V) -> V { V(a[2], b[2], a[3], b[3], a[6], b[6], a[7], b[7]) }
        @inline(__always) func pairsLow(_ a: V, _ b: V) -> V { V(a[0], a[1], b[0], b[1], a[4], a[5], b[4], b[5]) }
        @inline(__always) func pairsHigh(_ a: V, _ b: V) -> V { V(a[2], a[3], b[2], b[3], a[6], a[7], b[6], b[7]) }
        let t0 = low(v0, v1), t1 = high(v0, v1), t2 = low(v2, v3), t3 = high(v2, v3)
        // u0: lane 0 and 4 of every input, u1: 1 and 5, u2: 2 and 6, u3: 3 and 7.
        let u0 = pairsLow(t0, t2), u1 = pairsHigh(t0, t2), u2 = pairsLow(t1, t3), u3 = pairsHigh(t1, t3)
        @inline(__always) func store(_ l: Int, _ row: V) {
            out.storeBytes(of: row, toByteOffset: offset &+ 8 &* l &* f, as: V.self)
        }
        store(0, V(lowHalf: u0.lowHalf, highHalf: u1.lowHalf))
        store(1, V(lowHalf: u2.lowHalf, highHalf: u3.lowHalf))
        store(2, V(lowHalf: u0.highHalf, highHalf: u1.highHalf))
        store(3, V(lowHalf: u2.highHalf, highHalf: u3.highHalf))
    }

    /// The last pass when log2(size) is odd: n = 8, stride size/8, no outer twiddles — an
    /// 8-point DFT of x[q + s·m] into y[q + s·j], as a radix-2 step (with the eighth roots of
    /// unity) and two 4-point DFTs.
    @inlinable @inline(__always)
    static func radix8Pass(size: Int, _ xr: UnsafePointer<Float>, _ xi: UnsafePointer<Float>,
                           _ yr: UnsafeMutablePointer<Float>, _ yi: UnsafeMutablePointer<Float>) {
        typealias V = SIMD8<Float>
        let s = size / 8
        let ar = UnsafeRawPointer(xr), ai = UnsafeRawPointer(xi)
        let orr = UnsafeMutableRawPointer(yr), oi = UnsafeMutableRawPointer(yi)
        let f = MemoryLayout<Float>.stride
        let h = V(repeating: Float(0.5).squareRoot())
        @inline(__always) func load(_ m: Int, _ q: Int) -> (V, V) {
            (ar.loadUnaligned(fromByteOffset: (q &+ s &* m) &* f, as: V.self),
             ai.loadUnaligned(fromByteOffset: (q &+ s &* m) &* f, as: V.self))
        }
        @inline(__always) func store(_ j: Int, _ q: Int, _ v: (V, V)) {
            orr.storeBytes(of: v.0, toByteOffset: (q &+ s &* j) &* f, as: V.self)
            oi.storeBytes(of: v.1, toByteOffset: (q &+ s &* j) &* f, as: V.self)
        }
        /// The forward 4-point DFT, outputs to y[base + 2k].
        @inline(__always) func dft4(_ u0: (V, V), _ u1: (V, V), _ u2: (V, V), _ u3: (V, V), _ base: Int, _ q: Int) {
            let p02 = (u0.0 + u2.0, u0.1 + u2.1), m02 = (u0.0 - u2.0, u0.1 - u2.1)
            let p13 = (u1.0 + u3.0, u1.1 + u3.1), m13 = (u1.0 - u3.0, u1.1 - u3.1)
            store(base, q, (p02.0 + p13.0, p02.1 + p13.1))
            store(base &+ 2, q, (m02.0 + m13.1, m02.1 - m13.0))   // (u0 − u2) − i(u1 − u3)
            store(base &+ 4, q, (p02.0 - p13.0, p02.1 - p13.1))
            store(base &+ 6, q, (m02.0 - m13.1, m02.1 + m13.0))   // (u0 − u2) + i(u1 − u3)
        }
        var q = 0
        while q < s {
            let a0 = load(0, q), a1 = load(1, q), a2 = load(2, q), a3 = load(3, q)
            let a4 = load(4, q), a5 = load(5, q), a6 = load(6, q), a7 = load(7, q)
            let b0 = (a0.0 + a4.0, a0.1 + a4.1), b1 = (a1.0 + a5.0, a1.1 + a5.1)
            let b2 = (a2.0 + a6.0, a2.1 + a6.1), b3 = (a3.0 + a7.0, a3.1 + a7.1)
            let d0 = (a0.0 - a4.0, a0.1 - a4.1), d1 = (a1.0 - a5.0, a1.1 - a5.1)
            let d2 = (a2.0 - a6.0, a2.1 - a6.1), d3 = (a3.0 - a7.0, a3.1 - a7.1)
            // (a_m − a_{m+4}) · e^(−2πi·m/8): 1, (1 − i)/√2, −i, −(1 + i)/√2.
            let c1 = ((d1.0 + d1.1) * h, (d1.1 - d1.0) * h)
            let c2 = (d2.1, -d2.0)
            let c3 = ((d3.1 - d3.0) * h, -(d3.0 + d3.1) * h)
            dft4(b0, b1, b2, b3, 0, q)
            dft4(d0, c1, c2, c3, 1, q)
            q &+= 8
        }
    }

    /// The last pass when log2(size) is odd and too small for radix 8: n = 2, stride size/2,
    /// no twiddles.
    @inlinable @inline(__always)
    static func radix2Pass(size: Int, _ xr: UnsafePointer<Float>, _ xi: UnsafePointer<Float>,
                           _ yr: UnsafeMutablePointer<Float>, _ yi: UnsafeMutablePointer<Float>) {
        typealias V = SIMD8<Float>
        let half = size / 2
        let ar = UnsafeRawPointer(xr), ai = UnsafeRawPointer(xi)
        let orr = UnsafeMutableRawPointer(yr), oi = UnsafeMutableRawPointer(yi)
        let f = MemoryLayout<Float>.stride
        var i = 0
        while i < half {
            let aR = ar.loadUnaligned(fromByteOffset: i &* f, as: V.self)
            let aI = ai.loadUnaligned(fromByteOffset: i &* f, as: V.self)
            let bR = ar.loadUnaligned(fromByteOffset: (i &+ half) &* f, as: V.self)
            let bI = ai.loadUnaligned(fromByteOffset: (i &+ half) &* f, as: V.self)
            orr.storeBytes(of: aR + bR, toByteOffset: i &* f, as: V.self)
            oi.storeBytes(of: aI + bI, toByteOffset: i &* f, as: V.self)
            orr.storeBytes(of: aR - bR, toByteOffset: (i &+ half) &* f, as: V.self)
            oi.storeBytes(of: aI - bI, toByteOffset: (i &+ half) &* f, as: V.self)
            i &+= 8
        }
    }
}
