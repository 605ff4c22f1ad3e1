// The third-order ambisonic bus: every source that is not worth a per-source HRTF voice is
// delayed per ear (its ITD) and encoded into that ear's field (16 gains a sample each); the
// two fields are rotated into the head's frame once per sub-block and each decoded once per
// block by 16 FIRs with its ear's filters. Its cost is two short delays and two encodes per
// source plus a fixed rotate and decode, against two 128-tap HRTF convolutions (and their
// crossfades) per source on the voice path.
//
// All memory is allocated in init; everything else is real-time safe.

public enum AmbisonicDecodeKernel {
    /// leftOutput[t] += Σ_a (left[a] ∗ filter[a, left ear])[t], and the same for the right
    /// ear from its own field. Each field channel holds taps − 1 samples of history then
    /// `frames` new ones, channels `channelStride` apart; filters as in
    /// AmbisonicDecodeFilters. `scratch` holds `frames` floats. The reference.
    public static func decodeScalar(left: UnsafePointer<Float>, right: UnsafePointer<Float>, channelStride: Int,
                                    frames: Int, reversedFilters: UnsafePointer<Float>, taps: Int,
                                    scratch: UnsafeMutablePointer<Float>,
                                    leftOutput: UnsafeMutablePointer<Float>, rightOutput: UnsafeMutablePointer<Float>) {
        for a in 0..<SphericalHarmonics.channelCount {
            for (ear, field, output) in [(0, left, leftOutput), (1, right, rightOutput)] {
                FIRKernel.convolveScalar(input: field + a * channelStride, reversedTaps: reversedFilters + (a * 2 + ear) * taps,
                                         taps: taps, output: scratch, frames: frames)
                Mixing.addScalar(scratch, into: output, frames: frames)
            }
        }
    }

    /// The same with the SIMD kernels.
    public static func decode(left: UnsafePointer<Float>, right: UnsafePointer<Float>, channelStride: Int,
                              frames: Int, reversedFilters: UnsafePointer<Float>, taps: Int,
                              scratch: UnsafeMutablePointer<Float>,
                              leftOutput: UnsafeMutablePointer<Float>, rightOutput: UnsafeMutablePointer<Float>) {
        for a in 0..<SphericalHarmonics.channelCount {
            FIRKernel.convolve(input: left + a * channelStride, reversedTaps: reversedFilters + (a * 2) * taps, taps: taps,
                               output: scratch, frames: frames)
            Mixing.add(scratch, into: leftOutput, frames: frames)
            FIRKernel.convolve(input: right + a * channelStride, reversedTaps: reversedFilters + (a * 2 + 1) * taps,
                               taps: taps, output: scratch, frames: frames)
            Mixing.add(scratch, into: rightOutput, frames: frames)
        }
    }
}

public final class AmbisonicBus {
    public let maximumFrames: Int
    public let taps: Int
    private let channels = SphericalHarmonics.channelCount
    private let filters: UnsafeMutablePointer<Float>
    /// Per ear, the field in world orientation for the current block, `maximumFrames` per channel.
    private let world: (UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>)
    /// Per ear, the field in the head's frame: taps − 1 samples of history, then the block.
    private let head: (UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>)
    private let headStride: Int
    /// Each ear's delayed input, and a second one for the delay's glide.
    private let delayed: (UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>)
    private let rotator = AmbisonicRotator()
    private var matrices: (start: UnsafeMutablePointer<Float>, end: UnsafeMutablePointer<Float>)
    private var matrixIsCurrent = false
    private var encodedThisBlock = false
    /// Frames of the head-frame history that may still be non-zero (the decoder rings out).
    private var ringingFrames = 0

    public init(filters design: AmbisonicDecodeFilters, maximumFrames: Int) {
        self.maximumFrames = maximumFrames
        taps = design.taps
        headStride = taps - 1 + maximumFrames
        func buffer(_ count: Int) -> UnsafeMutablePointer<Float> {
            let p = UnsafeMutablePointer<Float>.allocate(capacity: count)
            p.initialize(repeating: 0, count: count)
            return p
        }
        let filters = buffer(design.reversedFilters.count)
        design.reversedFilters.withUnsafeBufferPointer { filters.update(from: $0.baseAddress!, count: $0.count) }
        self.filters = filters
        world = (buffer(channels * maximumFrames), buffer(channels * maximumFrames))
        head = (buffer(channels * headStride), buffer(channels * headStride))
        delayed = (buffer(maximumFrames), buffer(maximumFrames))
        matrices = (buffer(AmbisonicRotationKernel.matrixCount), buffer(AmbisonicRotationKernel.matrixCount))
    }

    deinit {
        for p in [filters, world.0, world.1, head.0, head.1, delayed.0, delayed.1, matrices.start, matrices.end] {
            p.deallocate()
        }
    }

    /// Whether the bus did (or still must do) any work this block.
    public var isActive: Bool { encodedThisBlock || ringingFrames > 0 }

    /// Clears the fields for a block of `frames` (≤ maximumFrames).
    public func beginBlock(frames: Int) {
        precondition(frames <= maximumFrames)
        if encodedThisBlock {
            world.0.update(repeating: 0, count: channels * maximumFrames)
            world.1.update(repeating: 0, count: channels * maximumFrames)
        }
        encodedThisBlock = false
    }

    /// Adds one source channel's sub-block at `offset`: `direction` from the head's position
    /// in world orientation (DESIGN.md's axes), `delays` each ear's onset delay in samples for
    /// the head-relative direction (HRTFSet.delays), `gain` its level. Gains and delays glide
    /// from where the voice left them.
    public func encode(_ voice: AmbisonicBusVoice, input: UnsafePointer<Float>, frames: Int, offset: Int,
                       direction: Vector3, delays: (left: Float, right: Float), gain: Float,
                       lowpassCoefficient: Float = 1) {
        let target = gain == 0 ? SIMD16<Float>() : SphericalHarmonics.sn3d(direction) * gain
        let start = voice.gains
        if !voice.started {
            voice.delays = delays
            voice.started = true
        }
        let startDelays = voice.delays
        voice.gains = target
        voice.delays = delays
        // The delay lines' input, low-passed.
        let x = voice.input + voice.historyLength
        x.update(from: input, count: frames)
        voice.lowpass.process(x, frames: frames, targetCoefficient: lowpassCoefficient)
        defer { voice.input.update(from: voice.input + frames, count: voice.historyLength) }
        if target == SIMD16<Float>() && start == SIMD16<Float>() { return }

        if !encodedThisBlock {
            // beginBlock left the fields untouched while nothing was encoded.
            if ringingFrames <= 0 { matrixIsCurrent = false }
            encodedThisBlock = true
        }
        // (Written out per ear: a loop over an array literal would allocate.)
        delay(x, frames: frames, from: startDelays.left, to: delays.left)
        AmbisonicEncoderKernel.encode(input: delayed.0, frames: frames, from: start, to: target,
                                      bus: world.0 + offset, channelStride: maximumFrames)
        delay(x, frames: frames, from: startDelays.right, to: delays.right)
        AmbisonicEncoderKernel.encode(input: delayed.0, frames: frames, from: start, to: target,
                                      bus: world.1 + offset, channelStride: maximumFrames)
    }

    /// One ear's delayed input into `delayed.0`: a changing delay is rendered at both ends and
    /// crossfaded, which keeps both passes on FractionalDelay's constant-delay fast path.
    private func delay(_ x: UnsafeMutablePointer<Float>, frames: Int, from: Float, to: Float) {
        FractionalDelay.process(input: x, output: delayed.0, frames: frames, startDelaySamples: from, endDelaySamples: from)
        guard to != from else { return }
        FractionalDelay.process(input: x, output: delayed.1, frames: frames, startDelaySamples: to, endDelaySamples: to)
        let a = delayed.0, b = delayed.1
        let inverse = 1 / Float(frames)
        for t in 0..<frames { a[t] += (b[t] - a[t]) * (Float(t + 1) * inverse) }
    }

    /// Rotates the sub-block at `offset` into the head's frame, gliding from the previous
    /// sub-block's orientation to `orientation` (reached at its last frame).
    public func rotate(offset: Int, frames: Int, orientation: Quaternion) {
        guard isActive else { return }
        if !matrixIsCurrent {
            rotator.matrix(for: orientation, into: matrices.start)
            matrixIsCurrent = true
        }
        rotator.matrix(for: orientation, into: matrices.end)
        rotate(world.0 + offset, into: head.0 + (taps - 1) + offset, frames: frames)
        rotate(world.1 + offset, into: head.1 + (taps - 1) + offset, frames: frames)
        matrices = (start: matrices.end, end: matrices.start)
    }

    private func rotate(_ field: UnsafeMutablePointer<Float>, into output: UnsafeMutablePointer<Float>, frames: Int) {
        if encodedThisBlock {
            AmbisonicRotationKernel.rotate(input: field, inputStride: maximumFrames, output: output, outputStride: headStride,
                                           frames: frames, from: matrices.start, to: matrices.end)
        } else {
            for a in 0..<channels { (output + a * headStride).update(repeating: 0, count: frames) }
        }
    }

    /// Decodes the block into `left` and `right` (adding), then keeps the history.
    public func decode(frames: Int, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>) {
        guard isActive else { return }
        AmbisonicDecodeKernel.decode(left: head.0, right: head.1, channelStride: headStride, frames: frames,
                                     reversedFilters: filters, taps: taps, scratch: delayed.0,
                                     leftOutput: left, rightOutput: right)
        for a in 0..<channels {
            (head.0 + a * headStride).update(from: head.0 + a * headStride + frames, count: taps - 1)
            (head.1 + a * headStride).update(from: head.1 + a * headStride + frames, count: taps - 1)
        }
        ringingFrames = encodedThisBlock ? taps : ringingFrames - frames
    }
}
