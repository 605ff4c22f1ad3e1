import Foundation
import Testing
@testable import SceneSoundDSP

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

    /// Spans through the mix against the time domain — each ear's input delayed by the voices'
    /// interpolator (SpectralVoiceMix.delayCoefficients), then convolved with its filter — for three voices (an odd number: one
    /// waits for a partner, and the last one is transformed alone), one changing its filters
    /// and delays mid-stream (a crossfade span), for both spans the engine uses.
    @Test(arguments: [128, 256])
    func mixMatchesTimeDomainConvolution(span: Int) {
        let taps = 128, maximumDelay: Float = 20
        var noise = WhiteNoise(seed: 11)
        let spans = 6, frames = span * spans
        let mix = SpectralVoiceMix(taps: taps, maximumDelaySamples: maximumDelay, partitionFrames: span)
        let inputs = (0..<3).map { _ in noise.samples(frames) }
        typealias Ears = (left: [Float], right: [Float], leftDelay: Float, rightDelay: Float)
        func ears(_ leftDelay: Float, _ rightDelay: Float) -> Ears {
            (noise.samples(taps, amplitude: 0.2), noise.samples(taps, amplitude: 0.2), leftDelay, rightDelay)
        }
        let firstFilters = [ears(3, 3), ears(3.3, 17.75), ears(12.5, 4)]
        let newFilters = ears(19.9, 6.1)
        let changeSpan = 3

        func spectra(_ e: Ears) -> UnsafeMutablePointer<Float> {
            let p = UnsafeMutablePointer<Float>.allocate(capacity: mix.filterFloats)
            p.initialize(repeating: 0, count: mix.filterFloats)
            mix.filterSpectra(reversedLeft: e.left.reversed(), reversedRight: e.right.reversed(), into: p)
            mix.foldDelay(e.leftDelay, into: p)
            mix.foldDelay(e.rightDelay, into: p + 2 * mix.binStride)
            return p
        }
        let current = firstFilters.map(spectra), changed = spectra(newFilters)
        defer { (current + [changed]).forEach { $0.deallocate() } }

        var left = [Float](repeating: 0, count: frames), right = left
        let size = mix.size
        // The mix may hold a voice's window until the span is finished: one buffer per voice.
        let windows = (0..<3).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: size) }
        defer { windows.forEach { $0.deallocate() } }
        for s in 0..<spans {
            mix.beginSpan()
            for v in 0..<3 {
                // The last `size` samples of the voice's input, ending with this span.
                let end = (s + 1) * span
                for i in 0..<size { windows[v][i] = end - size + i >= 0 ? inputs[v][end - size + i] : 0 }
                let next: UnsafePointer<Float>? = v == 2 && s == changeSpan ? UnsafePointer(changed) : nil
                let from = v == 2 && s > changeSpan ? changed : current[v]
                mix.accumulate(window: windows[v], current: from, next: next)
            }
            left.withUnsafeMutableBufferPointer { l in
                right.withUnsafeMutableBufferPointer { r in
                    mix.finishSpan(left: l.baseAddress! + s * span, right: r.baseAddress! + s * span)
                }
            }
        }

        func render(_ x: [Float], _ h: [Float], delay: Float) -> [Float] {
            // The voices' interpolator, taps at whole delays I − 3 … I + 4.
            let whole = Int(delay), c = SpectralVoiceMix.delayCoefficients(fraction: delay - Float(whole))
            let delayed = (0..<frames).map { n in
                (0..<8).reduce(Float(0)) { sum, j in
                    let t = n - (whole - SpectralVoiceMix.delayTapsBehind + j)
                    return sum + (t >= 0 && t < frames ? c[j] * x[t] : 0)
                }
            }
            return (0..<frames).map { n in (0..<taps).reduce(Float(0)) { $0 + (n - $1 >= 0 ? h[$1] * delayed[n - $1] : 0) } }
        }
        var expectedLeft = [Float](repeating: 0, count: frames), expectedRight = expectedLeft
        for v in 0..<3 {
            let f = firstFilters[v]
            let old = (render(inputs[v], f.left, delay: f.leftDelay), render(inputs[v], f.right, delay: f.rightDelay))
            let new = v == 2 ? (render(inputs[v], newFilters.left, delay: newFilters.leftDelay),
                                render(inputs[v], newFilters.right, delay: newFilters.rightDelay)) : old
            for n in 0..<frames {
                let s = n / span
                let w: Float = s < changeSpan ? 0 : s > changeSpan ? 1 : Float(n - s * span + 1) / Float(span)
                expectedLeft[n] += old.0[n] + (new.0[n] - old.0[n]) * w
                expectedRight[n] += old.1[n] + (new.1[n] - old.1[n]) * w
            }
        }
        let peak = expectedLeft.map(abs).max()!
        #expect(peak > 0.5)
        #expect(Self.maximumDifference(left, expectedLeft) < 1e-4 * peak, "\(Self.maximumDifference(left, expectedLeft))")
        #expect(Self.maximumDifference(right, expectedRight) < 1e-4 * peak, "\(Self.maximumDifference(right, expectedRight))")
    }

    /// The delay and interpolator spectra the mix prepares at its start (from a table of the
    /// transform's roots, tap by tap over the bins) are, bit for bit, the sums written out:
    /// e^(−2πi·k·m/size) for each delay m, and Σⱼ cⱼ·e^(−2πi·k·(j − 3)/size) per step, taps in order.
    @Test func theDelaySpectraAreTheirSumsWrittenOut() {
        let mix = SpectralVoiceMix(taps: 128, maximumDelaySamples: 40, partitionFrames: 256)
        let size = mix.size, stride = mix.binStride
        var differing = 0
        for m in 0..<mix.delayRowCount {
            for k in 0...(size / 2) {
                let angle = -2 * Double.pi * Double((k * m) % size) / Double(size)
                if mix.delayRows[2 * m * stride + k] != Float(cos(angle)) || mix.delayRows[(2 * m + 1) * stride + k] != Float(sin(angle)) {
                    differing += 1
                }
            }
        }
        for (q, c) in SpectralVoiceMix.delayCoefficientTable.enumerated() {
            for k in 0...(size / 2) {
                var re: Float = 0, im: Float = 0
                for j in 0..<8 {
                    let m = j - SpectralVoiceMix.delayTapsBehind
                    re += c[j] * mix.delayRows[2 * abs(m) * stride + k]
                    im += c[j] * (m < 0 ? -1 : 1) * mix.delayRows[(2 * abs(m) + 1) * stride + k]
                }
                if mix.fractionRows[2 * q * stride + k] != re || mix.fractionRows[(2 * q + 1) * stride + k] != im { differing += 1 }
            }
        }
        #expect(mix.delayRowCount > 8)
        #expect(differing == 0, "\(differing) bins differ")
    }
}
