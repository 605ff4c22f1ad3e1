import Testing
import SceneSoundDSP

/// The render kernels' conformance checks, shared by every build of the kernel table
/// (portable, AVX2, AVX-512): each function runs one kernel of the given table against the
/// scalar reference, or against the portable build where that is itself checked elsewhere,
/// and records its expectations in the calling test. The argument lists are the sizes that
/// reach every loop of the kernels, so that each table is tested on the same cases.
public enum KernelConformance {
    public static let tolerance: Float = 1e-5

    static func maximumDifference(_ a: [Float], _ b: [Float]) -> Float { zip(a, b).map { abs($0 - $1) }.max() ?? 0 }

    /// (frames, taps): 64-, 32- and 8-sample passes and single samples (107 = 64 + 32 + 8 + 3,
    /// 299 = 9 × 32 + 8 + 3), with short and long filters.
    public static let convolutionCases: [(Int, Int)] = [(1, 128), (7, 128), (107, 128), (128, 128), (131, 128),
                                                        (299, 8), (299, 64), (299, 128), (299, 256)]

    public static func convolutionMatchesScalar(_ kernels: RenderKernels, frames: Int, taps: Int) {
        var noise = WhiteNoise(seed: UInt64(frames * taps))
        let input = noise.samples(taps - 1 + frames), filter = noise.samples(taps, amplitude: 0.1)
        var scalar = [Float](repeating: 0, count: frames), fast = scalar
        FIRKernel.convolveScalar(input: input, reversedTaps: filter, taps: taps, output: &scalar, frames: frames)
        kernels.convolve(input, filter, taps, &fast, frames)
        #expect(maximumDifference(scalar, fast) < tolerance, "\(kernels.name) convolution")
        #expect(scalar.contains { $0 != 0 })
    }

    /// (frames, sources): the every-channel pass (16 frames at a time), then the 16- and
    /// 8-frame passes and single frames (133 = 8 × 16 + 5), with one source up to 64.
    public static let encodingCases: [(Int, Int)] = [(1, 1), (1, 5), (8, 5), (16, 5), (128, 5), (128, 64), (131, 5),
                                                     (133, 5), (256, 1)]

    /// The constant-gain sum of many sources against one scalar pass per source, with the
    /// inputs at odd offsets as the delays read them and gaps between the bus's channels.
    public static func encodingMatchesScalar(_ kernels: RenderKernels, frames: Int, sources: Int) {
        var noise = WhiteNoise(seed: 99 &+ UInt64(frames * sources))
        let inputs = (0..<sources).map { _ in noise.samples(frames + 7) }
        let gains = (0..<sources).map { _ in noise.samples(16, amplitude: 0.5) }
        let stride = frames + 3
        let bus = noise.samples(16 * stride, amplitude: 0.1)
        var scalar = bus
        for s in 0..<sources {
            let g = SIMD16<Float>(gains[s])
            inputs[s].withUnsafeBufferPointer { x in
                AmbisonicEncoderKernel.encodeScalar(input: x.baseAddress! + s % 7, frames: frames, from: g, to: g,
                                                    bus: &scalar, channelStride: stride)
            }
        }
        var fast = bus
        let pointers = inputs.map { UnsafeMutablePointer<Float>.allocate(capacity: $0.count) }
        defer { pointers.forEach { $0.deallocate() } }
        for (p, x) in zip(pointers, inputs) { p.initialize(from: x, count: x.count) }
        let offsets = pointers.enumerated().map { UnsafePointer($0.element + $0.offset % 7) }
        kernels.encodeSum(offsets, gains.flatMap { $0 }, sources, frames, &fast, stride)
        // Rounding grows with the number of sources summed.
        #expect(maximumDifference(scalar, fast) < tolerance * Float(sources).squareRoot(), "\(kernels.name) encoding")
        #expect(scalar != bus)
        // The channels' gaps between strides stay untouched.
        #expect(fast[frames..<stride] == bus[frames..<stride])
    }

    public static let rotationFrames = [1, 8, 128, 133]

    public static func rotationMatchesScalar(_ kernels: RenderKernels, frames: Int) {
        let rotator = AmbisonicRotator()
        var m0 = [Float](repeating: 0, count: AmbisonicRotationKernel.matrixCount), m1 = m0
        rotator.matrix(for: Quaternion(yawDegrees: 10, pitchDegrees: 5), into: &m0)
        rotator.matrix(for: Quaternion(yawDegrees: 12, pitchDegrees: 4, rollDegrees: 1), into: &m1)
        var noise = WhiteNoise(seed: 7 &+ UInt64(frames))
        let inputStride = frames + 3, outputStride = frames + 130
        let input = noise.samples(16 * inputStride)
        var scalar = [Float](repeating: 0, count: 16 * outputStride), fast = scalar
        AmbisonicRotationKernel.rotateScalar(input: input, inputStride: inputStride, output: &scalar, outputStride: outputStride,
                                             frames: frames, from: m0, to: m1)
        kernels.rotate(input, inputStride, &fast, outputStride, frames, m0, m1)
        #expect(maximumDifference(scalar, fast) < tolerance, "\(kernels.name) rotation")
        #expect(scalar.contains { $0 != 0 })
    }

    public static let fftSizes = [32, 256, 512, 2048]

    /// The split FFT against the portable build (itself checked against the double-precision
    /// reference in SceneSoundDSPTests).
    public static func fftMatchesPortable(_ kernels: RenderKernels, size: Int) {
        var noise = WhiteNoise(seed: UInt64(size))
        let re = noise.samples(size), im = noise.samples(size)
        let fft = SplitComplexFFT(size: size)
        func run(_ kernels: RenderKernels) -> [Float] {
            var outRe = [Float](repeating: 0, count: size), outIm = outRe, s1 = outRe, s2 = outRe
            kernels.fft(size, fft.twiddles, re, im, &outRe, &outIm, &s1, &s2)
            return outRe + outIm
        }
        let portable = run(.portable), fast = run(kernels)
        #expect(maximumDifference(portable, fast) < tolerance * Float(size).squareRoot(), "\(kernels.name) FFT")
        #expect(portable.contains { $0 != 0 })
    }

    /// (crossfading, pair): one voice or two, steady and crossfading.
    public static let spectralAccumulationCases: [(Bool, Bool)] = [(false, false), (true, false), (false, true), (true, true)]

    /// The voices' spectral multiply-add against the portable build.
    public static func spectralAccumulationMatchesPortable(_ kernels: RenderKernels, crossfading: Bool, pair: Bool) {
        let size = 512, stride = size / 2 + 8
        var noise = WhiteNoise(seed: (crossfading ? 5 : 6) + (pair ? 10 : 0))
        let spectrum = noise.samples(2 * (size + 8))
        let currentA = noise.samples(4 * stride), nextA = noise.samples(4 * stride)
        let currentB = noise.samples(4 * stride), nextB = noise.samples(4 * stride)
        let start = noise.samples(8 * stride)
        var portable = start, fast = start
        RenderKernels.portable.accumulateSpectra(spectrum, size, currentA, crossfading ? nextA : nil, pair ? currentB : nil,
                                                 pair && crossfading ? nextB : nil, &portable, stride)
        kernels.accumulateSpectra(spectrum, size, currentA, crossfading ? nextA : nil, pair ? currentB : nil,
                                  pair && crossfading ? nextB : nil, &fast, stride)
        #expect(maximumDifference(portable, fast) < tolerance, "\(kernels.name) spectral accumulation")
        #expect(portable != start)
        #expect(crossfading == (portable[(4 * stride)..<(8 * stride)] != start[(4 * stride)..<(8 * stride)]))
    }

    /// A delay folded into an ear's spectrum, against the portable build.
    public static func delayFoldingMatchesPortable(_ kernels: RenderKernels) {
        let stride = 264
        var noise = WhiteNoise(seed: 8)
        let delayRow = noise.samples(2 * stride), fractionRows = noise.samples(4 * stride), ear = noise.samples(2 * stride)
        var portable = ear, fast = ear
        RenderKernels.portable.foldDelay(&portable, delayRow, fractionRows, stride, 0.3)
        kernels.foldDelay(&fast, delayRow, fractionRows, stride, 0.3)
        #expect(maximumDifference(portable, fast) < tolerance, "\(kernels.name) delay folding")
        #expect(portable != ear)
    }

    /// Four nodes' spectra blended, against the portable build and the weighted sum itself.
    public static func spectralBlendMatchesPortable(_ kernels: RenderKernels) {
        let count = 4 * 264
        var noise = WhiteNoise(seed: 9)
        let p = (0..<4).map { _ in noise.samples(count) }
        var portable = [Float](repeating: 0, count: count), fast = portable
        RenderKernels.portable.blendSpectra(p[0], 0.1, p[1], 0.2, p[2], 0.3, p[3], 0.4, &portable, count)
        kernels.blendSpectra(p[0], 0.1, p[1], 0.2, p[2], 0.3, p[3], 0.4, &fast, count)
        #expect(maximumDifference(portable, fast) < tolerance, "\(kernels.name) spectral blend")
        #expect(abs(portable[5] - (0.1 * p[0][5] + 0.2 * p[1][5] + 0.3 * p[2][5] + 0.4 * p[3][5])) < tolerance)
    }

    /// Lengths through every branch: the 16-wide loop, the 8-wide rest, the scalar tail.
    public static let measuredCopyFrames = [0, 5, 16, 27, 256]

    /// A read's copy with its level measured on the way, against the portable build.
    public static func measuredCopyMatchesPortable(_ kernels: RenderKernels, frames: Int) {
        var noise = WhiteNoise(seed: 11 &+ UInt64(frames))
        let x = noise.samples(frames)
        var portable = [Float](repeating: .nan, count: frames), fast = portable
        let portableSum = RenderKernels.portable.copySummingSquares(x, &portable, frames)
        let fastSum = kernels.copySummingSquares(x, &fast, frames)
        #expect(fast == x && portable == x, "\(kernels.name) measured copy")
        #expect(abs(portableSum - fastSum) <= tolerance * max(1, portableSum))
        #expect(frames == 0 || fastSum > 0)
    }
}
