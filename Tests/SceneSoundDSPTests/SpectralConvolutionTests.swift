import Testing
import SceneSoundDSP

/// The render thread's FFT and the frequency-domain voice mix against the references: the
/// double-precision FFT, and time-domain convolution with a linear crossfade.
@Suite struct SpectralConvolutionTests {
    static func maximumDifference(_ a: [Float], _ b: [Float]) -> Float {
        zip(a, b).map { abs($0 - $1) }.max() ?? 0
    }

    /// 32 … 128: radix-4 passes only, and one radix-2 pass last; 512 and 2048 as used.
    @Test(arguments: [32, 64, 128, 256, 512, 1024, 2048])
    func splitFFTMatchesReference(size: Int) {
        var noise = WhiteNoise(seed: UInt64(size))
        let re = noise.samples(size), im = noise.samples(size)
        var refRe = re.map(Double.init), refIm = im.map(Double.init)
        FFT(size: size).transform(real: &refRe, imag: &refIm)
        let fft = SplitComplexFFT(size: size)
        var outRe = [Float](repeating: 0, count: size), outIm = outRe
        var scratchRe = outRe, scratchIm = outRe
        SplitComplexFFT.forward(size: size, twiddles: fft.twiddles, inputReal: re, inputImag: im,
                                outputReal: &outRe, outputImag: &outIm, scratchReal: &scratchRe, scratchImag: &scratchIm)
        // Float against double: relative to the spectrum's scale (√size for unit noise).
        let error = zip(outRe, refRe).map { abs(Double($0) - $1) }.max()! + zip(outIm, refIm).map { abs(Double($0) - $1) }.max()!
        #expect(error / Double(size).squareRoot() < 2e-5, "size \(size): error \(error)")

        // And back: the unscaled inverse returns size × the input.
        var backRe = outRe, backIm = outIm
        SplitComplexFFT.inverse(size: size, twiddles: fft.twiddles, inputReal: outRe, inputImag: outIm,
                                outputReal: &backRe, outputImag: &backIm, scratchReal: &scratchRe, scratchImag: &scratchIm)
        #expect(Self.maximumDifference(backRe.map { $0 / Float(size) }, re) < 1e-5)
        #expect(Self.maximumDifference(backIm.map { $0 / Float(size) }, im) < 1e-5)
    }

    /// Spans through the mix against the direct convolution of the same filters, for three
    /// voices at once — one changing its filters mid-stream (a crossfade span) — and for
    /// the two transform sizes the engine uses (span 128 → 256, span 256 → 512).
    @Test(arguments: [128, 256])
    func mixMatchesTimeDomainConvolution(span: Int) {
        let taps = 128
        var noise = WhiteNoise(seed: 11)
        let spans = 6, frames = span * spans
        let mix = SpectralVoiceMix(taps: taps, partitionFrames: span)
        // Three voices with random filters per ear; voice 2 switches to new filters in span 3.
        let inputs = (0..<3).map { _ in (noise.samples(frames), noise.samples(frames)) }
        let firstFilters = (0..<3).map { _ in (noise.samples(taps, amplitude: 0.2), noise.samples(taps, amplitude: 0.2)) }
        let newFilters = (noise.samples(taps, amplitude: 0.2), noise.samples(taps, amplitude: 0.2))
        let changeSpan = 3

        func spectra(_ filters: ([Float], [Float])) -> UnsafeMutablePointer<Float> {
            let p = UnsafeMutablePointer<Float>.allocate(capacity: mix.filterFloats)
            p.initialize(repeating: 0, count: mix.filterFloats)
            mix.filterSpectra(reversedLeft: filters.0.reversed(), reversedRight: filters.1.reversed(), into: p)
            return p
        }
        let current = firstFilters.map(spectra), changed = spectra(newFilters)
        defer { (current + [changed]).forEach { $0.deallocate() } }

        var left = [Float](repeating: 0, count: frames), right = left
        let size = mix.size
        for s in 0..<spans {
            mix.beginSpan()
            for v in 0..<3 {
                // The last `size` samples of each ear's input, ending with this span.
                let end = (s + 1) * span
                let window = { (x: [Float]) in (0..<size).map { i in end - size + i >= 0 ? x[end - size + i] : 0 } }
                let next: UnsafePointer<Float>? = v == 2 && s == changeSpan ? UnsafePointer(changed) : nil
                let from = v == 2 && s > changeSpan ? changed : current[v]
                mix.accumulate(left: window(inputs[v].0), right: window(inputs[v].1), current: from, next: next)
            }
            left.withUnsafeMutableBufferPointer { l in
                right.withUnsafeMutableBufferPointer { r in
                    mix.finishSpan(left: l.baseAddress! + s * span, right: r.baseAddress! + s * span)
                }
            }
        }

        func convolve(_ x: [Float], _ h: [Float]) -> [Float] {
            (0..<frames).map { n in (0..<taps).reduce(Float(0)) { $0 + (n - $1 >= 0 ? h[$1] * x[n - $1] : 0) } }
        }
        var expectedLeft = [Float](repeating: 0, count: frames), expectedRight = expectedLeft
        for v in 0..<3 {
            let old = (convolve(inputs[v].0, firstFilters[v].0), convolve(inputs[v].1, firstFilters[v].1))
            let new = v == 2 ? (convolve(inputs[v].0, newFilters.0), convolve(inputs[v].1, newFilters.1)) : old
            for n in 0..<frames {
                let s = n / span
                let w: Float = s < changeSpan ? 0 : s > changeSpan ? 1 : Float(n - s * span + 1) / Float(span)
                expectedLeft[n] += old.0[n] + (new.0[n] - old.0[n]) * w
                expectedRight[n] += old.1[n] + (new.1[n] - old.1[n]) * w
            }
        }
        let peak = expectedLeft.map(abs).max()!
        #expect(peak > 0.5)
        #expect(Self.maximumDifference(left, expectedLeft) < 1e-5 * peak * 10)
        #expect(Self.maximumDifference(right, expectedRight) < 1e-5 * peak * 10)
    }
}
