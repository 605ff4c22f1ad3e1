// One mono source rendered binaurally: gain → low-pass → per-ear fractional delay → per-ear
// minimum-phase HRTF filter, accumulated into a stereo bus. Every change of direction is
// rendered through the old and the new filters and crossfaded over the whole block
// (the engine's blocks are at least 128 frames), the delays and gain glide linearly, so a
// moving source never clicks.
//
// All memory is allocated in init; `render` is real-time safe.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

public struct BinauralTarget: Equatable, Sendable {
    public var azimuthDegrees: Double
    public var elevationDegrees: Double
    public var gain: Float
    /// Low-pass coefficient from OnePoleLowpass.coefficient (1 = none).
    public var lowpassCoefficient: Float

    public init(azimuthDegrees: Double, elevationDegrees: Double, gain: Float, lowpassCoefficient: Float = 1) {
        self.azimuthDegrees = azimuthDegrees
        self.elevationDegrees = elevationDegrees
        self.gain = gain
        self.lowpassCoefficient = lowpassCoefficient
    }
}

public final class BinauralVoice {
    public let hrtf: HRTFSet
    public let maximumFrames: Int
    private let taps: Int
    /// Past input samples kept for the delay lines (largest delay + interpolator reach).
    private let historyLength: Int

    private let input: UnsafeMutablePointer<Float>          // historyLength + maximumFrames
    private let delayed: (UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>)  // taps − 1 + maximumFrames
    private var filters: (current: Filters, next: Filters)
    private let scratch: (old: UnsafeMutablePointer<Float>, new: UnsafeMutablePointer<Float>)  // maximumFrames
    private var lowpass = OnePoleLowpass()
    private var state: BinauralTarget?
    /// The direction the current filters were interpolated for.
    private var filterDirection: (azimuthDegrees: Double, elevationDegrees: Double) = (0, 0)
    /// How far a source may move before its filters are re-interpolated (and crossfaded).
    public var filterUpdateThresholdDegrees = 1.0
    private var delays: (left: Float, right: Float) = (0, 0)

    private struct Filters {
        let left: UnsafeMutablePointer<Float>
        let right: UnsafeMutablePointer<Float>
    }

    private let kernels: RenderKernels

    public init(hrtf: HRTFSet, maximumFrames: Int, kernels: RenderKernels = .portable) {
        self.hrtf = hrtf
        self.kernels = kernels
        self.maximumFrames = maximumFrames
        taps = hrtf.filterTaps
        historyLength = Int(hrtf.maximumDelaySamples.rounded(.up)) + 4
        func buffer(_ count: Int) -> UnsafeMutablePointer<Float> {
            let p = UnsafeMutablePointer<Float>.allocate(capacity: count)
            p.initialize(repeating: 0, count: count)
            return p
        }
        input = buffer(historyLength + maximumFrames)
        delayed = (buffer(taps - 1 + maximumFrames), buffer(taps - 1 + maximumFrames))
        filters = (Filters(left: buffer(taps), right: buffer(taps)), Filters(left: buffer(taps), right: buffer(taps)))
        scratch = (buffer(maximumFrames), buffer(maximumFrames))
    }

    deinit {
        for p in [input, delayed.0, delayed.1, filters.current.left, filters.current.right,
                  filters.next.left, filters.next.right, scratch.old, scratch.new] { p.deallocate() }
    }

    /// Forgets all past audio and position: the next render starts from silence at its target.
    public func reset() {
        input.update(repeating: 0, count: historyLength + maximumFrames)
        delayed.0.update(repeating: 0, count: taps - 1 + maximumFrames)
        delayed.1.update(repeating: 0, count: taps - 1 + maximumFrames)
        lowpass.reset()
        state = nil
    }

    /// Renders `frames` (≤ maximumFrames) mono samples towards `target`, adding the result to
    /// `left` and `right`. Pass nil input for silence (a source that has ended keeps ringing
    /// out through its filters).
    public func render(input source: UnsafePointer<Float>?, frames: Int, target: BinauralTarget,
                       left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>) {
        precondition(frames > 0 && frames <= maximumFrames)
        let start: BinauralTarget
        var refilter = false
        if let state {
            start = state
            // The delays follow every move; the filters only once the direction has drifted
            // far enough from theirs to matter, which spares most crossfades of a slowly
            // moving source (at 90°/s a sub-block moves 0.24°).
            refilter = Self.angleDegrees(filterDirection, (target.azimuthDegrees, target.elevationDegrees))
                >= filterUpdateThresholdDegrees
        } else {
            // First block: start at the target, so that a sound's attack is reproduced as it is.
            delays = hrtf.interpolate(azimuthDegrees: target.azimuthDegrees, elevationDegrees: target.elevationDegrees,
                                      reversedLeft: filters.current.left, reversedRight: filters.current.right)
            filterDirection = (target.azimuthDegrees, target.elevationDegrees)
            start = target
        }

        // Gain ramp and low-pass into the input history.
        let x = input + historyLength
        if let source {
            let step = (target.gain - start.gain) / Float(frames)
            for n in 0..<frames { x[n] = source[n] * (start.gain + step * Float(n + 1)) }
        } else {
            x.update(repeating: 0, count: frames)
        }
        lowpass.process(x, frames: frames, targetCoefficient: target.lowpassCoefficient)

        let endDelays: (left: Float, right: Float)
        if refilter {
            endDelays = hrtf.interpolate(azimuthDegrees: target.azimuthDegrees, elevationDegrees: target.elevationDegrees,
                                         reversedLeft: filters.next.left, reversedRight: filters.next.right)
            filterDirection = (target.azimuthDegrees, target.elevationDegrees)
        } else if start.azimuthDegrees != target.azimuthDegrees || start.elevationDegrees != target.elevationDegrees {
            endDelays = hrtf.delays(azimuthDegrees: target.azimuthDegrees, elevationDegrees: target.elevationDegrees)
        } else {
            endDelays = delays
        }
        renderEar(x, frames: frames, delayed: delayed.0, from: delays.left, to: endDelays.left,
                  current: filters.current.left, next: refilter ? filters.next.left : nil, output: left)
        renderEar(x, frames: frames, delayed: delayed.1, from: delays.right, to: endDelays.right,
                  current: filters.current.right, next: refilter ? filters.next.right : nil, output: right)

        if refilter { filters = (current: filters.next, next: filters.current) }
        delays = endDelays
        state = target
        // Keep the tails for the next block.
        input.update(from: input + frames, count: historyLength)
    }

    /// The angle between two directions, in degrees (exact, via the unit vectors).
    static func angleDegrees(_ a: (Double, Double), _ b: (Double, Double)) -> Double {
        if a == b { return 0 }
        let u = SphericalPosition(azimuthDegrees: a.0, elevationDegrees: a.1).cartesian
        let v = SphericalPosition(azimuthDegrees: b.0, elevationDegrees: b.1).cartesian
        return degrees(acos(max(-1, min(1, u.dot(v)))))
    }

    private func renderEar(_ x: UnsafeMutablePointer<Float>, frames: Int, delayed: UnsafeMutablePointer<Float>,
                           from startDelay: Float, to endDelay: Float,
                           current: UnsafeMutablePointer<Float>, next: UnsafeMutablePointer<Float>?,
                           output: UnsafeMutablePointer<Float>) {
        let history = taps - 1
        FractionalDelay.process(input: x, output: delayed + history, frames: frames,
                                startDelaySamples: startDelay, endDelaySamples: endDelay)
        kernels.convolve(delayed, current, taps, scratch.old, frames)
        if let next {
            // Crossfade from the old filter's output to the new one's over the whole block.
            kernels.convolve(delayed, next, taps, scratch.new, frames)
            Mixing.crossfadeAdd(from: scratch.old, to: scratch.new, into: output, frames: frames)
        } else {
            Mixing.add(scratch.old, into: output, frames: frames)
        }
        delayed.update(from: delayed + frames, count: history)
    }
}
