import Foundation

/// A render callback's source: a continuous sine, a different amplitude on each channel so
/// that a swapped or mis-interleaved channel shows. Counts blocks (render calls).
final class SineSource: @unchecked Sendable {
    let frequencyHz: Double
    let leftAmplitude: Float
    let rightAmplitude: Float
    private let phaseIncrement: Double
    private var phase = 0.0
    private(set) var renderedBlocks = 0

    init(frequencyHz: Double, leftAmplitude: Float, rightAmplitude: Float, rateHz: Int) {
        self.frequencyHz = frequencyHz
        self.leftAmplitude = leftAmplitude
        self.rightAmplitude = rightAmplitude
        phaseIncrement = 2 * Double.pi * frequencyHz / Double(rateHz)
    }

    func render(_ buffer: UnsafeMutablePointer<Float>, frameCount: Int) {
        for frame in 0 ..< frameCount {
            let value = Float(sin(phase))
            buffer[2 * frame] = value * leftAmplitude
            buffer[2 * frame + 1] = value * rightAmplitude
            phase += phaseIncrement
            if phase >= 2 * Double.pi { phase -= 2 * Double.pi }
        }
        renderedBlocks += 1
    }
}
