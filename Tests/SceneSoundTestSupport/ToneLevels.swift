import Foundation

/// How loud one tone is, window by window, in an interleaved float recording: the magnitude of
/// its DFT bin over each window (the channels named summed as power). A tone with whole cycles
/// in a window is read without leakage from others that also have whole cycles; a gap in it
/// is a window where its level falls. Built optimised (Package.swift): minutes of recording
/// are read per test.
public enum ToneLevels {
    public static func perWindow(_ interleaved: [Float], channelCount: Int, channels: [Int], hertz: Double, rateHz: Int,
                                 windowFrames: Int, skippingFrames: Int = 0) -> [Double] {
        let step = 2 * Double.pi * hertz / Double(rateHz)
        let cosines = (0 ..< windowFrames).map { cos(step * Double($0)) }
        let sines = (0 ..< windowFrames).map { sin(step * Double($0)) }
        let frames = max(0, interleaved.count / channelCount - skippingFrames)
        let windows = frames / windowFrames
        return interleaved.withUnsafeBufferPointer { samples in
            (0 ..< windows).map { w in
                var power = 0.0
                for channel in channels {
                    var re = 0.0, im = 0.0
                    var at = (skippingFrames + w * windowFrames) * channelCount + channel
                    for n in 0 ..< windowFrames {
                        let sample = Double(samples[at])
                        re += sample * cosines[n]
                        im += sample * sines[n]
                        at += channelCount
                    }
                    power += re * re + im * im
                }
                return power.squareRoot()
            }
        }
    }
}
