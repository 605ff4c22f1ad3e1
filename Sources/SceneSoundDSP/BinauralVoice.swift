// One mono source rendered binaurally: gain → low-pass → per-ear minimum-phase HRTF filter
// with the ear's onset delay (the ITD) folded in, applied in the frequency domain through the
// shared SpectralVoiceMix (which sums every voice and transforms back once). Every change of
// direction past the threshold fades from the old filters (and delays) to the new ones across
// the span, and the gain glides, so a moving source never clicks.
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
    /// From the head's centre: nearer than the set's measurement distance, the filters get the
    /// near-field corrections (NearField).
    public var distanceMetres: Double

    public init(azimuthDegrees: Double, elevationDegrees: Double, gain: Float, lowpassCoefficient: Float = 1,
                distanceMetres: Double = .infinity) {
        self.azimuthDegrees = azimuthDegrees
        self.elevationDegrees = elevationDegrees
        self.gain = gain
        self.lowpassCoefficient = lowpassCoefficient
        self.distanceMetres = distanceMetres
    }
}

public final class BinauralVoice {
    public let hrtf: HRTFSet
    /// Frames per render call: the mix's span.
    public let partitionFrames: Int
    private let size: Int
    /// The input after gain and low-pass. The transform reads `size` samples from
    /// `windowOffset`, the newest span last; each span moves the window on by a span, and
    /// only when it reaches the end is the history moved back to the start (so the window the
    /// mix may still hold stays untouched until the next span).
    private let buffer: UnsafeMutablePointer<Float>
    private let bufferLength: Int
    @exclusivity(unchecked) private var windowOffset = 0
    /// Filter spectra as SpectralVoiceMix lays them out.
    @exclusivity(unchecked) private var filters: (current: UnsafeMutablePointer<Float>, next: UnsafeMutablePointer<Float>)
    @exclusivity(unchecked) private var lowpass = OnePoleLowpass()
    @exclusivity(unchecked) private var state: BinauralTarget?
    /// The direction the current filters were interpolated for.
    @exclusivity(unchecked) private var filterDirection: (azimuthDegrees: Double, elevationDegrees: Double) = (0, 0)
    /// The distance they were made for (the near-field corrections depend on it).
    @exclusivity(unchecked) private var filterDistanceMetres = Double.infinity
    /// How far a source may move before its filters and delays are re-interpolated (and
    /// crossfaded).
    @exclusivity(unchecked) public var filterUpdateThresholdDegrees = 1.0

    /// `partitionFrames`: the span of the SpectralVoiceMix it will render into.
    public init(hrtf: HRTFSet, partitionFrames: Int) {
        self.hrtf = hrtf
        self.partitionFrames = partitionFrames
        size = SpectralVoiceMix.transformSize(partitionFrames: partitionFrames, taps: hrtf.filterTaps,
                                              maximumDelaySamples: hrtf.maximumDelaySamples)
        func buffer(_ count: Int) -> UnsafeMutablePointer<Float> {
            let p = UnsafeMutablePointer<Float>.allocate(capacity: count)
            p.initialize(repeating: 0, count: count)
            return p
        }
        bufferLength = 2 * size
        self.buffer = buffer(bufferLength)
        let spectra = 4 * (size / 2 + 8)
        filters = (buffer(spectra), buffer(spectra))
    }

    deinit {
        for p in [buffer, filters.current, filters.next] { p.deallocate() }
    }

    /// Forgets all past audio and position: the next render starts from silence at its target.
    public func reset() {
        buffer.update(repeating: 0, count: bufferLength)
        windowOffset = 0
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
        mix.prepareFilters(hrtf, azimuthDegrees: target.azimuthDegrees, elevationDegrees: target.elevationDegrees,
                           distanceMetres: target.distanceMetres, into: filters.current)
        filterDirection = (target.azimuthDegrees, target.elevationDegrees)
        filterDistanceMetres = target.distanceMetres
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
        // Filters and delays follow once the direction has drifted far enough from theirs to
        // matter (1°: at most 12 µs of ITD), which spares most crossfades of a slowly moving
        // source (at 90°/s a 256-frame span moves 0.48°).
        let refilter = Self.hasMoved(from: filterDirection, to: (target.azimuthDegrees, target.elevationDegrees),
                                     degrees: filterUpdateThresholdDegrees)
            || Self.nearFieldChanged(from: filterDistanceMetres, to: target.distanceMetres,
                                     measurementDistanceMetres: hrtf.measurementDistanceMetres)

        // Gain ramp and low-pass into the newest span of the window.
        let history = size - frames
        if windowOffset + size > bufferLength {
            buffer.update(from: buffer + windowOffset, count: history)
            windowOffset = 0
        }
        let window = buffer + windowOffset
        let x = window + history
        if let source {
            Self.ramp(source, into: x, frames: frames, from: start.gain, to: target.gain)
        } else {
            x.update(repeating: 0, count: frames)
        }
        lowpass.process(x, frames: frames, targetCoefficient: target.lowpassCoefficient)

        if refilter {
            mix.prepareFilters(hrtf, azimuthDegrees: target.azimuthDegrees, elevationDegrees: target.elevationDegrees,
                               distanceMetres: target.distanceMetres, into: filters.next)
            filterDirection = (target.azimuthDegrees, target.elevationDegrees)
            filterDistanceMetres = target.distanceMetres
        }
        mix.accumulate(window: window, current: filters.current, next: refilter ? filters.next : nil)

        if refilter { filters = (current: filters.next, next: filters.current) }
        state = target
        windowOffset += frames
    }

    /// out[n] = input[n] · (from + (to − from)·(n + 1)/frames), eight samples a step.
    static func ramp(_ input: UnsafePointer<Float>, into out: UnsafeMutablePointer<Float>, frames: Int,
                     from: Float, to: Float) {
        let step = (to - from) / Float(frames)
        var gain = SIMD8<Float>(1, 2, 3, 4, 5, 6, 7, 8) * step + from
        let stride = SIMD8<Float>(repeating: 8 * step)
        let x = UnsafeRawPointer(input), y = UnsafeMutableRawPointer(out), f = MemoryLayout<Float>.stride
        var n = 0
        while n + 8 <= frames {
            y.storeBytes(of: x.loadUnaligned(fromByteOffset: n &* f, as: SIMD8<Float>.self) * gain, toByteOffset: n &* f,
                         as: SIMD8<Float>.self)
            gain += stride
            n &+= 8
        }
        while n < frames { out[n] = input[n] * (from + step * Float(n + 1)); n += 1 }
    }

    /// Whether a source moved far enough in distance, near the head, for its near-field
    /// corrections to change: 2 % (0.2 dB of the inverse distance law; the corrections change
    /// less).
    static func nearFieldChanged(from a: Double, to b: Double, measurementDistanceMetres far: Double) -> Bool {
        if a >= far && b >= far { return false }
        return abs(min(a, far) - min(b, far)) > 0.02 * min(a, b, far)
    }

    /// Whether two directions are at least `threshold` degrees apart. Most calls are for a
    /// source that moved a fraction of a degree: the angle is at most |Δelevation| +
    /// |Δazimuth| (along the elevation, then along the parallel), which needs no trigonometry.
    static func hasMoved(from a: (Double, Double), to b: (Double, Double), degrees threshold: Double) -> Bool {
        var azimuth = abs(a.0 - b.0).truncatingRemainder(dividingBy: 360)
        if azimuth > 180 { azimuth = 360 - azimuth }
        if azimuth + abs(a.1 - b.1) < threshold { return false }
        return angleDegrees(a, b) >= threshold
    }

    /// The angle between two directions, in degrees (exact, via the unit vectors).
    static func angleDegrees(_ a: (Double, Double), _ b: (Double, Double)) -> Double {
        if a == b { return 0 }
        let u = SphericalPosition(azimuthDegrees: a.0, elevationDegrees: a.1).cartesian
        let v = SphericalPosition(azimuthDegrees: b.0, elevationDegrees: b.1).cartesian
        return degrees(acos(max(-1, min(1, u.dot(v)))))
    }
}
