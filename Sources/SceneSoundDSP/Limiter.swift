// A look-ahead peak limiter on the master bus, so that many loud sources never clip.
//
// The gain each sample needs (threshold / peak) goes through a sliding minimum over the
// look-ahead window, an instant-attack / exponential-release envelope and a moving average
// over the same window; the audio is delayed by window − 1 samples. The average over a
// window in which every value is at most the gain a peak needs is at most that gain, so the
// output never exceeds the threshold, and the gain moves smoothly. Below the threshold the
// gain is exactly 1 and the audio passes bit-exact (only delayed).

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

public final class Limiter {
    public let thresholdAmplitude: Float
    public let lookaheadFrames: Int
    /// Output delay in frames.
    public var latencyFrames: Int { lookaheadFrames - 1 }
    private let releaseCoefficient: Float

    /// Up to this many channels, their gain linked (one gain for all: the image stays put).
    public static let maximumChannelCount = 8
    private let delayLine: UnsafeMutablePointer<Float>    // maximumChannelCount per frame, lookaheadFrames
    /// The channels the last block had: a channel that joins starts from a silent delay line.
    @exclusivity(unchecked) private var delayedChannelCount = 2
    private let required: UnsafeMutablePointer<Float>     // ring of required gains
    private let envelopeRing: UnsafeMutablePointer<Float> // ring of envelope values for the average
    private let minimumQueue: UnsafeMutablePointer<Int>   // monotonic deque of sample indices
    @exclusivity(unchecked) private var queueHead = 0, queueCount = 0
    @exclusivity(unchecked) private var position = 0
    @exclusivity(unchecked) private var sampleIndex = 0
    @exclusivity(unchecked) private var reduction: Float = 0
    @exclusivity(unchecked) private var envelopeSum: Double = 0
    @exclusivity(unchecked) private var belowUnityCount = 0
    /// The smallest gain applied since the last call to `takeMinimumGain` (for metering).
    @exclusivity(unchecked) private var minimumGain: Float = 1

    public init(sampleRateHz: Double, thresholdDecibels: Double = -1, lookaheadSeconds: Double = 0.0015,
                releaseSeconds: Double = 0.1) {
        thresholdAmplitude = Decibels.linearGain(thresholdDecibels)
        lookaheadFrames = max(2, Int(lookaheadSeconds * sampleRateHz))
        releaseCoefficient = Float(exp(-1 / (releaseSeconds * sampleRateHz)))
        delayLine = .allocate(capacity: lookaheadFrames * Self.maximumChannelCount)
        delayLine.initialize(repeating: 0, count: lookaheadFrames * Self.maximumChannelCount)
        required = .allocate(capacity: lookaheadFrames)
        required.initialize(repeating: 1, count: lookaheadFrames)
        envelopeRing = .allocate(capacity: lookaheadFrames)
        envelopeRing.initialize(repeating: 1, count: lookaheadFrames)
        minimumQueue = .allocate(capacity: lookaheadFrames)
        minimumQueue.initialize(repeating: 0, count: lookaheadFrames)
        envelopeSum = Double(lookaheadFrames)
    }

    deinit {
        delayLine.deallocate(); required.deallocate(); envelopeRing.deallocate(); minimumQueue.deallocate()
    }

    /// Returns and resets the smallest gain applied since the last call.
    public func takeMinimumGain() -> Float {
        defer { minimumGain = 1 }
        return minimumGain
    }

    /// Limits interleaved stereo in place. Real-time safe.
    public func process(interleaved samples: UnsafeMutablePointer<Float>, frames: Int) {
        process(interleaved: samples, channelCount: 2, frames: frames)
    }

    /// Limits `channelCount` (1 to 8) interleaved channels in place, one gain for all of them
    /// (from the loudest). Real-time safe.
    public func process(interleaved samples: UnsafeMutablePointer<Float>, channelCount: Int, frames: Int) {
        precondition(channelCount >= 1 && channelCount <= Self.maximumChannelCount)
        let window = lookaheadFrames, stride = Self.maximumChannelCount
        if channelCount > delayedChannelCount {
            for slot in 0..<window {
                (delayLine + slot * stride + delayedChannelCount).update(repeating: 0, count: channelCount - delayedChannelCount)
            }
        }
        delayedChannelCount = channelCount
        // Stereo (headphones, every binaural block) with its channel count a constant: the
        // per-frame loops over channels unrolled, as the stereo-only limiter was.
        let idle = passesIdleBlocks && isIdle(samples, count: channelCount * frames)
        switch (channelCount, idle) {
        case (2, true): delay(samples, channelCount: 2, frames: frames)
        case (2, false): limit(samples, channelCount: 2, frames: frames)
        case (_, true): delay(samples, channelCount: channelCount, frames: frames)
        case (_, false): limit(samples, channelCount: channelCount, frames: frames)
        }
    }

    /// Whether the limiter does nothing to this block but delay it, as most blocks: no gain
    /// reduced or still released, none required in the window, and no sample of the block over
    /// the threshold. Then the per-frame work (the sliding minimum, the envelope and its
    /// average: ~180 instructions a frame) is known to give a gain of 1 throughout.
    /// (Off in the test that compares the two paths.)
    @exclusivity(unchecked) var passesIdleBlocks = true
    /// The blocks passed so (for that test).
    @exclusivity(unchecked) private(set) var idleBlocks = 0

    private func isIdle(_ samples: UnsafeMutablePointer<Float>, count: Int) -> Bool {
        guard reduction == 0, belowUnityCount == 0 else { return false }
        // Eight lanes at a time (a scalar max does not vectorise); NaN counts for nothing, as in `limit`.
        var lanes = SIMD8<Float>(repeating: 0)
        var i = 0
        while i + 8 <= count {
            let vector = UnsafeRawPointer(samples + i).loadUnaligned(as: SIMD8<Float>.self)
            lanes = pointwiseMax(lanes, vector.replacing(with: -vector, where: vector .< 0))
            i += 8
        }
        var peak = lanes.max()
        while i < count { peak = max(peak, abs(samples[i])); i += 1 }
        guard !(peak > thresholdAmplitude) else { return false }
        var smallestRequired: Float = 1
        for slot in 0..<lookaheadFrames { smallestRequired = min(smallestRequired, required[slot]) }
        return smallestRequired == 1
    }

    /// An idle block (`isIdle`): delayed by window − 1 frames at gain 1, and the state left as
    /// `limit` would leave it — every gain required 1, so the sliding minimum holds only the
    /// newest frame, and the envelope's average is the window's.
    @inline(__always)
    private func delay(_ samples: UnsafeMutablePointer<Float>, channelCount: Int, frames: Int) {
        guard frames > 0 else { return }
        idleBlocks &+= 1
        let window = lookaheadFrames, stride = Self.maximumChannelCount
        for n in 0..<frames {
            let frame = samples + n * channelCount
            let delayedSlot = position + 1 == window ? 0 : position + 1
            let delayed = delayLine + delayedSlot * stride, entering = delayLine + position * stride
            for c in 0..<channelCount {
                entering[c] = frame[c]
                frame[c] = delayed[c]
            }
            position = delayedSlot
        }
        sampleIndex += frames
        queueHead = 0
        queueCount = 1
        minimumQueue[0] = sampleIndex - 1
        envelopeSum = Double(window)
    }

    @inline(__always)
    private func limit(_ samples: UnsafeMutablePointer<Float>, channelCount: Int, frames: Int) {
        let window = lookaheadFrames, stride = Self.maximumChannelCount
        for n in 0..<frames {
            let frame = samples + n * channelCount
            var peak: Float = 0
            for c in 0..<channelCount { peak = max(peak, abs(frame[c])) }
            let need: Float = peak > thresholdAmplitude ? thresholdAmplitude / peak : 1

            // Sliding minimum of the required gain over the last `window` samples.
            let slot = sampleIndex % window
            required[slot] = need
            while queueCount > 0 {
                let last = minimumQueue[(queueHead + queueCount - 1) % window]
                if required[last % window] >= need { queueCount -= 1 } else { break }
            }
            minimumQueue[(queueHead + queueCount) % window] = sampleIndex
            queueCount += 1
            if minimumQueue[queueHead] <= sampleIndex - window {
                queueHead = (queueHead + 1) % window
                queueCount -= 1
            }
            let windowMinimum = required[minimumQueue[queueHead] % window]

            // Instant attack, exponential release. The reduction (1 − gain) is what decays, so
            // that Float keeps its precision near unity; below 2^-20 (−120 dB) it snaps to 0
            // and the gain is exactly 1 again.
            reduction = max(1 - windowMinimum, reduction * releaseCoefficient)
            if reduction < 0x1p-20 { reduction = 0 }
            let envelope = 1 - reduction

            // Moving average of the envelope over the window.
            let leaving = envelopeRing[slot]
            if leaving < 1 { belowUnityCount -= 1 }
            if envelope < 1 { belowUnityCount += 1 }
            envelopeSum += Double(envelope) - Double(leaving)
            envelopeRing[slot] = envelope
            let gain: Float
            if belowUnityCount == 0 {
                gain = 1
                envelopeSum = Double(window)  // resynchronise: no rounding drift survives
            } else {
                gain = min(1, Float(envelopeSum / Double(window)))
            }
            minimumGain = min(minimumGain, gain)

            // Delay the audio by window − 1 samples and apply the gain.
            let delayedSlot = (position + 1) % window
            let delayed = delayLine + delayedSlot * stride, entering = delayLine + position * stride
            for c in 0..<channelCount {
                entering[c] = frame[c]
                // (delayedSlot ≠ position: the window holds at least two frames)
                frame[c] = delayed[c] * gain
            }
            position = delayedSlot
            sampleIndex += 1
        }
    }
}
