// The shared half of the binaural voices' convolution: uniformly partitioned overlap-save in
// the frequency domain, one partition (a 128-tap filter fits one when the transform holds a
// span plus the filter). Every voice transforms its two ears' delayed input once per span —
// one complex transform, the left ear as the real part and the right as the imaginary — and
// adds its spectra × its filters into accumulators shared by all voices; the mix then
// transforms back once per span for all of them (both ears again in one transform).
//
// A voice whose filters change in a span is faded from the old filters' output to the new
// one's across the span, as fadeOut·old + fadeIn·new = old + ramp·(new − old): its
// spectrum × old filters goes into the `steady` accumulators with the unchanged voices, and ×
// (new − old) into the `change` accumulators, whose inverse transform is weighted by the
// ramp. Two inverse transforms per span at most, however many voices and crossfades.
//
// Spectra are split arrays of `binStride` floats per row; a voice's filters are four rows
// (left real, left imaginary, right real, right imaginary) of the `size / 2 + 1` bins of its
// ear filters, scaled by 1 / (2 · size) so that neither the unpacking nor the inverse
// transform has to scale. All memory is allocated in init; everything else is real-time safe.

public final class SpectralVoiceMix {
    public let partitionFrames: Int
    public let taps: Int
    /// The transform size: the smallest power of two holding a span and a filter.
    public let size: Int
    /// Floats per spectral row: the size / 2 + 1 bins, padded to whole vectors.
    public let binStride: Int
    let fft: SplitComplexFFT
    let kernels: RenderKernels

    /// steady (left re, left im, right re, right im), then change (the same).
    let accumulators: UnsafeMutablePointer<Float>
    /// A voice's transform: real then imaginary, size + 8 each (index size repeats 0).
    let spectrum: UnsafeMutablePointer<Float>
    /// Two rows of `size` for the transforms' time side, two for their scratch.
    let time: UnsafeMutablePointer<Float>
    let scratch: UnsafeMutablePointer<Float>
    /// Filter spectra per grid node of the HRTF set it was made for (`filterFloats` each),
    /// so that a voice's new filters are a weighted sum of four, as the set's own filters are.
    private var nodeSpectra: UnsafeMutablePointer<Float>?
    private var nodeSpectraSet: ObjectIdentifier?
    private var voicesThisSpan = 0
    private var crossfadesThisSpan = 0

    public static func transformSize(partitionFrames: Int, taps: Int) -> Int {
        max(32, FFT.size(atLeast: partitionFrames + taps - 1))
    }

    public init(taps: Int, partitionFrames: Int, kernels: RenderKernels = .portable) {
        precondition(partitionFrames > 0 && taps > 0)
        self.partitionFrames = partitionFrames
        self.taps = taps
        self.kernels = kernels
        size = Self.transformSize(partitionFrames: partitionFrames, taps: taps)
        binStride = size / 2 + 8
        fft = SplitComplexFFT(size: size)
        func buffer(_ count: Int) -> UnsafeMutablePointer<Float> {
            let p = UnsafeMutablePointer<Float>.allocate(capacity: count)
            p.initialize(repeating: 0, count: count)
            return p
        }
        accumulators = buffer(8 * binStride)
        spectrum = buffer(2 * (size + 8))
        time = buffer(2 * size)
        scratch = buffer(2 * size)
    }

    /// Also prepares every grid node's filter spectra of `hrtf` (a few milliseconds, a few MB).
    public convenience init(hrtf: HRTFSet, partitionFrames: Int, kernels: RenderKernels = .portable) {
        self.init(taps: hrtf.filterTaps, partitionFrames: partitionFrames, kernels: kernels)
        let floats = filterFloats
        let table = UnsafeMutablePointer<Float>.allocate(capacity: hrtf.nodeCount * floats)
        table.initialize(repeating: 0, count: hrtf.nodeCount * floats)
        hrtf.reversedFilters.withUnsafeBufferPointer { filters in
            for node in 0..<hrtf.nodeCount {
                let pair = filters.baseAddress! + node * 2 * taps
                filterSpectra(reversedLeft: pair, reversedRight: pair + taps, into: table + node * floats)
            }
        }
        nodeSpectra = table
        nodeSpectraSet = ObjectIdentifier(hrtf)
    }

    deinit {
        for p in [accumulators, spectrum, time, scratch] { p.deallocate() }
        nodeSpectra?.deallocate()
    }

    /// Floats a voice's filter spectra take (four rows).
    public var filterFloats: Int { 4 * binStride }

    /// Clears the accumulators for the next span.
    public func beginSpan() {
        if voicesThisSpan > 0 { accumulators.update(repeating: 0, count: (crossfadesThisSpan > 0 ? 8 : 4) * binStride) }
        voicesThisSpan = 0
        crossfadesThisSpan = 0
    }

    /// Adds one voice: `left` and `right` hold the last `size` samples of its two ears' delayed
    /// input (the span at the end); `current` its filters, `next` the ones it fades to.
    public func accumulate(left: UnsafePointer<Float>, right: UnsafePointer<Float>,
                    current: UnsafePointer<Float>, next: UnsafePointer<Float>?) {
        kernels.fft(size, fft.twiddles, left, right, spectrum, spectrum + size + 8, scratch, scratch + size)
        spectrum[size] = spectrum[0]
        spectrum[2 * size + 8] = spectrum[size + 8]
        // The change sums are zero at a span's start (beginSpan clears what was used).
        if next != nil { crossfadesThisSpan += 1 }
        kernels.accumulateSpectra(spectrum, size, current, next, accumulators, binStride)
        voicesThisSpan += 1
    }

    /// The spectra of the filter pair interpolated for a direction into `filters` (four
    /// rows); returns the direction's per-ear delays. Real-time safe.
    func prepareFilters(_ hrtf: HRTFSet, azimuthDegrees: Double, elevationDegrees: Double,
                        into filters: UnsafeMutablePointer<Float>) -> (left: Float, right: Float) {
        precondition(nodeSpectraSet == ObjectIdentifier(hrtf), "the mix was prepared for another HRTF set")
        let hood = hrtf.neighbourhood(azimuthDegrees: azimuthDegrees, elevationDegrees: elevationDegrees)
        let floats = filterFloats, table = nodeSpectra!
        Self.blend(table + hood.nodes.0 * floats, hood.weights.0, table + hood.nodes.1 * floats, hood.weights.1,
                   table + hood.nodes.2 * floats, hood.weights.2, table + hood.nodes.3 * floats, hood.weights.3,
                   into: filters, count: floats)
        return hrtf.delays(azimuthDegrees: azimuthDegrees, elevationDegrees: elevationDegrees)
    }

    /// out = Σ wᵢ·pᵢ, eight floats a step (`count` is a multiple of 8).
    static func blend(_ p0: UnsafePointer<Float>, _ w0: Float, _ p1: UnsafePointer<Float>, _ w1: Float,
                      _ p2: UnsafePointer<Float>, _ w2: Float, _ p3: UnsafePointer<Float>, _ w3: Float,
                      into out: UnsafeMutablePointer<Float>, count: Int) {
        typealias V = SIMD8<Float>
        let f = MemoryLayout<Float>.stride
        let r0 = UnsafeRawPointer(p0), r1 = UnsafeRawPointer(p1), r2 = UnsafeRawPointer(p2), r3 = UnsafeRawPointer(p3)
        let o = UnsafeMutableRawPointer(out)
        var i = 0
        while i < count {
            let b = i &* f
            var v = r0.loadUnaligned(fromByteOffset: b, as: V.self) * w0
            v += r1.loadUnaligned(fromByteOffset: b, as: V.self) * w1
            v += r2.loadUnaligned(fromByteOffset: b, as: V.self) * w2
            v += r3.loadUnaligned(fromByteOffset: b, as: V.self) * w3
            o.storeBytes(of: v, toByteOffset: b, as: V.self)
            i &+= 8
        }
    }

    /// The spectra of a pair of `taps`-long filters, stored time-reversed, into `filters`
    /// (four rows of `binStride`). Real-time safe.
    public func filterSpectra(reversedLeft: UnsafePointer<Float>, reversedRight: UnsafePointer<Float>,
                              into filters: UnsafeMutablePointer<Float>) {
        let re = time, im = time + size
        re.update(repeating: 0, count: 2 * size)
        for n in 0..<taps {
            re[n] = reversedLeft[taps - 1 - n]
            im[n] = reversedRight[taps - 1 - n]
        }
        let zr = spectrum, zi = spectrum + size + 8
        kernels.fft(size, fft.twiddles, re, im, zr, zi, scratch, scratch + size)
        zr[size] = zr[0]
        zi[size] = zi[0]
        // Unpack the two real filters' spectra (the left ear's is (Z[k] + conj Z[N−k]) / 2,
        // the right's (Z[k] − conj Z[N−k]) / 2i), with the 1 / (2 · size) folded in.
        let scale = 1 / Float(4 * size)
        let b = binStride
        for k in 0...(size / 2) {
            let r = zr[k], i = zi[k], mr = zr[size - k], mi = zi[size - k]
            filters[k] = (r + mr) * scale
            filters[b + k] = (i - mi) * scale
            filters[2 * b + k] = (i + mi) * scale
            filters[3 * b + k] = (mr - r) * scale
        }
    }

    /// Transforms the span's sum back and adds its `partitionFrames` samples to `left` and
    /// `right`; a no-op when no voice played.
    public func finishSpan(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>) {
        guard voicesThisSpan > 0 else { return }
        inverse(accumulators, left: left, right: right, ramped: false)
        if crossfadesThisSpan > 0 { inverse(accumulators + 4 * binStride, left: left, right: right, ramped: true) }
    }

    private func inverse(_ sums: UnsafePointer<Float>, left: UnsafeMutablePointer<Float>,
                         right: UnsafeMutablePointer<Float>, ramped: Bool) {
        // Both ears' spectra (each that of a real signal) as one: W = L + iR, whose inverse
        // has the left ear in its real part and the right in its imaginary part.
        let b = binStride
        let lr = sums, li = sums + b, rr = sums + 2 * b, ri = sums + 3 * b
        let wr = spectrum, wi = spectrum + size + 8
        let half = size / 2
        for k in 0...half {
            wr[k] = lr[k] - ri[k]
            wi[k] = li[k] + rr[k]
        }
        for k in 1..<half {
            wr[size - k] = lr[k] + ri[k]
            wi[size - k] = rr[k] - li[k]
        }
        let outR = time, outI = time + size
        kernels.inverseFFT(size, fft.twiddles, wr, wi, outR, outI, scratch, scratch + size)
        let start = size - partitionFrames
        if ramped {
            let inverseFrames = 1 / Float(partitionFrames)
            for n in 0..<partitionFrames {
                let w = Float(n + 1) * inverseFrames
                left[n] += outR[start + n] * w
                right[n] += outI[start + n] * w
            }
        } else {
            Mixing.add(outR + start, into: left, frames: partitionFrames)
            Mixing.add(outI + start, into: right, frames: partitionFrames)
        }
    }
}

/// The per-voice spectral work, as RenderKernels.accumulateSpectra.
public enum SpectralKernel {
    /// `spectrum`: a voice's transform, real row then imaginary row (`size + 8` each, index
    /// `size` repeating 0). Unpacks the two ears (L = Z[k] + conj Z[N−k], R = −i(Z[k] − conj
    /// Z[N−k]), both 2× — the filters carry the ½) and adds L·HL, R·HR to the steady sums;
    /// with `next`, L·(next − current) and R·(…) to the change sums. Bins 0 … size/2.
    @inlinable @inline(__always)
    public static func accumulate(spectrum: UnsafePointer<Float>, size: Int, current: UnsafePointer<Float>,
                                  next: UnsafePointer<Float>?, sums: UnsafeMutablePointer<Float>, binStride b: Int) {
        typealias V = SIMD8<Float>
        let f = MemoryLayout<Float>.stride
        let z = UnsafeRawPointer(spectrum), zStride = size &+ 8
        let h = UnsafeRawPointer(current), s = UnsafeMutableRawPointer(sums)
        @inline(__always) func load(_ p: UnsafeRawPointer, _ index: Int) -> V {
            p.loadUnaligned(fromByteOffset: index &* f, as: V.self)
        }
        @inline(__always) func reversed(_ v: V) -> V { V(v[7], v[6], v[5], v[4], v[3], v[2], v[1], v[0]) }
        let half = size / 2
        var k = 0
        while k <= half {
            let zr = load(z, k), zi = load(z, zStride &+ k)
            let mr = reversed(load(z, size &- k &- 7)), mi = reversed(load(z, zStride &+ size &- k &- 7))
            let lr = zr + mr, li = zi - mi
            let rr = zi + mi, ri = mr - zr
            let hlr = load(h, k), hli = load(h, b &+ k), hrr = load(h, 2 &* b &+ k), hri = load(h, 3 &* b &+ k)
            // s += x·h as fused multiply-adds where the build has them.
            @inline(__always) func multiplyAdd(_ row: Int, _ xr: V, _ xi: V, _ hr: V, _ hi: V) {
                let re = (row &* b &+ k) &* f, im = ((row &+ 1) &* b &+ k) &* f
                let sr = s.loadUnaligned(fromByteOffset: re, as: V.self), si = s.loadUnaligned(fromByteOffset: im, as: V.self)
                s.storeBytes(of: sr.addingProduct(xr, hr).addingProduct(-xi, hi), toByteOffset: re, as: V.self)
                s.storeBytes(of: si.addingProduct(xr, hi).addingProduct(xi, hr), toByteOffset: im, as: V.self)
            }
            multiplyAdd(0, lr, li, hlr, hli)
            multiplyAdd(2, rr, ri, hrr, hri)
            if let next {
                let n = UnsafeRawPointer(next)
                multiplyAdd(4, lr, li, load(n, k) - hlr, load(n, b &+ k) - hli)
                multiplyAdd(6, rr, ri, load(n, 2 &* b &+ k) - hrr, load(n, 3 &* b &+ k) - hri)
            }
            k &+= 8
        }
    }
}
