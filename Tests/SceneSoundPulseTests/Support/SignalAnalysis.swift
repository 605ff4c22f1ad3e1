import Foundation

/// Measurements on one channel of recorded interleaved stereo audio.
struct ChannelAnalysis {
    let samples: [Float]
    let rateHz: Double

    init(interleaved: [Float], channel: Int, rateHz: Int) {
        samples = stride(from: channel, to: interleaved.count, by: 2).map { interleaved[$0] }
        self.rateHz = Double(rateHz)
    }

    var rms: Double {
        guard !samples.isEmpty else { return 0 }
        return (samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(samples.count)).squareRoot()
    }

    /// Frequency from upward zero crossings, interpolated between samples, first to last.
    var zeroCrossingFrequencyHz: Double {
        var crossings: [Double] = []
        for index in 1 ..< samples.count where samples[index - 1] < 0 && samples[index] >= 0 {
            let before = Double(samples[index - 1]), after = Double(samples[index])
            crossings.append(Double(index - 1) + (-before) / (after - before))
        }
        guard crossings.count >= 2 else { return 0 }
        return Double(crossings.count - 1) * rateHz / (crossings.last! - crossings.first!)
    }

    /// Amplitude of the component at `frequencyHz` (Goertzel). Over a whole number of
    /// periods, a clean sine of amplitude A gives A; gaps or clicks give less.
    func toneAmplitude(atFrequencyHz frequencyHz: Double) -> Double {
        let coefficient = 2 * cos(2 * Double.pi * frequencyHz / rateHz)
        var previous = 0.0, beforePrevious = 0.0
        for sample in samples {
            let current = Double(sample) + coefficient * previous - beforePrevious
            beforePrevious = previous
            previous = current
        }
        let power = previous * previous + beforePrevious * beforePrevious - coefficient * previous * beforePrevious
        return 2 * power.squareRoot() / Double(samples.count)
    }
}
