// A light late reverb for externalisation. Sounds rendered only through HRTFs tend to sit
// inside the head; a faint, decorrelated diffuse tail moves them out. Fed with a mono send,
// returns stereo.
//
// It must not move sources. A tone meets a reverb's response at one frequency. A reverb
// built from delay-line loops (an FDN) has a response full of modal peaks and dips,
// different in each ear, and a tone leans by several dB towards the ear that sits on a
// peak (noise averages it away). Here every part has a flat magnitude response by
// construction — chains of Schroeder allpass sections — and the ears get left = M + S,
// right = M − S: M common to both, S the decorrelating part. One effect remains that no
// static design escapes: the wet sound interferes with the tone's direct sound D, |D + M ± S|,
// by a different amount in each ear, which leans a tone wherever D is weak (a notch of the
// ear's response). So M and S are each turned against the direct sound,
// M = M₁·cos ω₁t + M₂·sin ω₁t and S = S₁·cos ω₂t + S₂·sin ω₂t from four independent allpass
// tails: their phases pass through every value, the cross-terms average out, and each ear's
// energy is the direct sound's plus the reverb's, the same reverb energy in both ears at
// every frequency. S turns at 10 Hz, faster than the binaural system follows level
// differences (a few Hz): what remains within 50 ms (up to 2.5 dB for a tone ahead) changes
// too fast to be heard as movement, where at 1.5 Hz a tone swung by up to 6 dB. M, which
// holds the low frequencies, turns at 3 Hz, so that the tails of low tones are detuned by no
// more than that.
//
// S is high-passed: at low frequencies the ears of a real head in a diffuse field hear
// nearly the same signal (their coherence falls to about zero by 700 Hz). The send is
// filtered by the HRTF set's diffuse-field response (DiffuseFieldResponse), as a real
// diffuse field reaches the ear canal, and by a fixed low-pass for the room's darker sound
// (real rooms absorb high frequencies faster).

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

public enum Room: String, CaseIterable, Sendable {
    case none, small, medium

    struct Parameters {
        /// RT60 of the tail.
        var decaySeconds: Double
        /// Each ear's reverb energy against the send's (through the diffuse-field response),
        /// above the S high-pass and below the damping.
        var wetDecibels: Double
        var preDelaySeconds: Double
        /// The corner of the send's second-order low-pass: the tail's high-frequency roll-off,
        /// steep enough that the reverb does not fill the deep high-frequency shadow of the
        /// far ear (20 dB at 8 kHz for a source at 30°) and with it flatten level differences.
        var dampingHz: Double
        /// The decay sections of the M₁, M₂, S₁ and S₂ tails; their gains follow the decay time.
        var tailDelaysSeconds: [[Double]]
    }

    /// The short sections every tail shares, which thicken the echoes first.
    static let diffuserDelaysSeconds = [0.00131, 0.00217, 0.00353, 0.00509]
    static let diffuserGain = 0.62
    static let seriesDecayFactor = 0.74
    /// How fast M and S turn against the direct sound (different, so that they also turn
    /// against each other).
    static let midRotationHz = 3.0, sideRotationHz = 10.0
    /// Where the ears' reverb turns from common (below) to decorrelated (above).
    static let decorrelationCornerHz = 700.0

    var parameters: Parameters? {
        switch self {
        case .none: return nil
        case .small:
            return Parameters(decaySeconds: 0.35, wetDecibels: -16, preDelaySeconds: 0.006, dampingHz: 4000,
                              tailDelaysSeconds: [[0.0119, 0.0173, 0.0269], [0.0131, 0.0197, 0.0293],
                                                  [0.0109, 0.0181, 0.0251], [0.0127, 0.0163, 0.0311]])
        case .medium:
            return Parameters(decaySeconds: 0.7, wetDecibels: -14, preDelaySeconds: 0.012, dampingHz: 3500,
                              tailDelaysSeconds: [[0.0191, 0.0287, 0.0413], [0.0217, 0.0311, 0.0457],
                                                  [0.0173, 0.0263, 0.0379], [0.0203, 0.0337, 0.0431]])
        }
    }
}

public final class LateReverb {
    public let room: Room
    public let maximumFrames: Int
    /// Seconds after the input stops until the tail is 60 dB down.
    public let tailSeconds: Double

    /// One Schroeder allpass section, v[n] = x[n] + g·v[n−M], y[n] = v[n−M] − g·v[n]: its
    /// transfer function (z^−M − g) / (1 − g·z^−M) has magnitude 1 at every frequency.
    private struct Section {
        var line: UnsafeMutablePointer<Float>
        var length: Int
        var position: Int
        var gain: Float
    }

    /// The diffuse-field filter, time-reversed; the send with the filter's history before it.
    private let earFilter: UnsafeMutablePointer<Float>
    private let earFilterTaps: Int
    private let earInput: UnsafeMutablePointer<Float>
    private let earOutput: UnsafeMutablePointer<Float>
    /// Another set's diffuse-field filter (time-reversed), faded to over the next block, and
    /// the send through it (`crossfadeDiffuseField`).
    private let nextEarFilter: UnsafeMutablePointer<Float>
    private let nextEarOutput: UnsafeMutablePointer<Float>
    @exclusivity(unchecked) private var fadesToNextEarFilter = false
    private let preDelay: UnsafeMutablePointer<Float>
    private let preDelayLength: Int
    @exclusivity(unchecked) private var preDelayPosition = 0
    private let dampingCoefficient: Float
    @exclusivity(unchecked) private var dampingState: SIMD2<Float> = [0, 0]
    /// The diffusers, then the four tails, `tailLength` sections each.
    private let sections: UnsafeMutablePointer<Section>
    private let sectionCount: Int
    private let diffuserCount: Int
    private let tailLength: Int
    private let storage: UnsafeMutablePointer<Float>
    /// (cos, sin) of ω₁t and ω₂t, turned by their steps each sample.
    @exclusivity(unchecked) private var midRotation: SIMD2<Float> = [1, 0], sideRotation: SIMD2<Float> = [1, 0]
    private let midStep: SIMD2<Float>, sideStep: SIMD2<Float>
    /// S's second-order Butterworth high-pass (direct form I).
    private let highpass: (b0: Float, b1: Float, b2: Float, a1: Float, a2: Float)
    @exclusivity(unchecked) private var highpassState: (x1: Float, x2: Float, y1: Float, y2: Float) = (0, 0, 0, 0)
    /// Applied to M and to S: each ear gets two flat tails' worth of energy.
    private let wetGain: Float

    /// `diffuseField`: the ears' diffuse-field response (DiffuseFieldResponse.filter), in
    /// natural order, a multiple of 8 taps; none leaves the send unfiltered.
    public init(room: Room, sampleRateHz: Double, maximumFrames: Int, diffuseField: [Float]? = nil) {
        self.room = room
        self.maximumFrames = maximumFrames
        let p = room.parameters ?? Room.Parameters(decaySeconds: 0, wetDecibels: -.infinity, preDelaySeconds: 0,
                                                   dampingHz: .infinity, tailDelaysSeconds: [[], [], [], []])
        tailSeconds = p.decaySeconds
        wetGain = room == .none ? 0 : Decibels.linearGain(p.wetDecibels) / Float(2).squareRoot()

        let response = diffuseField ?? [1, 0, 0, 0, 0, 0, 0, 0]
        precondition(response.count % 8 == 0)
        earFilterTaps = response.count
        earFilter = .allocate(capacity: earFilterTaps)
        for t in 0..<earFilterTaps { earFilter[t] = response[earFilterTaps - 1 - t] }
        earInput = .allocate(capacity: earFilterTaps - 1 + maximumFrames)
        earInput.initialize(repeating: 0, count: earFilterTaps - 1 + maximumFrames)
        earOutput = .allocate(capacity: maximumFrames)
        earOutput.initialize(repeating: 0, count: maximumFrames)
        nextEarFilter = .allocate(capacity: earFilterTaps)
        nextEarFilter.initialize(repeating: 0, count: earFilterTaps)
        nextEarOutput = .allocate(capacity: maximumFrames)
        nextEarOutput.initialize(repeating: 0, count: maximumFrames)
        preDelayLength = max(1, Int(p.preDelaySeconds * sampleRateHz))
        preDelay = .allocate(capacity: preDelayLength)
        preDelay.initialize(repeating: 0, count: preDelayLength)
        dampingCoefficient = OnePoleLowpass.coefficient(cutoffHz: p.dampingHz, sampleRateHz: sampleRateHz)

        precondition(p.tailDelaysSeconds.count == 4 && Set(p.tailDelaysSeconds.map(\.count)).count == 1)
        let diffusers = room == .none ? [] : Room.diffuserDelaysSeconds
        diffuserCount = diffusers.count
        tailLength = p.tailDelaysSeconds[0].count
        let delays = diffusers + p.tailDelaysSeconds.flatMap { $0 }
        let lengths = delays.map { max(1, Int(($0 * sampleRateHz).rounded())) }
        sectionCount = delays.count
        storage = .allocate(capacity: max(1, lengths.reduce(0, +)))
        storage.initialize(repeating: 0, count: max(1, lengths.reduce(0, +)))
        sections = .allocate(capacity: max(1, sectionCount))
        var offset = 0
        for (i, (seconds, length)) in zip(delays, lengths).enumerated() {
            // Each tail section loses 60 dB over the same time, whatever its length; three
            // in series ring longer than each alone (their responses convolve), hence the
            // shorter design time (measured: T30 within 5 % of the decay time).
            let sectionDecaySeconds = p.decaySeconds * Room.seriesDecayFactor
            let gain = i < diffuserCount ? Room.diffuserGain : pow(10, -3 * seconds / sectionDecaySeconds)
            (sections + i).initialize(to: Section(line: storage + offset, length: length, position: 0, gain: Float(gain)))
            offset += length
        }
        func step(_ hz: Double) -> SIMD2<Float> {
            let w = 2 * Double.pi * hz / sampleRateHz
            return [Float(cos(w)), Float(sin(w))]
        }
        midStep = step(Room.midRotationHz)
        sideStep = step(Room.sideRotationHz)

        // Bilinear-transform Butterworth high-pass, Q = 1/√2.
        let k = tan(Double.pi * Room.decorrelationCornerHz / sampleRateHz)
        let q = 1 / 2.0.squareRoot()
        let norm = 1 / (1 + k / q + k * k)
        highpass = (Float(norm), Float(-2 * norm), Float(norm),
                    Float(2 * (k * k - 1) * norm), Float((1 - k / q + k * k) * norm))
    }

    deinit {
        earFilter.deallocate()
        earInput.deallocate()
        earOutput.deallocate()
        nextEarFilter.deallocate()
        nextEarOutput.deallocate()
        preDelay.deallocate()
        sections.deinitialize(count: sectionCount)
        sections.deallocate()
        storage.deallocate()
    }

    @inline(__always)
    private func chain(_ input: Float, from first: Int, count: Int) -> Float {
        var x = input
        for i in first..<(first + count) {
            let s = sections + i
            let delayed = s.pointee.line[s.pointee.position]
            let v = x + s.pointee.gain * delayed
            s.pointee.line[s.pointee.position] = v
            x = delayed - s.pointee.gain * v
            let next = s.pointee.position + 1
            s.pointee.position = next == s.pointee.length ? 0 : next
        }
        return x
    }

    @inline(__always)
    private static func turn(_ phasor: SIMD2<Float>, by step: SIMD2<Float>) -> SIMD2<Float> {
        [phasor.x * step.x - phasor.y * step.y, phasor.y * step.x + phasor.x * step.y]
    }

    /// From the next `process` call on, the send is heard through `response` (another set's
    /// diffuse-field response, natural order, as many taps as this reverb's), faded to across it.
    /// Real-time safe: the taps are copied. A reverb made without a response keeps none.
    public func crossfadeDiffuseField(to response: UnsafeBufferPointer<Float>) {
        guard room != .none, response.count == earFilterTaps else { return }
        for t in 0..<earFilterTaps { nextEarFilter[t] = response[earFilterTaps - 1 - t] }
        fadesToNextEarFilter = true
    }

    /// Adds the reverb of `send` (mono) to `left` and `right`. Real-time safe.
    public func process(send: UnsafePointer<Float>, left: UnsafeMutablePointer<Float>,
                        right: UnsafeMutablePointer<Float>, frames: Int) {
        guard room != .none else { return }
        precondition(frames <= maximumFrames)
        let history = earFilterTaps - 1
        (earInput + history).update(from: send, count: frames)
        FIRKernel.convolve(input: earInput, reversedTaps: earFilter, taps: earFilterTaps, output: earOutput, frames: frames)
        if fadesToNextEarFilter {
            // The send through both filters, faded across the block (same input: the two are
            // correlated, so the shares sum to one); the new filter from then on.
            FIRKernel.convolve(input: earInput, reversedTaps: nextEarFilter, taps: earFilterTaps, output: nextEarOutput,
                               frames: frames)
            for n in 0..<frames {
                let g = Float(n + 1) / Float(frames)
                earOutput[n] += g * (nextEarOutput[n] - earOutput[n])
            }
            earFilter.update(from: nextEarFilter, count: earFilterTaps)
            fadesToNextEarFilter = false
        }
        earInput.update(from: earInput + frames, count: history)

        let h = highpass
        var hs = highpassState
        var damped = dampingState
        var mid = midRotation, side = sideRotation
        let tails = diffuserCount, length = tailLength
        for n in 0..<frames {
            let x = preDelay[preDelayPosition]
            preDelay[preDelayPosition] = earOutput[n]
            preDelayPosition = preDelayPosition + 1 == preDelayLength ? 0 : preDelayPosition + 1
            damped.x += dampingCoefficient * (x - damped.x)
            damped.y += dampingCoefficient * (damped.x - damped.y)

            let diffused = chain(damped.y, from: 0, count: tails)
            let m = chain(diffused, from: tails, count: length) * mid.x
                + chain(diffused, from: tails + length, count: length) * mid.y
            let raw = chain(diffused, from: tails + 2 * length, count: length) * side.x
                + chain(diffused, from: tails + 3 * length, count: length) * side.y
            mid = Self.turn(mid, by: midStep)
            side = Self.turn(side, by: sideStep)
            let s = h.b0 * raw + h.b1 * hs.x1 + h.b2 * hs.x2 - h.a1 * hs.y1 - h.a2 * hs.y2
            hs = (raw, hs.x1, s, hs.y1)
            left[n] += wetGain * (m + s)
            right[n] += wetGain * (m - s)
        }
        highpassState = hs
        dampingState = damped
        // Back onto the unit circle against rounding.
        midRotation = mid / (mid * mid).sum().squareRoot()
        sideRotation = side / (side * side).sum().squareRoot()
    }
}
