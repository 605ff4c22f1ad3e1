// The shared half of the binaural voices' convolution: uniformly partitioned overlap-save in
// the frequency domain, one partition. A voice's per-ear filter is its minimum-phase HRTF
// filter with the ear's onset delay folded in (an eight-tap band-limited fractional delay,
// delayCoefficients, as a filter), so each voice has one mono input: the mix transforms
// two voices' inputs at once (one as the real part, the other as the imaginary), adds each
// one's spectrum × its two ear filters into sums shared by all voices, and transforms back
// once per span for all of them (both ears again in one transform). The transform holds a
// span plus the longest filter (taps + the largest delay + the interpolator's 4 taps ahead + 1),
// so nothing wraps around.
//
// A voice whose filters change in a span is faded from the old filters' output to the new
// one's across the span, as fadeOut·old + fadeIn·new = old + ramp·(new − old): its
// spectrum × old filters goes into the `steady` sums with the unchanged voices, and ×
// (new − old) into the `change` sums, whose inverse transform is weighted by the ramp. Two
// inverse transforms per span at most, however many voices and crossfades.
//
// Spectra are split arrays of `binStride` floats per row; a voice's filters are four rows
// (left real, left imaginary, right real, right imaginary) of the `size / 2 + 1` bins of its
// ear filters, scaled by 1 / (2 · size) so that neither the unpacking nor the inverse
// transform has to scale. All memory is allocated in init; everything else is real-time safe.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

public final class SpectralVoiceMix {
    public let partitionFrames: Int
    public let taps: Int
    /// The longest ear filter: taps, the largest delay and the interpolator's reach.
    public let filterLength: Int
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
    /// A voice waiting for a partner to share a transform with: its input window and filters.
    private let silence: UnsafeMutablePointer<Float>
    @exclusivity(unchecked) private var pending: (window: UnsafePointer<Float>, current: UnsafePointer<Float>, next: UnsafePointer<Float>?)?
    /// Delays as spectra: row m holds e^(−2πi·k·m/size), k = 0 … size/2 (real, then imaginary
    /// rows of `binStride`), m = 0 … filterLength − taps.
    let delayRows: UnsafeMutablePointer<Float>
    let delayRowCount: Int
    /// The interpolator's spectra relative to its whole delay, Σⱼ cⱼ·e^(−2πi·k·(j − 3)/size),
    /// one row pair per step of its table (delayCoefficients).
    let fractionRows: UnsafeMutablePointer<Float>
    /// Two rows of `size` for the transforms' time side, two for their scratch.
    let time: UnsafeMutablePointer<Float>
    let scratch: UnsafeMutablePointer<Float>
    /// Filter spectra per grid node of the HRTF set it was made for (`filterFloats` each),
    /// so that a voice's new filters are a weighted sum of four, as the set's own filters are.
    @exclusivity(unchecked) private var nodeSpectra: UnsafeMutablePointer<Float>?
    @exclusivity(unchecked) private var nodeSpectraSet: ObjectIdentifier?
    /// Near-field corrections for the set (made with the node spectra). A constant: read on
    /// every placement, a variable's class reference would be retained and released each time.
    public let nearField: NearField?
    /// Per grid node and ear, the inner products of its filter spectrum with its own and its
    /// neighbours' (NodeProducts): the energy of any bilinear blend of four nodes without
    /// blending it (nodeBlendEnergy). A node's are made on its first use (`productsMade`):
    /// only near sources read them, and made for every node they were a tenth of each start.
    @exclusivity(unchecked) private var nodeProducts: UnsafeMutablePointer<Float>?
    @exclusivity(unchecked) private var productsMade: UnsafeMutablePointer<Bool>?
    /// The set's grid (azimuths per row, rows) the products' neighbours are found on.
    @exclusivity(unchecked) private var productGrid = (azimuths: 0, elevations: 0)
    @exclusivity(unchecked) private var voicesThisSpan = 0
    @exclusivity(unchecked) private var crossfadesThisSpan = 0

    public static func filterLength(taps: Int, maximumDelaySamples: Float) -> Int {
        taps + Int(max(Float(delayTapsBehind), maximumDelaySamples).rounded(.up)) + delayTapsAhead + 1
    }

    public static func transformSize(partitionFrames: Int, taps: Int, maximumDelaySamples: Float) -> Int {
        max(32, FFT.size(atLeast: partitionFrames + filterLength(taps: taps, maximumDelaySamples: maximumDelaySamples) - 1))
    }

    public init(taps: Int, maximumDelaySamples: Float, partitionFrames: Int, kernels: RenderKernels = .portable,
                nearField: NearField? = nil) {
        precondition(partitionFrames > 0 && taps > 0)
        self.nearField = nearField
        self.partitionFrames = partitionFrames
        self.taps = taps
        self.kernels = kernels
        filterLength = Self.filterLength(taps: taps, maximumDelaySamples: maximumDelaySamples)
        size = Self.transformSize(partitionFrames: partitionFrames, taps: taps, maximumDelaySamples: maximumDelaySamples)
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
        silence = buffer(size)
        delayRowCount = filterLength - taps + 1
        delayRows = buffer(2 * delayRowCount * binStride)
        // Every row's angles are among the transform's `size` roots of unity: each worked out once.
        let size = size
        let roots = (0..<size).map { index -> (cos: Float, sin: Float) in
            let angle = -2 * Double.pi * Double(index) / Double(size)
            return (Float(cos(angle)), Float(sin(angle)))
        }
        for m in 0..<delayRowCount {
            for k in 0...(size / 2) {
                let root = roots[(k * m) % size]
                delayRows[2 * m * binStride + k] = root.cos
                delayRows[(2 * m + 1) * binStride + k] = root.sin
            }
        }
        let steps = Self.delayCoefficientTable.count
        fractionRows = buffer(2 * steps * binStride)
        for q in 0..<steps {
            let c = Self.delayCoefficientTable[q]
            let re = fractionRows + 2 * q * binStride, im = re + binStride
            // Tap by tap over all bins (vectorised; each bin's sum in the same order as tap by
            // tap within a bin). Row m of the delay table is a delay of m; an advance of m is its
            // conjugate.
            for j in 0..<8 {
                let m = j - Self.delayTapsBehind
                let cosines = delayRows + 2 * abs(m) * binStride, sines = cosines + binStride
                let weight = c[j], sineWeight = c[j] * (m < 0 ? -1 : 1)
                for k in 0...(size / 2) {
                    re[k] += weight * cosines[k]
                    im[k] += sineWeight * sines[k]
                }
            }
        }
    }

    /// Also prepares every grid node's filter spectra of `hrtf` (a few milliseconds, a few MB).
    public convenience init(hrtf: HRTFSet, partitionFrames: Int, kernels: RenderKernels = .portable) {
        self.init(taps: hrtf.filterTaps, maximumDelaySamples: hrtf.maximumDelaySamples, partitionFrames: partitionFrames,
                  kernels: kernels,
                  nearField: hrtf.nearField)
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
        nodeProducts = .allocate(capacity: hrtf.nodeCount * 2 * Self.productsPerEar)
        nodeProducts!.initialize(repeating: 0, count: hrtf.nodeCount * 2 * Self.productsPerEar)
        productsMade = .allocate(capacity: hrtf.nodeCount)
        productsMade!.initialize(repeating: false, count: hrtf.nodeCount)
        productGrid = (hrtf.azimuthCount, hrtf.elevationCount)
    }

    deinit {
        for p in [accumulators, spectrum, time, scratch, silence, delayRows, fractionRows] { p.deallocate() }
        nodeSpectra?.deallocate()
        nodeProducts?.deallocate()
        productsMade?.deallocate()
    }

    /// The inner products stored per node and ear, in this order: the node with itself, with
    /// the next node in azimuth ("right"), the next in elevation ("up"), the next in both
    /// ("up-right"), and the right node with the up node ("cross"). At the top row (elevation
    /// +90°) the neighbourhood repeats its row, so "up" is the node itself.
    static let productsPerEar = 5

    /// Σ over bins of Re(a·conj b), both ears' spectra taken from the node table; DC and the
    /// Nyquist bin count half, as in Parseval's sum for a real signal. The five products of a
    /// node and ear in one pass over its bins, eight at a time, each lane summing in single
    /// precision and the lanes in double (was a double-precision sum per product and bin).
    /// Made on the node's first use, on the render thread: two passes over its spectra, a few
    /// microseconds, no allocation.
    private func makeProducts(node: Int) {
        typealias V = SIMD8<Float>
        let table = UnsafePointer(nodeSpectra!), floats = filterFloats, bins = size / 2 + 1
        let (azimuths, elevations) = productGrid
        let e = node / azimuths, a = node % azimuths
        let up = min(e + 1, elevations - 1), right = (a + 1) % azimuths
        let nodeRight = e * azimuths + right, nodeUp = up * azimuths + a, nodeUpRight = up * azimuths + right
        let f = MemoryLayout<Float>.stride
        // Whole vectors up to the Nyquist bin, its lane and DC's halved; the padding past it is
        // zero in every spectrum.
        let vectors = (bins + 7) / 8
        @inline(__always) func weight(_ v: Int) -> V {
            var w = V(repeating: 1)
            for lane in 0..<8 {
                let k = v * 8 + lane
                if k == 0 || k == bins - 1 { w[lane] = 0.5 } else if k >= bins { w[lane] = 0 }
            }
            return w
        }
        for ear in 0..<2 {
            let offset = ear * 2 * binStride
            let p0 = UnsafeRawPointer(table + node * floats + offset)
            let pr = UnsafeRawPointer(table + nodeRight * floats + offset)
            let pu = UnsafeRawPointer(table + nodeUp * floats + offset)
            let pur = UnsafeRawPointer(table + nodeUpRight * floats + offset)
            var s0 = V(), s1 = V(), s2 = V(), s3 = V(), s4 = V()
            for v in 0..<vectors {
                let re = v * 8 * f, im = (binStride + v * 8) * f
                @inline(__always) func load(_ p: UnsafeRawPointer, _ at: Int) -> V {
                    p.loadUnaligned(fromByteOffset: at, as: V.self)
                }
                let wv = v == 0 || v >= (bins - 1) / 8 ? weight(v) : V(repeating: 1)
                let ar = load(p0, re) * wv, ai = load(p0, im) * wv
                let rr = load(pr, re), ri = load(pr, im)
                let ur = load(pu, re), ui = load(pu, im)
                let xr = load(pur, re), xi = load(pur, im)
                // (Plain products and sums: this module is built for any x86-64, where a fused
                // multiply-add is a library call per lane.)
                s0 += ar * load(p0, re) + ai * load(p0, im)
                s1 += ar * rr + ai * ri
                s2 += ar * ur + ai * ui
                s3 += ar * xr + ai * xi
                s4 += (rr * wv) * ur + (ri * wv) * ui
            }
            @inline(__always) func sum(_ x: V) -> Float {
                var total = 0.0
                for lane in 0..<8 { total += Double(x[lane]) }
                return Float(total)
            }
            let p = nodeProducts! + node * 2 * Self.productsPerEar + ear * Self.productsPerEar
            p[0] = sum(s0)
            p[1] = sum(s1)
            p[2] = sum(s2)
            p[3] = sum(s3)
            p[4] = sum(s4)
        }
        productsMade![node] = true
    }

    /// The energy of one ear's filter blended from a neighbourhood (before any delay is
    /// folded in), from the stored inner products: Σᵢⱼ wᵢ·wⱼ·⟨Hᵢ, Hⱼ⟩. Real-time safe.
    func nodeBlendEnergy(_ hood: HRTFSet.Neighbourhood, ear: Int) -> Float {
        let products = nodeProducts!, per = 2 * Self.productsPerEar
        let (n0, n1, n2, _) = hood.nodes
        let made = productsMade!
        if !made[n0] { makeProducts(node: n0) }
        if !made[n1] { makeProducts(node: n1) }
        if !made[n2] { makeProducts(node: n2) }
        if !made[hood.nodes.3] { makeProducts(node: hood.nodes.3) }
        let (w0, w1, w2, w3) = hood.weights
        let p0 = products + n0 * per + ear * Self.productsPerEar
        let p1 = products + n1 * per + ear * Self.productsPerEar
        let p2 = products + n2 * per + ear * Self.productsPerEar
        let p3 = products + hood.nodes.3 * per + ear * Self.productsPerEar
        // n1 is n0's right, n2 its up, n3 its up-right; n3 is also n1's up and n2's right.
        let squares = w0 * w0 * p0[0] + w1 * w1 * p1[0] + w2 * w2 * p2[0] + w3 * w3 * p3[0]
        let crosses = w0 * w1 * p0[1] + w0 * w2 * p0[2] + w0 * w3 * p0[3] + w1 * w2 * p0[4]
            + w1 * w3 * p1[2] + w2 * w3 * p2[1]
        return max(0, squares + 2 * crosses)
    }

    /// Floats a voice's filter spectra take (four rows).
    public var filterFloats: Int { 4 * binStride }

    /// Clears the accumulators for the next span.
    public func beginSpan() {
        precondition(pending == nil, "finishSpan not called")
        if voicesThisSpan > 0 { accumulators.update(repeating: 0, count: (crossfadesThisSpan > 0 ? 8 : 4) * binStride) }
        voicesThisSpan = 0
        crossfadesThisSpan = 0
    }

    /// Adds one voice: `window` holds the last `size` samples of its input (the span at the
    /// end); `current` its filters, `next` the ones it fades to this span. The window and the
    /// filters must stay as they are until finishSpan (the voice may wait for a partner).
    public func accumulate(window: UnsafePointer<Float>, current: UnsafePointer<Float>, next: UnsafePointer<Float>?) {
        // The change sums are zero at a span's start (beginSpan clears what was used).
        if next != nil { crossfadesThisSpan += 1 }
        voicesThisSpan += 1
        guard let waiting = pending else {
            pending = (window, current, next)
            return
        }
        pending = nil
        transformPair(waiting.window, waiting.current, waiting.next, window, current, next)
    }

    /// One transform for two voices (the second may be absent: silence, no filters).
    private func transformPair(_ a: UnsafePointer<Float>, _ aCurrent: UnsafePointer<Float>, _ aNext: UnsafePointer<Float>?,
                               _ b: UnsafePointer<Float>, _ bCurrent: UnsafePointer<Float>?, _ bNext: UnsafePointer<Float>?) {
        kernels.fft(size, fft.twiddles, a, b, spectrum, spectrum + size + 8, scratch, scratch + size)
        spectrum[size] = spectrum[0]
        spectrum[2 * size + 8] = spectrum[size + 8]
        kernels.accumulateSpectra(spectrum, size, aCurrent, aNext, bCurrent, bNext, accumulators, binStride)
    }

    /// The filters for a direction into `filters` (four rows): the minimum-phase pair
    /// interpolated from the grid's spectra, each ear's interpolated onset delay folded in.
    /// Nearer than the set's measurement distance each ear takes its response from its own
    /// direction, with its delay's growth and its band gains (NearField). Real-time safe.
    func prepareFilters(_ hrtf: HRTFSet, azimuthDegrees: Double, elevationDegrees: Double,
                        distanceMetres: Double = .infinity, into filters: UnsafeMutablePointer<Float>) {
        precondition(nodeSpectraSet == ObjectIdentifier(hrtf), "the mix was prepared for another HRTF set")
        let floats = filterFloats, table = nodeSpectra!
        guard let nearField, distanceMetres < nearField.measurementDistanceMetres else {
            let hood = hrtf.neighbourhood(azimuthDegrees: azimuthDegrees, elevationDegrees: elevationDegrees)
            let delays = hrtf.delays(hood)
            kernels.blendSpectra(table + hood.nodes.0 * floats, hood.weights.0, table + hood.nodes.1 * floats, hood.weights.1,
                                 table + hood.nodes.2 * floats, hood.weights.2, table + hood.nodes.3 * floats, hood.weights.3,
                                 filters, floats)
            foldDelay(delays.left, into: filters)
            foldDelay(delays.right, into: filters + 2 * binStride)
            return
        }
        let position = SphericalPosition(azimuthDegrees: azimuthDegrees, elevationDegrees: elevationDegrees,
                                         distanceMetres: max(distanceMetres, NearField.minimumDistanceMetres)).cartesian
        let ears = nearField.ears(of: position)
        let centre = hrtf.neighbourhood(azimuthDegrees: azimuthDegrees, elevationDegrees: elevationDegrees)
        let earFloats = 2 * binStride
        for ear in 0..<2 {
            let direction = ear == 0 ? ears.left : ears.right
            let hood = hrtf.neighbourhood(azimuthDegrees: direction.azimuthDegrees, elevationDegrees: direction.elevationDegrees)
            let out = filters + ear * earFloats, rows = table + ear * earFloats
            // The ear's level is the bus's: the energy of the set's response for the
            // head-centred direction (as at the measurement distance) times the sphere's gain
            // for the head-centred incidence over the same at the measurement distance (Kan et
            // al.'s DVF). The DVF already holds how the ear's view of a near source changes;
            // the response parallax takes (the set's direction seen from the ear: 6.4° to the
            // other side at 0.5 m ahead, 12° at 0.3 m, where KEMAR's far ear is shadowed, 1.7
            // and 3 dB quieter) brings its spectrum, not its level.
            // The gain goes into the blend's weights (a pass over the ear's spectrum fewer).
            let parallaxEnergy = nodeBlendEnergy(hood, ear: ear)
            let level = parallaxEnergy > 0 ? (nodeBlendEnergy(centre, ear: ear) / parallaxEnergy).squareRoot() : 1
            let gain = level * nearField.broadbandGain(incidenceDegrees: ear == 0 ? ears.incidenceDegrees.left
                                                                                   : ears.incidenceDegrees.right,
                                                       distanceMetres: distanceMetres)
            let w = hood.weights
            kernels.blendSpectra(rows + hood.nodes.0 * floats, w.0 * gain, rows + hood.nodes.1 * floats, w.1 * gain,
                                 rows + hood.nodes.2 * floats, w.2 * gain, rows + hood.nodes.3 * floats, w.3 * gain,
                                 out, earFloats)
            let delays = hrtf.delays(hood)
            foldDelay((ear == 0 ? delays.left : delays.right)
                          + (ear == 0 ? ears.delayCorrectionSamples.left : ears.delayCorrectionSamples.right), into: out)
        }
    }

    /// Multiplies one ear's spectrum (two rows) by a delay of `delaySamples` (at least
    /// `delayTapsBehind`): the interpolator's eight taps at whole delays I − 3 … I + 4, as the
    /// spectrum of its fraction (two neighbouring rows of `fractionRows`, blended as the table's
    /// coefficients are) times the whole delay's row — one pass of the fold kernel.
    public func foldDelay(_ delaySamples: Float, into ear: UnsafeMutablePointer<Float>) {
        let d = min(max(Float(Self.delayTapsBehind), delaySamples), Float(delayRowCount - 1 - Self.delayTapsAhead))
        let whole = min(Int(d), delayRowCount - 1 - Self.delayTapsAhead)
        let x = (d - Float(whole)) * Float(Self.delayCoefficientTable.count - 1)
        let step = min(Int(x), Self.delayCoefficientTable.count - 2)
        let t = x - Float(step)
        let b = binStride
        kernels.foldDelay(ear, UnsafePointer(delayRows + 2 * whole * b), UnsafePointer(fractionRows + 2 * step * b), b, t)
    }

    /// The interpolator's reach: taps from `delayTapsBehind` samples before its whole delay to
    /// `delayTapsAhead` after (HRTFSet.delayLookAheadSamples keeps every delay past the first).
    public static let delayTapsBehind = 3, delayTapsAhead = 4

    /// The fractional delay a voice's filters take: a Kaiser-windowed sinc (β = 4) over eight
    /// taps, its sum 1, tabulated per 1/64 of a sample and interpolated. Within ±0.1 dB to
    /// 16 kHz at 48 kHz (half way between samples −0.8 dB at 18 kHz, −3 dB at 20 kHz), its delay
    /// within 0.3 µs at 500 Hz. The four-point Lagrange interpolator it replaces drooped above
    /// 10 kHz (−1.1 dB at 12 kHz and −3.3 dB at 16 kHz half way), which cost a voice's ear up to
    /// 1 dB of broadband level against the bus's whole-sample delays, by direction.
    @inline(__always)
    public static func delayCoefficients(fraction: Float) -> SIMD8<Float> {
        let x = min(max(fraction, 0), 1) * Float(delayCoefficientTable.count - 1)
        let i = min(Int(x), delayCoefficientTable.count - 2)
        let t = x - Float(i)
        return delayCoefficientTable.withUnsafeBufferPointer { table in table[i] + (table[i + 1] - table[i]) * t }
    }

    static let delayCoefficientTable: [SIMD8<Float>] = (0...64).map { step in
        let f = Double(step) / 64, beta = 4.0, half = 4.0
        func besselI0(_ x: Double) -> Double {
            var sum = 1.0, term = 1.0, k = 1.0
            while term > 1e-12 * sum {
                term *= (x / (2 * k)) * (x / (2 * k))
                sum += term
                k += 1
            }
            return sum
        }
        var taps = SIMD8<Double>()
        for j in 0..<8 {
            let x = Double(j - delayTapsBehind) - f
            let sinc = x == 0 ? 1 : sin(Double.pi * x) / (Double.pi * x)
            taps[j] = sinc * besselI0(beta * max(0, 1 - (x / half) * (x / half)).squareRoot()) / besselI0(beta)
        }
        let normalized = taps / taps.sum()
        return SIMD8<Float>((0..<8).map { Float(normalized[$0]) })
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
        if let waiting = pending {
            pending = nil
            transformPair(waiting.window, waiting.current, waiting.next, silence, nil, nil)
        }
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

/// The per-voice spectral work, as RenderKernels.accumulateSpectra and .foldDelay.
public enum SpectralKernel {
    /// `spectrum`: the transform of two voices' inputs, A as the real part and B as the
    /// imaginary part (rows of `size + 8`, index `size` repeating 0). Unpacks them (A = Z[k] +
    /// conj Z[N−k], B = −i(Z[k] − conj Z[N−k]), both 2× — the filters carry the ½) and adds
    /// A·HA + B·HB to the steady sums of each ear; with a `next`, that voice's spectrum ×
    /// (next − current) to the change sums. Bins 0 … size/2.
    @inlinable @inline(__always)
    public static func accumulate(spectrum: UnsafePointer<Float>, size: Int,
                                  currentA: UnsafePointer<Float>, nextA: UnsafePointer<Float>?,
                                  currentB: UnsafePointer<Float>?, nextB: UnsafePointer<Float>?,
                                  sums: UnsafeMutablePointer<Float>, binStride b: Int) {
        typealias V = SIMD8<Float>
        let f = MemoryLayout<Float>.stride
        let z = UnsafeRawPointer(spectrum), zStride = size &+ 8
        let s = UnsafeMutableRawPointer(sums)
        @inline(__always) func load(_ p: UnsafeRawPointer, _ index: Int) -> V {
            p.loadUnaligned(fromByteOffset: index &* f, as: V.self)
        }
        @inline(__always) func reversed(_ v: V) -> V { V(v[7], v[6], v[5], v[4], v[3], v[2], v[1], v[0]) }
        let half = size / 2
        var k = 0
        while k <= half {
            let zr = load(z, k), zi = load(z, zStride &+ k)
            let mr = reversed(load(z, size &- k &- 7)), mi = reversed(load(z, zStride &+ size &- k &- 7))
            let ar = zr + mr, ai = zi - mi
            let br = zi + mi, bi = mr - zr
            // Each ear's sums loaded and stored once for both voices; s += x·h as fused
            // multiply-adds where the build has them.
            @inline(__always) func multiplyAdd(_ sum: inout (V, V), _ xr: V, _ xi: V, _ hr: V, _ hi: V) {
                sum.0 = sum.0.addingProduct(xr, hr).addingProduct(-xi, hi)
                sum.1 = sum.1.addingProduct(xr, hi).addingProduct(xi, hr)
            }
            @inline(__always) func sum(_ row: Int) -> (V, V) {
                (s.loadUnaligned(fromByteOffset: (row &* b &+ k) &* f, as: V.self),
                 s.loadUnaligned(fromByteOffset: ((row &+ 1) &* b &+ k) &* f, as: V.self))
            }
            @inline(__always) func store(_ row: Int, _ v: (V, V)) {
                s.storeBytes(of: v.0, toByteOffset: (row &* b &+ k) &* f, as: V.self)
                s.storeBytes(of: v.1, toByteOffset: ((row &+ 1) &* b &+ k) &* f, as: V.self)
            }
            @inline(__always) func filter(_ p: UnsafePointer<Float>, _ row: Int) -> (V, V) {
                let r = UnsafeRawPointer(p)
                return (load(r, row &* b &+ k), load(r, (row &+ 1) &* b &+ k))
            }
            let haL = filter(currentA, 0), haR = filter(currentA, 2)
            var left = sum(0), right = sum(2)
            multiplyAdd(&left, ar, ai, haL.0, haL.1)
            multiplyAdd(&right, ar, ai, haR.0, haR.1)
            var hbL = (V(), V()), hbR = (V(), V())
            if let currentB {
                hbL = filter(currentB, 0)
                hbR = filter(currentB, 2)
                multiplyAdd(&left, br, bi, hbL.0, hbL.1)
                multiplyAdd(&right, br, bi, hbR.0, hbR.1)
            }
            store(0, left)
            store(2, right)
            if nextA != nil || nextB != nil {
                var changeLeft = sum(4), changeRight = sum(6)
                if let nextA {
                    let nL = filter(nextA, 0), nR = filter(nextA, 2)
                    multiplyAdd(&changeLeft, ar, ai, nL.0 - haL.0, nL.1 - haL.1)
                    multiplyAdd(&changeRight, ar, ai, nR.0 - haR.0, nR.1 - haR.1)
                }
                if let nextB {
                    let nL = filter(nextB, 0), nR = filter(nextB, 2)
                    multiplyAdd(&changeLeft, br, bi, nL.0 - hbL.0, nL.1 - hbL.1)
                    multiplyAdd(&changeRight, br, bi, nR.0 - hbR.0, nR.1 - hbR.1)
                }
                store(4, changeLeft)
                store(6, changeRight)
            }
            k &+= 8
        }
    }

    /// out = Σ wᵢ·pᵢ, eight floats a step (`count` is a multiple of 8).
    @inlinable @inline(__always)
    public static func blend(_ p0: UnsafePointer<Float>, _ w0: Float, _ p1: UnsafePointer<Float>, _ w1: Float,
                      _ p2: UnsafePointer<Float>, _ w2: Float, _ p3: UnsafePointer<Float>, _ w3: Float,
                      into out: UnsafeMutablePointer<Float>, count: Int) {
        typealias V = SIMD8<Float>
        let f = MemoryLayout<Float>.stride
        let r0 = UnsafeRawPointer(p0), r1 = UnsafeRawPointer(p1), r2 = UnsafeRawPointer(p2), r3 = UnsafeRawPointer(p3)
        let o = UnsafeMutableRawPointer(out)
        var i = 0
        while i < count {
            let b = i &* f
            let v = (r0.loadUnaligned(fromByteOffset: b, as: V.self) * w0)
                .addingProduct(r1.loadUnaligned(fromByteOffset: b, as: V.self), w1)
                .addingProduct(r2.loadUnaligned(fromByteOffset: b, as: V.self), w2)
                .addingProduct(r3.loadUnaligned(fromByteOffset: b, as: V.self), w3)
            o.storeBytes(of: v, toByteOffset: b, as: V.self)
            i &+= 8
        }
    }

    /// ear (two rows) ×= delayRow × ((1 − t)·fractionRows[0] + t·fractionRows[1]): a whole
    /// delay's spectrum times a fraction's blended from two neighbouring steps (each a complex
    /// row, real then imaginary, `binStride` apart), over all `binStride` columns.
    @inlinable @inline(__always)
    public static func foldDelay(ear: UnsafeMutablePointer<Float>, delayRow: UnsafePointer<Float>,
                                 fractionRows: UnsafePointer<Float>, binStride b: Int, t: Float) {
        typealias V = SIMD8<Float>
        let f = MemoryLayout<Float>.stride
        let e = UnsafeMutableRawPointer(ear), w = UnsafeRawPointer(delayRow), r = UnsafeRawPointer(fractionRows)
        @inline(__always) func load(_ p: UnsafeRawPointer, _ row: Int, _ k: Int) -> V {
            p.loadUnaligned(fromByteOffset: (row &* b &+ k) &* f, as: V.self)
        }
        let u = 1 - t
        var k = 0
        while k < b {
            let fr = (load(r, 0, k) * u).addingProduct(load(r, 2, k), t)
            let fi = (load(r, 1, k) * u).addingProduct(load(r, 3, k), t)
            let wr = load(w, 0, k), wi = load(w, 1, k)
            let dr = (wr * fr).addingProduct(-wi, fi), di = (wr * fi).addingProduct(wi, fr)
            let hr = e.loadUnaligned(fromByteOffset: k &* f, as: V.self), hi = e.loadUnaligned(fromByteOffset: (b &+ k) &* f, as: V.self)
            e.storeBytes(of: (hr * dr).addingProduct(-hi, di), toByteOffset: k &* f, as: V.self)
            e.storeBytes(of: (hr * di).addingProduct(hi, dr), toByteOffset: (b &+ k) &* f, as: V.self)
            k &+= 8
        }
    }
}
