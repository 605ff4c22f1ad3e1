// The third-order ambisonic bus: every source that is not worth a per-source HRTF voice is
// delayed per ear (its ITD, in whole samples) and encoded into that ear's field (16 gains a
// sample each); the two fields are rotated into the head's frame once per sub-block and each
// decoded once per block by 16 FIRs with its ear's filters. A source costs 32 multiply-adds a
// sample — every source of a span is summed into the fields in one register-blocked pass
// (EncodeTerms, AmbisonicEncoderKernel.encodeSum) — plus a fixed rotate and decode, against
// two 128-tap HRTF convolutions (and their crossfades) per source on the voice path.
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
                              leftOutput: UnsafeMutablePointer<Float>, rightOutput: UnsafeMutablePointer<Float>,
                              kernels: RenderKernels = .portable) {
        for a in 0..<SphericalHarmonics.channelCount {
            kernels.convolve(left + a * channelStride, reversedFilters + (a * 2) * taps, taps, scratch, frames)
            Mixing.add(scratch, into: leftOutput, frames: frames)
            kernels.convolve(right + a * channelStride, reversedFilters + (a * 2 + 1) * taps, taps, scratch, frames)
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
    /// Per ear, the sources encoded into the current sub-block, added to the field together.
    @exclusivity(unchecked) private var terms: (EncodeTerms, EncodeTerms)
    @exclusivity(unchecked) private var termsOffset = 0
    @exclusivity(unchecked) private var termsFrames = 0
    /// Scratch for the decoder.
    private let scratch: UnsafeMutablePointer<Float>
    private let rotator = AmbisonicRotator()
    @exclusivity(unchecked) private var matrices: (start: UnsafeMutablePointer<Float>, end: UnsafeMutablePointer<Float>)
    @exclusivity(unchecked) private var matrixIsCurrent = false
    @exclusivity(unchecked) private var encodedThisBlock = false
    /// Frames of the head-frame history that may still be non-zero (the decoder rings out).
    @exclusivity(unchecked) private var ringingFrames = 0

    private let kernels: RenderKernels

    /// `maximumTerms`: sources held per ear before their sum is taken (each sum is a pass over
    /// the field; the terms' inputs are read in every channel's pass, from the cache while
    /// they are few).
    public init(filters design: AmbisonicDecodeFilters, maximumFrames: Int, maximumTerms: Int = 512,
                kernels: RenderKernels = .portable) {
        self.maximumFrames = maximumFrames
        self.kernels = kernels
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
        func ear() -> EncodeTerms {
            EncodeTerms(capacity: maximumTerms, glidingCapacity: min(maximumTerms, 64), maximumFrames: maximumFrames)
        }
        terms = (ear(), ear())
        scratch = buffer(maximumFrames)
        matrices = (buffer(AmbisonicRotationKernel.matrixCount), buffer(AmbisonicRotationKernel.matrixCount))
    }

    deinit {
        for p in [filters, world.0, world.1, head.0, head.1, scratch, matrices.start, matrices.end] {
            p.deallocate()
        }
        terms.0.deallocate()
        terms.1.deallocate()
    }

    /// The ratios of a new level correction to the one in use that keep the old (±0.25 dB).
    static let heldLevelRange: ClosedRange<Float> = 0.9716...1.0292

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

    /// Adds one source channel's sub-block at `offset`: `input` with `voice.historyLength`
    /// samples of the same signal before it (read in place until the sum is taken),
    /// `direction` from the head's position in world orientation (docs/ARCHITECTURE.md's axes), `delays` each ear's onset delay in
    /// samples for the head-relative direction (HRTFSet.delays), `earLevels` each ear's level
    /// correction for it (AmbisonicDecodeFilters.earLevels), `gain` its level. Gains and delays glide
    /// from where the voice left them. The sum is taken when the sub-block is rotated.
    public func encode(_ voice: AmbisonicBusVoice, input: UnsafePointer<Float>, frames: Int, offset: Int,
                       direction: Vector3, delays: (left: Float, right: Float),
                       earLevels: (left: Float, right: Float) = (1, 1), gain: Float,
                       lowpassCoefficient: Float = 1) {
        if offset != termsOffset || frames != termsFrames { addTerms() }
        termsOffset = offset
        termsFrames = frames
        let target = gain == 0 ? SIMD16<Float>() : voice.harmonics(direction) * gain
        let start = voice.gains
        // The level corrections follow the head-relative direction, so under a turning head
        // they change in every block; a change makes each ear's term two (x and x·ramp). They
        // are held until they move by a quarter of a dB, so that a still source under a
        // moving head stays one term per ear most of the time.
        let startLevels = voice.earLevels, exactLevels = SIMD2<Float>(earLevels.left, earLevels.right)
        let ratio = exactLevels / startLevels
        let held = voice.started && all((ratio .> Self.heldLevelRange.lowerBound) .& (ratio .< Self.heldLevelRange.upperBound))
        let targetLevels = held ? startLevels : exactLevels
        voice.earLevels = targetLevels
        let newDelays = (left: voice.wholeDelay(delays.left, current: voice.delays.left),
                         right: voice.wholeDelay(delays.right, current: voice.delays.right))
        let oldDelays = voice.started ? voice.delays : newDelays
        voice.started = true
        voice.gains = target
        voice.delays = newDelays
        let x = voice.span(input, frames: frames, lowpassCoefficient: lowpassCoefficient)
        if target.isZero && start.isZero { return }

        if !encodedThisBlock {
            // beginBlock left the fields untouched while nothing was encoded.
            if ringingFrames <= 0 { matrixIsCurrent = false }
            encodedThisBlock = true
        }
        if terms.0.isFull || terms.1.isFull { addTerms() }
        if start.isLanewiseEqual(to: target) {
            // Only the ears' levels (or delays) change: each ear's gains stay the harmonics
            // times a scalar, so the glide goes into the input and the source stays one term.
            terms.0.add(x, frames: frames, from: oldDelays.left, to: newDelays.left, gains: target,
                        levels: startLevels.x, targetLevels.x)
            terms.1.add(x, frames: frames, from: oldDelays.right, to: newDelays.right, gains: target,
                        levels: startLevels.y, targetLevels.y)
            return
        }
        let (leftStart, leftTarget) = (start * startLevels.x, target * targetLevels.x)
        let (rightStart, rightTarget) = (start * startLevels.y, target * targetLevels.y)
        terms.0.add(x, frames: frames, from: oldDelays.left, to: newDelays.left, gains: leftStart, leftTarget,
                    glides: !leftStart.isLanewiseEqual(to: leftTarget))
        terms.1.add(x, frames: frames, from: oldDelays.right, to: newDelays.right, gains: rightStart, rightTarget,
                    glides: !rightStart.isLanewiseEqual(to: rightTarget))
    }

    /// Adds the held sources to the fields.
    private func addTerms() {
        terms.0.flush(into: world.0 + termsOffset, channelStride: maximumFrames, frames: termsFrames, kernels: kernels)
        terms.1.flush(into: world.1 + termsOffset, channelStride: maximumFrames, frames: termsFrames, kernels: kernels)
    }

    /// Rotates the sub-block at `offset` into the head's frame, gliding from the previous
    /// sub-block's orientation to `orientation` (reached at its last frame).
    public func rotate(offset: Int, frames: Int, orientation: Quaternion) {
        addTerms()
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
            kernels.rotate(field, maximumFrames, output, headStride, frames, matrices.start, matrices.end)
        } else {
            for a in 0..<channels { (output + a * headStride).update(repeating: 0, count: frames) }
        }
    }

    /// Decodes the block into `left` and `right` (adding), then keeps the history.
    public func decode(frames: Int, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>) {
        guard isActive else { return }
        AmbisonicDecodeKernel.decode(left: head.0, right: head.1, channelStride: headStride, frames: frames,
                                     reversedFilters: filters, taps: taps, scratch: scratch,
                                     leftOutput: left, rightOutput: right, kernels: kernels)
        for a in 0..<channels {
            (head.0 + a * headStride).update(from: head.0 + a * headStride + frames, count: taps - 1)
            (head.1 + a * headStride).update(from: head.1 + a * headStride + frames, count: taps - 1)
        }
        ringingFrames = encodedThisBlock ? taps : ringingFrames - frames
    }
}

/// One ear's sources for a span of the block, all added to the field by one
/// AmbisonicEncoderKernel.encodeSum. Each term is an input (the voice's, its delay samples
/// back) and sixteen gains. A source whose gains glide from g0 to g1 across the span becomes
/// two terms, x at g0 and x·ramp at g1 − g0 (ramp rising to 1 at the span's last frame), so
/// that gliding costs a product and a second term rather than a pass of its own over the
/// field; a change of delay fades the old reading out and the new one in the same way. When
/// only a scalar changes — an ear's level correction, its delay: a still source under a
/// turning head — the glide is folded into the input instead and the source stays one term.
struct EncodeTerms {
    let capacity: Int
    let glidingCapacity: Int
    private let maximumFrames: Int
    private let inputs: UnsafeMutablePointer<UnsafePointer<Float>>
    private let gains: UnsafeMutablePointer<Float>
    private var count = 0
    /// x·ramp for each gliding term, `maximumFrames` apart.
    private let ramped: UnsafeMutablePointer<Float>
    private var rampedCount = 0

    init(capacity: Int, glidingCapacity: Int, maximumFrames: Int) {
        self.capacity = max(capacity, 3)
        self.glidingCapacity = max(glidingCapacity, 2)
        self.maximumFrames = maximumFrames
        inputs = .allocate(capacity: self.capacity)
        gains = .allocate(capacity: self.capacity * SphericalHarmonics.channelCount)
        ramped = .allocate(capacity: self.glidingCapacity * maximumFrames)
    }

    func deallocate() {
        inputs.deallocate(); gains.deallocate(); ramped.deallocate()
    }

    /// Room for one more source (a changing delay takes three terms, two of them ramped).
    var isFull: Bool { count > capacity - 3 || rampedCount > glidingCapacity - 2 }

    /// `x`: the span after the voice's history; `glides`: start ≠ target.
    @inline(__always)
    mutating func add(_ x: UnsafePointer<Float>, frames: Int, from oldDelay: Int, to newDelay: Int,
                      gains start: SIMD16<Float>, _ target: SIMD16<Float>, glides: Bool) {
        let silent = SIMD16<Float>()
        if oldDelay != newDelay {
            if !start.isZero {
                addTerm(x - oldDelay, start)
                addTerm(ramp(x - oldDelay, frames: frames), silent - start)
            }
            if !target.isZero { addTerm(ramp(x - newDelay, frames: frames), target) }
        } else if glides {
            if !start.isZero { addTerm(x - newDelay, start) }
            addTerm(ramp(x - newDelay, frames: frames), target - start)
        } else {
            addTerm(x - newDelay, target)
        }
    }

    /// The same for gains that keep their direction, `gains` scaled from `startLevel` to
    /// `targetLevel` across the span: one term, its input the crossfade of the two readings
    /// (when the delay changes) with the level's glide, x0·l0·(1 − ramp) + x1·l1·ramp.
    @inline(__always)
    mutating func add(_ x: UnsafePointer<Float>, frames: Int, from oldDelay: Int, to newDelay: Int,
                      gains: SIMD16<Float>, levels startLevel: Float, _ targetLevel: Float) {
        if oldDelay == newDelay && startLevel == targetLevel {
            addTerm(x - newDelay, gains * targetLevel)
        } else {
            addTerm(crossfade(x - oldDelay, startLevel, x - newDelay, targetLevel, frames: frames), gains)
        }
    }

    @inline(__always)
    private mutating func addTerm(_ x: UnsafePointer<Float>, _ termGains: SIMD16<Float>) {
        inputs[count] = x
        UnsafeMutableRawPointer(gains + count * SphericalHarmonics.channelCount)
            .storeBytes(of: termGains, as: SIMD16<Float>.self)
        count += 1
    }

    /// x[t] · (t + 1) / frames into the next ramped buffer.
    private mutating func ramp(_ x: UnsafePointer<Float>, frames: Int) -> UnsafePointer<Float> {
        let out = ramped + rampedCount * maximumFrames
        rampedCount += 1
        let size = MemoryLayout<Float>.stride
        let source = UnsafeRawPointer(x), target = UnsafeMutableRawPointer(out)
        let inverse = 1 / Float(frames)
        var r = SIMD8<Float>(1, 2, 3, 4, 5, 6, 7, 8) * inverse
        let step = SIMD8<Float>(repeating: 8 * inverse)
        var t = 0
        while t + 8 <= frames {
            let v = source.loadUnaligned(fromByteOffset: t &* size, as: SIMD8<Float>.self)
            target.storeBytes(of: v * r, toByteOffset: t &* size, as: SIMD8<Float>.self)
            r += step
            t &+= 8
        }
        while t < frames { out[t] = x[t] * (Float(t + 1) * inverse); t += 1 }
        return UnsafePointer(out)
    }

    /// a[t] · ga · (1 − r) + b[t] · gb · r, r = (t + 1) / frames, into the next ramped buffer.
    private mutating func crossfade(_ a: UnsafePointer<Float>, _ ga: Float, _ b: UnsafePointer<Float>, _ gb: Float,
                                    frames: Int) -> UnsafePointer<Float> {
        let out = ramped + rampedCount * maximumFrames
        rampedCount += 1
        let size = MemoryLayout<Float>.stride
        let pa = UnsafeRawPointer(a), pb = UnsafeRawPointer(b), target = UnsafeMutableRawPointer(out)
        let inverse = 1 / Float(frames)
        var r = SIMD8<Float>(1, 2, 3, 4, 5, 6, 7, 8) * inverse
        let step = SIMD8<Float>(repeating: 8 * inverse)
        let va = SIMD8<Float>(repeating: ga), vb = SIMD8<Float>(repeating: gb)
        var t = 0
        while t + 8 <= frames {
            let xa = pa.loadUnaligned(fromByteOffset: t &* size, as: SIMD8<Float>.self) * va
            let xb = pb.loadUnaligned(fromByteOffset: t &* size, as: SIMD8<Float>.self) * vb
            target.storeBytes(of: xa + (xb - xa) * r, toByteOffset: t &* size, as: SIMD8<Float>.self)
            r += step
            t &+= 8
        }
        while t < frames {
            let xa = a[t] * ga, xb = b[t] * gb
            out[t] = xa + (xb - xa) * (Float(t + 1) * inverse)
            t += 1
        }
        return UnsafePointer(out)
    }

    mutating func flush(into field: UnsafeMutablePointer<Float>, channelStride: Int, frames: Int, kernels: RenderKernels) {
        kernels.encodeSum(inputs, gains, count, frames, field, channelStride)
        count = 0
        rampedCount = 0
    }
}

extension SIMD16 where Scalar == Float {
    /// `==` as one vector comparison: the Equatable one compares lane by lane in a loop, which
    /// at a thousand sources a block shows in the profile. The same result, lane for lane.
    @inline(__always)
    func isLanewiseEqual(to other: Self) -> Bool { all(self .== other) }

    /// Every lane zero (either sign).
    @inline(__always)
    var isZero: Bool { all(self .== Self()) }
}
