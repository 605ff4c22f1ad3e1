// One mono source rendered binaurally: gain → low-pass → per-ear fractional delay (the ITD,
// in the time domain, gliding across the span) → per-ear minimum-phase HRTF filter, applied
// in the frequency domain through the shared SpectralVoiceMix (which sums every voice and
// transforms back once). Every change of direction past the threshold fades from the old
// filters to the new ones across the span, and the delays and gain glide linearly, so a
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
    /// Frames per render call: the mix's span.
    public let partitionFrames: Int
    private let size: Int
    /// Past input samples kept for the delay lines (largest delay + interpolator reach).
    private let historyLength: Int

    private let input: UnsafeMutablePointer<Float>          // historyLength + partitionFrames
    /// Per ear, the delayed input: the transform's `size` samples, the newest span last.
    private let ears: (left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>)
    /// Filter spectra as SpectralVoiceMix lays them out.
    private var filters: (current: UnsafeMutablePointer<Float>, next: UnsafeMutablePointer<Float>)
    private var lowpass = OnePoleLowpass()
    private var state: BinauralTarget?
    /// The direction the current filters were interpolated for.
    private var filterDirection: (azimuthDegrees: Double, elevationDegrees: Double) = (0, 0)
    /// How far a source may move before its filters are re-interpolated (and crossfaded).
    public var filterUpdateThresholdDegrees = 1.0
    private var delays: (left: Float, right: Float) = (0, 0)

    /// `partitionFrames`: the span of the SpectralVoiceMix it will render into.
    public init(hrtf: HRTFSet, partitionFrames: Int) {
        self.hrtf = hrtf
        self.partitionFrames = partitionFrames
        size = SpectralVoiceMix.transformSize(partitionFrames: partitionFrames, taps: hrtf.filterTaps)
        historyLength = Int(hrtf.maximumDelaySamples.rounded(.up)) + 4
        func buffer(_ count: Int) -> UnsafeMutablePointer<Float> {
            let p = UnsafeMutablePointer<Float>.allocate(capacity: count)
            p.initialize(repeating: 0, count: count)
            return p
        }
        input = buffer(historyLength + partitionFrames)
        ears = (buffer(size), buffer(size))
        let spectra = 4 * (size / 2 + 8)
        filters = (buffer(spectra), buffer(spectra))
    }

    deinit {
        for p in [input, ears.left, ears.right, filters.current, filters.next] { p.deallocate() }
    }

    /// Forgets all past audio and position: the next render starts from silence at its target.
    public func reset() {
        input.update(repeating: 0, count: historyLength + partitionFrames)
        ears.left.update(repeating: 0, count: size)
        ears.right.update(repeating: 0, count: size)
        lowpass.reset()
        state = nil
    }

    /// Forgets all past audio and starts silent at `target`'s direction: the next render
    /// fades in from gain 0 there.
    public func reset(startingAt target: BinauralTarget, mix: SpectralVoiceMix) {
        reset()
        var silent = target
        silent.gain = 0
        start(at: silent, mix: mix)
    }

    private func start(at target: BinauralTarget, mix: SpectralVoiceMix) {
        delays = mix.prepareFilters(hrtf, azimuthDegrees: target.azimuthDegrees, elevationDegrees: target.elevationDegrees,
                                    into: filters.current)
        filterDirection = (target.azimuthDegrees, target.elevationDegrees)
        state = target
    }

    /// Renders one span (`partitionFrames` mono samples) towards `target` into `mix`. Pass nil
    /// input for silence (a source that has ended keeps ringing out through its filters).
    public func render(input source: UnsafePointer<Float>?, target: BinauralTarget, into mix: SpectralVoiceMix) {
        precondition(mix.partitionFrames == partitionFrames && mix.size == size && mix.taps == hrtf.filterTaps)
        let frames = partitionFrames
        // First span: start at the target, so that a sound's attack is reproduced as it is.
        if state == nil { start(at: target, mix: mix) }
        let start = state!
        // The delays follow every move; the filters only once the direction has drifted far
        // enough from theirs to matter, which spares most crossfades of a slowly moving source
        // (at 90°/s a 256-frame span moves 0.48°).
        let refilter = Self.angleDegrees(filterDirection, (target.azimuthDegrees, target.elevationDegrees))
            >= filterUpdateThresholdDegrees

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
            endDelays = mix.prepareFilters(hrtf, azimuthDegrees: target.azimuthDegrees,
                                           elevationDegrees: target.elevationDegrees, into: filters.next)
            filterDirection = (target.azimuthDegrees, target.elevationDegrees)
        } else if start.azimuthDegrees != target.azimuthDegrees || start.elevationDegrees != target.elevationDegrees {
            endDelays = hrtf.delays(azimuthDegrees: target.azimuthDegrees, elevationDegrees: target.elevationDegrees)
        } else {
            endDelays = delays
        }
        let history = size - frames
        FractionalDelay.process(input: x, output: ears.left + history, frames: frames,
                                startDelaySamples: delays.left, endDelaySamples: endDelays.left)
        FractionalDelay.process(input: x, output: ears.right + history, frames: frames,
                                startDelaySamples: delays.right, endDelaySamples: endDelays.right)
        mix.accumulate(left: ears.left, right: ears.right, current: filters.current, next: refilter ? filters.next : nil)

        if refilter { filters = (current: filters.next, next: filters.current) }
        delays = endDelays
        state = target
        // Keep the tails for the next span.
        ears.left.update(from: ears.left + frames, count: history)
        ears.right.update(from: ears.right + frames, count: history)
        input.update(from: input + frames, count: historyLength)
    }

    /// The angle between two directions, in degrees (exact, via the unit vectors).
    static func angleDegrees(_ a: (Double, Double), _ b: (Double, Double)) -> Double {
        if a == b { return 0 }
        let u = SphericalPosition(azimuthDegrees: a.0, elevationDegrees: a.1).cartesian
        let v = SphericalPosition(azimuthDegrees: b.0, elevationDegrees: b.1).cartesian
        return degrees(acos(max(-1, min(1, u.dot(v)))))
    }
}
