import Foundation
import SceneSoundDSP

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

    /// Amplitude of the component at `frequencyHz` (see ToneAnalysis).
    func toneAmplitude(atFrequencyHz frequencyHz: Double) -> Double {
        ToneAnalysis.amplitude(of: samples, frequencyHz: frequencyHz, sampleRateHz: rateHz)
    }
}
