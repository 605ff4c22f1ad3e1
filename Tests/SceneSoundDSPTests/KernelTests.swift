import Testing
import SceneSoundDSP
import SceneSoundKernelConformance
import Foundation

/// Every fast kernel against its scalar reference (agree within 1e-5).
@Suite struct KernelTests {
    static let tolerance: Float = 1e-5

    func maximumDifference(_ a: [Float], _ b: [Float]) -> Float {
        zip(a, b).map { abs($0 - $1) }.max() ?? 0
    }

    /// Through the table the engine runs, with the checks the AVX2 and AVX-512 tables share.
    @Test(arguments: KernelConformance.convolutionCases)
    func firFastMatchesScalar(frames: Int, taps: Int) {
        KernelConformance.convolutionMatchesScalar(.portable, frames: frames, taps: taps)
    }

    @Test(arguments: [(3.0, 3.0), (2.25, 2.25), (1.5, 7.75), (9.9, 1.0), (4.0, 4.0)] as [(Float, Float)])
    func fractionalDelayFastMatchesScalar(start: Float, end: Float) {
        var noise = WhiteNoise(seed: 7)
        let history = 16, frames = 200
        let signal = noise.samples(history + frames)
        var scalar = [Float](repeating: 0, count: frames), fast = scalar
        signal.withUnsafeBufferPointer { s in
            FractionalDelay.processScalar(input: s.baseAddress! + history, output: &scalar, frames: frames,
                                          startDelaySamples: start, endDelaySamples: end)
            FractionalDelay.process(input: s.baseAddress! + history, output: &fast, frames: frames,
                                    startDelaySamples: start, endDelaySamples: end)
        }
        #expect(maximumDifference(scalar, fast) < Self.tolerance)
    }

    @Test func integerDelayIsExact() {
        var noise = WhiteNoise(seed: 3)
        let signal = noise.samples(64)
        var out = [Float](repeating: 0, count: 32)
        signal.withUnsafeBufferPointer { s in
            FractionalDelay.processScalar(input: s.baseAddress! + 16, output: &out, frames: 32,
                                          startDelaySamples: 5, endDelaySamples: 5)
        }
        let exact = out == Array(signal[11..<43])
        #expect(exact)
    }

    @Test func fractionalDelayInterpolatesASlowSine() {
        // Half a sample of delay on a low sine must land between the samples.
        let n = 256
        let signal = (0..<n).map { Float(sin(Double($0) * 0.05)) }
        var out = [Float](repeating: 0, count: 100)
        signal.withUnsafeBufferPointer { s in
            FractionalDelay.process(input: s.baseAddress! + 100, output: &out, frames: 100,
                                    startDelaySamples: 2.5, endDelaySamples: 2.5)
        }
        for i in 0..<100 {
            let expected = Float(sin((Double(100 + i) - 2.5) * 0.05))
            #expect(abs(out[i] - expected) < 1e-5)
        }
    }

    @Test func crossfadeAndAddFastMatchScalar() {
        var noise = WhiteNoise(seed: 11)
        for frames in [7, 128, 133] {
            let a = noise.samples(frames), b = noise.samples(frames), base = noise.samples(frames)
            var scalar = base, fast = base
            Mixing.crossfadeAddScalar(from: a, to: b, into: &scalar, frames: frames)
            Mixing.crossfadeAdd(from: a, to: b, into: &fast, frames: frames)
            #expect(maximumDifference(scalar, fast) < Self.tolerance)
            // The crossfade ends exactly on the new signal.
            #expect(abs(scalar[frames - 1] - (base[frames - 1] + b[frames - 1])) < Self.tolerance)
            var plainScalar = base, plainFast = base
            Mixing.addScalar(a, into: &plainScalar, frames: frames)
            Mixing.add(a, into: &plainFast, frames: frames)
            let same = plainScalar == plainFast
            #expect(same)
        }
    }

    @Test func sumOfSquaresFastMatchesScalar() {
        var noise = WhiteNoise(seed: 12)
        // Lengths through every branch: the 16-wide loop, the 8-wide rest, the scalar tail.
        for frames in [0, 5, 8, 16, 27, 256] {
            let x = noise.samples(frames)
            let scalar = Mixing.sumOfSquaresScalar(x, frames: frames), fast = Mixing.sumOfSquares(x, frames: frames)
            #expect(abs(scalar - fast) <= 1e-5 * max(1, scalar))
            #expect(frames == 0 || scalar > 0)
            // The same measured while copying: every sample copied, the same sum.
            var copy = [Float](repeating: .nan, count: frames)
            let copied = Mixing.copySummingSquares(x, to: &copy, frames: frames)
            #expect(copy == x)
            #expect(abs(scalar - copied) <= 1e-5 * max(1, scalar))
        }
    }
}
