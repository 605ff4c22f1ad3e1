import CCPUFeatures
import Testing
import SceneSoundDSP
import SceneSoundDSPAVX512

/// The AVX-512 build of the render kernels against the scalar references (or the portable
/// build), on CPUs that have it. Many x86-64 CPUs do not (they run the AVX2 kernels, which
/// AVX2KernelTests checks): there the suite is reported skipped, with the reason, so that
/// `make test` passes on a user's machine without claiming these kernels were tested.
@Suite(.enabled(if: scenesound_cpu_has_avx512() != 0, "this CPU has no AVX-512: its kernels cannot run here"))
struct AVX512KernelTests {
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

    @Test func theAVX512KernelTableIsNamed() {
        #expect(RenderKernels.avx512.name == "avx512")
    }

    /// The constant-gain sum of many sources against one scalar pass per source: the
    /// every-channel pass (16 frames at a time), then the 16- and 8-frame passes and single
    /// frames (133 = 8 × 16 + 5); 1 and 64 sources, inputs at odd offsets as the delays read them.
    @Test(arguments: [(1, 1), (16, 5), (128, 64), (133, 5), (256, 1)])
    func encodingMatchesScalar(frames: Int, sources: Int) throws {
        try #require(scenesound_cpu_has_avx512() != 0)
        var noise = Noise(state: 99 &+ UInt64(frames * sources))
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
        RenderKernels.avx512.encodeSum(offsets, gains.flatMap { $0 }, sources, frames, &fast, stride)
        #expect(maximumDifference(scalar, fast) < Self.tolerance * Float(sources).squareRoot())
        #expect(scalar != bus)
        // The channels' gaps between strides stay untouched.
        #expect(fast[frames..<stride] == bus[frames..<stride])
    }

    @Test(arguments: [1, 7, 107, 128, 131])
    func convolutionMatchesScalar(frames: Int) throws {
        try #require(scenesound_cpu_has_avx512() != 0)
        var noise = Noise(state: UInt64(frames))
        let taps = 128
        let input = noise.samples(taps - 1 + frames), filter = noise.samples(taps, amplitude: 0.1)
        var scalar = [Float](repeating: 0, count: frames), fast = scalar
        FIRKernel.convolveScalar(input: input, reversedTaps: filter, taps: taps, output: &scalar, frames: frames)
        RenderKernels.avx512.convolve(input, filter, taps, &fast, frames)
        #expect(maximumDifference(scalar, fast) < Self.tolerance)
        #expect(scalar.contains { $0 != 0 })
    }

    @Test(arguments: [1, 8, 128, 133])
    func rotationMatchesScalar(frames: Int) throws {
        try #require(scenesound_cpu_has_avx512() != 0)
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
        RenderKernels.avx512.rotate(input, inputStride, &fast, outputStride, frames, m0, m1)
        #expect(maximumDifference(scalar, fast) < Self.tolerance)
        #expect(scalar.contains { $0 != 0 })
    }

    /// The transform, the voices' spectral multiply-add (crossfading, two voices), a folded
    /// delay and a four-node blend, against the portable build.
    @Test func spectralKernelsMatchPortable() throws {
        try #require(scenesound_cpu_has_avx512() != 0)
        var noise = Noise(state: 5)
        for size in [32, 512, 2048] {
            let re = noise.samples(size), im = noise.samples(size)
            let fft = SplitComplexFFT(size: size)
            func run(_ kernels: RenderKernels) -> [Float] {
                var outRe = [Float](repeating: 0, count: size), outIm = outRe, s1 = outRe, s2 = outRe
                kernels.fft(size, fft.twiddles, re, im, &outRe, &outIm, &s1, &s2)
                return outRe + outIm
            }
            let portable = run(.portable)
            #expect(maximumDifference(portable, run(.avx512)) < Self.tolerance * Float(size).squareRoot())
            #expect(portable.contains { $0 != 0 })
        }
        let size = 512, stride = size / 2 + 8
        let spectrum = noise.samples(2 * (size + 8))
        let (currentA, nextA) = (noise.samples(4 * stride), noise.samples(4 * stride))
        let (currentB, nextB) = (noise.samples(4 * stride), noise.samples(4 * stride))
        let start = noise.samples(8 * stride)
        var portable = start, fast = start
        RenderKernels.portable.accumulateSpectra(spectrum, size, currentA, nextA, currentB, nextB, &portable, stride)
        RenderKernels.avx512.accumulateSpectra(spectrum, size, currentA, nextA, currentB, nextB, &fast, stride)
        #expect(maximumDifference(portable, fast) < Self.tolerance)
        #expect(portable != start)

        let rows = noise.samples(8 * stride), ear = noise.samples(2 * stride)
        var portableEar = ear, fastEar = ear
        RenderKernels.portable.foldDelay(&portableEar, rows, stride, 0.1, -0.6, 1.2, 0.3)
        RenderKernels.avx512.foldDelay(&fastEar, rows, stride, 0.1, -0.6, 1.2, 0.3)
        #expect(maximumDifference(portableEar, fastEar) < Self.tolerance)
        #expect(portableEar != ear)

        let count = 4 * stride
        let p = (0..<4).map { _ in noise.samples(count) }
        var portableBlend = [Float](repeating: 0, count: count), fastBlend = portableBlend
        RenderKernels.portable.blendSpectra(p[0], 0.1, p[1], 0.2, p[2], 0.3, p[3], 0.4, &portableBlend, count)
        RenderKernels.avx512.blendSpectra(p[0], 0.1, p[1], 0.2, p[2], 0.3, p[3], 0.4, &fastBlend, count)
        #expect(maximumDifference(portableBlend, fastBlend) < Self.tolerance)
        #expect(portableBlend.contains { $0 != 0 })
    }

    /// A read's copy with its level measured on the way, against the portable build.
    @Test(arguments: [0, 5, 16, 27, 256])
    func measuredCopyMatchesPortable(frames: Int) throws {
        try #require(scenesound_cpu_has_avx512() != 0)
        var noise = Noise(state: 11 &+ UInt64(frames))
        let x = noise.samples(frames)
        var portable = [Float](repeating: .nan, count: frames), fast = portable
        let portableSum = RenderKernels.portable.copySummingSquares(x, &portable, frames)
        let fastSum = RenderKernels.avx512.copySummingSquares(x, &fast, frames)
        #expect(fast == x && portable == x)
        #expect(abs(portableSum - fastSum) <= Self.tolerance * max(1, portableSum))
        #expect(frames == 0 || fastSum > 0)
    }
}
