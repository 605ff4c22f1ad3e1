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

    private let delayLine: UnsafeMutablePointer<Float>    // stereo interleaved, lookaheadFrames
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
        delayLine = .allocate(capacity: lookaheadFrames * 2)
        delayLine.initialize(repeating: 0, count: lookaheadFrames * 2)
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
        let window = lookaheadFrames
        for n in 0..<frames {
            let l = samples[2 * n], r = samples[2 * n + 1]
            let peak = max(abs(l), abs(r))
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
            let dl = delayLine[2 * delayedSlot], dr = delayLine[2 * delayedSlot + 1]
            delayLine[2 * position] = l
            delayLine[2 * position + 1] = r
            position = delayedSlot
            samples[2 * n] = dl * gain
            samples[2 * n + 1] = dr * gain
            sampleIndex += 1
        }
    }
}
