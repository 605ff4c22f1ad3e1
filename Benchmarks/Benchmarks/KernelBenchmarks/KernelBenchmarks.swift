import Benchmark
import SceneSoundDSP
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

    Benchmark("FIR convolve SIMD, 128 taps × 128 frames") { benchmark, b in
        for _ in benchmark.scaledIterations {
            FIRKernel.convolve(input: b.input, reversedTaps: b.filter, taps: b.taps, output: b.output, frames: frames)
            blackHole(b.output[0])
        }
    } setup: { KernelBuffers() }

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

    // A whole voice per sub-block: gain, low-pass, two delays, two or four FIRs, crossfades.
    for moving in [false, true] {
        Benchmark("BinauralVoice render, 128 frames, \(moving ? "moving (filter crossfade)" : "still")") { benchmark, b in
            let voice = BinauralVoice(hrtf: b.hrtf, maximumFrames: frames)
            var azimuth = 30.0
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                if moving { azimuth += 0.24 }  // 90°/s at 128-frame sub-blocks
                voice.render(input: b.input, frames: frames,
                             target: BinauralTarget(azimuthDegrees: azimuth, elevationDegrees: 0, gain: 0.5),
                             left: b.output, right: b.output2)
                blackHole(b.output[0])
            }
        } setup: { KernelBuffers() }
    }
}
