import Benchmark
import SceneSoundDSP
import SceneSoundEngine
import SceneSoundSOFA

// The DSP kernels one call at a time, at the engine's sizes: 128-frame sub-blocks (two per
// 256-frame block) and KEMAR's 128-tap filters at 48 kHz. Times are per call (scaled by
// 1000 calls per sample); the scalar references show what the SIMD versions buy.

let frames = 128

/// Buffers a kernel reads and writes, allocated once outside the measurement.
final class KernelBuffers {
    let taps: Int
    let history: Int
    let input: UnsafeMutablePointer<Float>     // history + frames
    let filter: UnsafeMutablePointer<Float>    // taps
    let filter2: UnsafeMutablePointer<Float>   // taps
    let output: UnsafeMutablePointer<Float>    // frames
    let output2: UnsafeMutablePointer<Float>   // frames
    let hrtf: HRTFSet
    /// Bus-sized: 16 channels of (64-tap history +) frames each, two rotation matrices,
    /// 16 × 2 decoder filters.
    let field: UnsafeMutablePointer<Float>
    let field2: UnsafeMutablePointer<Float>
    let matrices: UnsafeMutablePointer<Float>
    let decodeFilters: UnsafeMutablePointer<Float>

    init() {
        hrtf = try! HRTFLoader().load(path: SOFAFile.defaultPath, sampleRateHz: 48000).set
        taps = hrtf.filterTaps
        history = taps + 64
        func noise(_ count: Int, seed: UInt32) -> UnsafeMutablePointer<Float> {
            var state = seed
            let p = UnsafeMutablePointer<Float>.allocate(capacity: count)
            for i in 0..<count {
                state ^= state << 13; state ^= state >> 17; state ^= state << 5
                p[i] = Float(state) / Float(UInt32.max) * 2 - 1
            }
            return p
        }
        input = noise(history + frames, seed: 1)
        filter = noise(taps, seed: 2)
        filter2 = noise(taps, seed: 3)
        output = noise(frames, seed: 4)
        output2 = noise(frames, seed: 5)
        field = noise(16 * (frames + 64), seed: 6)
        field2 = noise(16 * (frames + 64), seed: 7)
        decodeFilters = noise(16 * 2 * 64, seed: 8)
        matrices = .allocate(capacity: 2 * AmbisonicRotationKernel.matrixCount)
        let rotator = AmbisonicRotator()
        rotator.matrix(for: Quaternion(yawDegrees: 30), into: matrices)
        rotator.matrix(for: Quaternion(yawDegrees: 30.24), into: matrices + AmbisonicRotationKernel.matrixCount)
    }
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        // Process CPU time ticks in 10 ms steps, too coarse for one call; `scenesound bench`
        // measures CPU seconds per audio second with the thread's CPU clock instead.
        metrics: [.wallClock, .mallocCountTotal],
        timeUnits: .nanoseconds,
        warmupIterations: 3,
        scalingFactor: .kilo,
        maxDuration: .seconds(1),
        maxIterations: 1000,
        thresholds: [.mallocCountTotal: .init(absolute: [.p90: 0, .p100: 0])]
    )

    // The control: proves the malloc counter sees allocations (it must read 1, not 0).
    Benchmark("Malloc counter control, one allocation per call", configuration: .init(thresholds: [:])) { benchmark in
        for _ in benchmark.scaledIterations {
            let p = UnsafeMutablePointer<Float>.allocate(capacity: 64)
            blackHole(p)
            p.deallocate()
        }
    }

    Benchmark("FIR convolve scalar reference, 128 taps × 128 frames") { benchmark, b in
        for _ in benchmark.scaledIterations {
            FIRKernel.convolveScalar(input: b.input, reversedTaps: b.filter, taps: b.taps, output: b.output, frames: frames)
            blackHole(b.output[0])
        }
    } setup: { KernelBuffers() }

    Benchmark("Fractional delay, constant, 128 frames") { benchmark, b in
        for _ in benchmark.scaledIterations {
            FractionalDelay.process(input: b.input + b.history, output: b.output, frames: frames,
                                    startDelaySamples: 20.3, endDelaySamples: 20.3)
            blackHole(b.output[0])
        }
    } setup: { KernelBuffers() }

    Benchmark("Fractional delay, gliding, 128 frames") { benchmark, b in
        for _ in benchmark.scaledIterations {
            FractionalDelay.process(input: b.input + b.history, output: b.output, frames: frames,
                                    startDelaySamples: 20.3, endDelaySamples: 20.9)
            blackHole(b.output[0])
        }
    } setup: { KernelBuffers() }

    Benchmark("Crossfade add SIMD, 128 frames") { benchmark, b in
        for _ in benchmark.scaledIterations {
            Mixing.crossfadeAdd(from: b.input, to: b.input + frames, into: b.output, frames: frames)
            blackHole(b.output[0])
        }
    } setup: { KernelBuffers() }

    Benchmark("Crossfade add scalar reference, 128 frames") { benchmark, b in
        for _ in benchmark.scaledIterations {
            Mixing.crossfadeAddScalar(from: b.input, to: b.input + frames, into: b.output, frames: frames)
            blackHole(b.output[0])
        }
    } setup: { KernelBuffers() }

    Benchmark("HRTF interpolate (4-node blend, both ears)") { benchmark, b in
        var azimuth = 0.0
        for _ in benchmark.scaledIterations {
            azimuth += 0.37
            blackHole(b.hrtf.interpolate(azimuthDegrees: azimuth, elevationDegrees: 10,
                                         reversedLeft: b.filter, reversedRight: b.filter2))
        }
    } setup: { KernelBuffers() }

    // A whole voice per 256-frame span: gain, low-pass, two delays, one transform, the
    // spectral multiply-adds (twice while its filters fade), and the mix's inverse transforms
    // (shared by every voice in the engine, here by one).
    for moving in [false, true] {
        Benchmark("BinauralVoice render, 256-frame span, \(moving ? "moving (filter crossfade)" : "still") (\(RenderKernels.fastest.name))") { benchmark, b in
            let span = 256
            let mix = SpectralVoiceMix(hrtf: b.hrtf, partitionFrames: span, kernels: .fastest)
            let voice = BinauralVoice(hrtf: b.hrtf, partitionFrames: span)
            let left = UnsafeMutablePointer<Float>.allocate(capacity: span), right = UnsafeMutablePointer<Float>.allocate(capacity: span)
            left.initialize(repeating: 0, count: span); right.initialize(repeating: 0, count: span)
            defer { left.deallocate(); right.deallocate() }
            var azimuth = 30.0
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                if moving { azimuth += 1 }  // past the 1° threshold: new filters every span
                mix.beginSpan()
                voice.render(input: b.input, target: BinauralTarget(azimuthDegrees: azimuth, elevationDegrees: 0, gain: 0.5),
                             into: mix)
                mix.finishSpan(left: left, right: right)
                blackHole(left[0])
            }
        } setup: { KernelBuffers() }
    }

    // The ambisonic bus, in each build of its kernels (RenderKernels: "portable" runs on any
    // x86-64, "avx2" where the CPU has it — the engine uses the fastest).
    let builds = RenderKernels.fastest.name == RenderKernels.portable.name
        ? [RenderKernels.portable] : [RenderKernels.portable, RenderKernels.fastest]
    for kernels in builds {
        Benchmark("FFT, 512 complex points, split (\(kernels.name))") { benchmark, b in
            let fft = SplitComplexFFT(size: 512)
            let work = UnsafeMutablePointer<Float>.allocate(capacity: 6 * 512)
            work.initialize(repeating: 0.25, count: 6 * 512)
            defer { work.deallocate() }
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                kernels.fft(512, fft.twiddles, work, work + 512, work + 1024, work + 1536, work + 2048, work + 2560)
                blackHole(work[1024])
            }
        } setup: { KernelBuffers() }

        Benchmark("FIR convolve SIMD, 128 taps × 128 frames (\(kernels.name))") { benchmark, b in
            for _ in benchmark.scaledIterations {
                kernels.convolve(b.input, b.filter, b.taps, b.output, frames)
                blackHole(b.output[0])
            }
        } setup: { KernelBuffers() }

        Benchmark("Ambisonic encode, 64 sources × 16 channels × 128 frames (\(kernels.name))") { benchmark, b in
            let inputs = (0..<64).map { i in UnsafePointer(b.input + i) }
            let gains = (0..<64 * 16).map { Float(($0 % 17) - 8) / 8 }
            inputs.withUnsafeBufferPointer { inputs in
                gains.withUnsafeBufferPointer { gains in
                    benchmark.startMeasurement()
                    for _ in benchmark.scaledIterations {
                        kernels.encodeSum(inputs.baseAddress!, gains.baseAddress!, 64, frames, b.field, frames)
                        blackHole(b.field[0])
                    }
                }
            }
        } setup: { KernelBuffers() }

        Benchmark("Ambisonic rotate, 16 channels × 128 frames, gliding (\(kernels.name))") { benchmark, b in
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                kernels.rotate(b.field, frames, b.field2, frames, frames, b.matrices, b.matrices + AmbisonicRotationKernel.matrixCount)
                blackHole(b.field2[0])
            }
        } setup: { KernelBuffers() }

        Benchmark("Ambisonic decode, 2 ears × 16 channels × 64 taps × 128 frames (\(kernels.name))") { benchmark, b in
            let taps = AmbisonicDecodeFilters.defaultTaps
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                AmbisonicDecodeKernel.decode(left: b.field, right: b.field, channelStride: frames + taps - 1, frames: frames,
                                             reversedFilters: b.decodeFilters, taps: taps, scratch: b.output,
                                             leftOutput: b.output2, rightOutput: b.output2, kernels: kernels)
                blackHole(b.output2[0])
            }
        } setup: { KernelBuffers() }
    }
}
