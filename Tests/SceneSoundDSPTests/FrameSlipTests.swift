import Foundation
import Testing
@testable import SceneSoundDSP

/// A span slipped by a frame is the same sound read a little faster or slower: a tone in it
/// matches the tone read at the slipped positions, both ends exactly where they were.
@Suite struct FrameSlipTests {
    @Test(arguments: [1, -1], [1_000.0, 8_000.0])
    func aSlippedToneIsTheToneReadAtTheSlippedPositions(change: Int, hertz: Double) {
        let frames = 240, channels = 2, rate = 48_000.0
        func tone(_ position: Double) -> Float { Float(0.5 * sin(2 * Double.pi * hertz * position / rate)) }
        let input = (0 ..< frames * channels).map { tone(Double($0 / channels)) }
        let before = [tone(-1), tone(-1)]
        var output = [Float](repeating: .nan, count: (frames + change) * channels)
        FrameSlip.resample(input, frames: frames, channels: channels, before: before, change: change, into: &output)
        let step = Double(frames - 1) / Double(frames + change - 1)
        var worst: Float = 0
        for j in 0 ..< frames + change {
            for channel in 0 ..< channels { worst = max(worst, abs(output[j * channels + channel] - tone(Double(j) * step))) }
        }
        #expect(output[0] == input[0] && output[1] == input[1])
        #expect(output[(frames + change - 1) * channels] == input[(frames - 1) * channels])
        // Four-point Lagrange, at worst mid-span: −80 dB re the tone at 1 kHz, −28 dB at 8 kHz
        // (for the 5 ms a slip takes).
        let bound: Float = hertz < 2_000 ? 0.5e-4 : 0.02
        #expect(worst < bound, "largest error \(worst) at \(hertz) Hz")
    }
}
