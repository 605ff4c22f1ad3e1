import CCPUFeatures
import Testing
import SceneSoundDSP
import SceneSoundDSPAVX2

/// The AVX2 build of the render kernels against the scalar references, on CPUs that have it
/// (the suite fails, rather than passes empty, on one that does not: there is nothing to test).
@Suite struct AVX2KernelTests {
    static let tolerance: Float = 1e-5

    struct Noise {
        var state: UInt64
        mutating func samples(_ count: Int, amplitude: Float = 1) -> [Float] {
            (0..<count).map { _ in
                state = state &* 6364136223846793005 &+ 1442695040888963407
                return (Float(state >> 40) / Float(1 << 24) * 2 - 1) * amplitude
            }
        }
    }

    func maximumDifference(_ a: [Float], _ b: [Float]) -> Float { zip(a, b).map { abs($0 - $1) }.max() ?? 0 }

    @Test func thisCPURunsAVX2() {
        #expect(scenesound_cpu_has_avx2_fma() != 0, "no AVX2 + FMA here: the AVX2 kernels are not exercised")
    }

    /// 64-, 32- and 8-sample passes and single samples: 107 = 64 + 32 + 8 + 3.
    @Test(arguments: [1, 7, 107, 128, 131])
    func convolutionMatchesScalar(frames: Int) throws {
        try #require(scenesound_cpu_has_avx2_fma() != 0)
        var noise = Noise(state: UInt64(frames))
        let taps = 128
        let input = noise.samples(taps - 1 + frames), filter = noise.samples(taps, amplitude: 0.1)
        var scalar = [Float](repeating: 0, count: frames), fast = scalar
        FIRKernel.convolveScalar(input: input, reversedTaps: filter, taps: taps, output: &scalar, frames: frames)
        RenderKernels.avx2.convolve(input, filter, taps, &fast, frames)
        #expect(maximumDifference(scalar, fast) < Self.tolerance)
        #expect(scalar.contains { $0 != 0 })
    }

    /// The constant-gain sum of many sources against one scalar pass per source.
    @Test(arguments: [1, 16, 128, 133])
    func encodingMatchesScalar(frames: Int) throws {
        try #require(scenesound_cpu_has_avx2_fma() != 0)
        var noise = Noise(state: 99 &+ UInt64(frames))
        let sources = 5
        let inputs = (0..<sources).map { _ in noise.samples(frames) }
        let gains = (0..<sources).map { _ in noise.samples(16, amplitude: 0.5) }
        let bus = noise.samples(16 * frames, amplitude: 0.1)
        var scalar = bus
        for s in 0..<sources {
            let g = SIMD16<Float>(gains[s])
            AmbisonicEncoderKernel.encodeScalar(input: inputs[s], frames: frames, from: g, to: g, bus: &scalar, channelStride: frames)
        }
        var fast = bus
        let pointers = inputs.map { UnsafeMutablePointer<Float>.allocate(capacity: $0.count) }
        defer { pointers.forEach { $0.deallocate() } }
        for (p, x) in zip(pointers, inputs) { p.initialize(from: x, count: x.count) }
        let constant = pointers.map { UnsafePointer($0) }
        RenderKernels.avx2.encodeSum(constant, gains.flatMap { $0 }, sources, frames, &fast, frames)
        #expect(maximumDifference(scalar, fast) < Self.tolerance)
        #expect(scalar != bus)
    }

    @Test(arguments: [1, 8, 128, 133])
    func rotationMatchesScalar(frames: Int) throws {
        try #require(scenesound_cpu_has_avx2_fma() != 0)
        let rotator = AmbisonicRotator()
        var m0 = [Float](repeating: 0, count: AmbisonicRotationKernel.matrixCount), m1 = m0
        rotator.matrix(for: Quaternion(yawDegrees: 10, pitchDegrees: 5), into: &m0)
        rotator.matrix(for: Quaternion(yawDegrees: 12, pitchDegrees: 4, rollDegrees: 1), into: &m1)
        var noise = Noise(state: 7 &+ UInt64(frames))
        let inputStride = frames + 3, outputStride = frames + 130
        let input = noise.samples(16 * inputStride)
        var scalar = [Float](repeating: 0, count: 16 * outputStride), fast = scalar
        AmbisonicRotationKernel.rotateScalar(input: input, inputStride: inputStride, output: &scalar, outputStride: outputStride,
                                             frames: frames, from: m0, to: m1)
        RenderKernels.avx2.rotate(input, inputStride, &fast, outputStride, frames, m0, m1)
        #expect(maximumDifference(scalar, fast) < Self.tolerance)
        #expect(scalar.contains { $0 != 0 })
    }

    /// The split FFT as built for AVX2 against the portable build (itself checked against
    /// the double-precision reference in SceneSoundDSPTests).
    @Test(arguments: [32, 256, 512, 2048])
    func fftMatchesPortable(size: Int) throws {
        try #require(scenesound_cpu_has_avx2_fma() != 0)
        var noise = Noise(state: UInt64(size))
        let re = noise.samples(size), im = noise.samples(size)
        let fft = SplitComplexFFT(size: size)
        func run(_ kernels: RenderKernels) -> [Float] {
            var outRe = [Float](repeating: 0, count: size), outIm = outRe, s1 = outRe, s2 = outRe
            kernels.fft(size, fft.twiddles, re, im, &outRe, &outIm, &s1, &s2)
            return outRe + outIm
        }
        let portable = run(.portable), fast = run(.avx2)
        #expect(maximumDifference(portable, fast) < Self.tolerance * Float(size).squareRoot())
        #expect(portable.contains { $0 != 0 })
    }

    /// The voices' spectral multiply-add — one voice or two, steady and crossfading —
    /// against the portable build.
    @Test(arguments: [(false, false), (true, false), (false, true), (true, true)])
    func spectralAccumulationMatchesPortable(crossfading: Bool, pair: Bool) throws {
        try #require(scenesound_cpu_has_avx2_fma() != 0)
        let size = 512, stride = size / 2 + 8
        var noise = Noise(state: (crossfading ? 5 : 6) + (pair ? 10 : 0))
        let spectrum = noise.samples(2 * (size + 8))
        let currentA = noise.samples(4 * stride), nextA = noise.samples(4 * stride)
        let currentB = noise.samples(4 * stride), nextB = noise.samples(4 * stride)
        let start = noise.samples(8 * stride)
        var portable = start, fast = start
        RenderKernels.portable.accumulateSpectra(spectrum, size, currentA, crossfading ? nextA : nil, pair ? currentB : nil,
                                                 pair && crossfading ? nextB : nil, &portable, stride)
        RenderKernels.avx2.accumulateSpectra(spectrum, size, currentA, crossfading ? nextA : nil, pair ? currentB : nil,
                                             pair && crossfading ? nextB : nil, &fast, stride)
        #expect(maximumDifference(portable, fast) < Self.tolerance)
        #expect(portable != start)
        #expect(crossfading == (portable[(4 * stride)..<(8 * stride)] != start[(4 * stride)..<(8 * stride)]))
    }

    /// A delay folded into an ear's spectrum, against the portable build.
    @Test func delayFoldingMatchesPortable() throws {
        try #require(scenesound_cpu_has_avx2_fma() != 0)
        let stride = 264
        var noise = Noise(state: 8)
        let rows = noise.samples(8 * stride), ear = noise.samples(2 * stride)
        var portable = ear, fast = ear
        RenderKernels.portable.foldDelay(&portable, rows, stride, 0.1, -0.6, 1.2, 0.3)
        RenderKernels.avx2.foldDelay(&fast, rows, stride, 0.1, -0.6, 1.2, 0.3)
        #expect(maximumDifference(portable, fast) < Self.tolerance)
        #expect(portable != ear)
    }

    /// Four nodes' spectra blended, against the portable build.
    @Test func spectralBlendMatchesPortable() throws {
        try #require(scenesound_cpu_has_avx2_fma() != 0)
        let count = 4 * 264
        var noise = Noise(state: 9)
        let p = (0..<4).map { _ in noise.samples(count) }
        var portable = [Float](repeating: 0, count: count), fast = portable
        RenderKernels.portable.blendSpectra(p[0], 0.1, p[1], 0.2, p[2], 0.3, p[3], 0.4, &portable, count)
        RenderKernels.avx2.blendSpectra(p[0], 0.1, p[1], 0.2, p[2], 0.3, p[3], 0.4, &fast, count)
        #expect(maximumDifference(portable, fast) < Self.tolerance)
        #expect(abs(portable[5] - (0.1 * p[0][5] + 0.2 * p[1][5] + 0.3 * p[2][5] + 0.4 * p[3][5])) < Self.tolerance)
    }

    /// A read's copy with its level measured on the way, against the portable build.
    @Test(arguments: [0, 5, 16, 27, 256])
    func measuredCopyMatchesPortable(frames: Int) throws {
        try #require(scenesound_cpu_has_avx2_fma() != 0)
        var noise = Noise(state: 11 &+ UInt64(frames))
        let x = noise.samples(frames)
        var portable = [Float](repeating: .nan, count: frames), fast = portable
        let portableSum = RenderKernels.portable.copySummingSquares(x, &portable, frames)
        let fastSum = RenderKernels.avx2.copySummingSquares(x, &fast, frames)
        #expect(fast == x && portable == x)
        #expect(abs(portableSum - fastSum) <= Self.tolerance * max(1, portableSum))
        #expect(frames == 0 || fastSum > 0)
    }
}
