import Foundation
import Testing
import SceneSoundDSP

/// The late reverb on its own: it decays in the time it claims, and the two ears get the
/// same energy at every frequency.
@Suite struct LateReverbTests {
    static let rateHz = 48000.0

    static func render(_ send: [Float], room: Room) -> (left: [Float], right: [Float]) {
        let reverb = LateReverb(room: room, sampleRateHz: rateHz, maximumFrames: 256)
        var left = [Float](repeating: 0, count: send.count), right = left
        var n = 0
        while n < send.count {
            let frames = min(256, send.count - n)
            send.withUnsafeBufferPointer { s in
                left.withUnsafeMutableBufferPointer { l in
                    right.withUnsafeMutableBufferPointer { r in
                        reverb.process(send: s.baseAddress! + n, left: l.baseAddress! + n, right: r.baseAddress! + n,
                                       frames: frames)
                    }
                }
            }
            n += frames
        }
        return (left, right)
    }

    /// T30 from the Schroeder integral of the impulse response (both ears), against the
    /// room's decay time.
    @Test(arguments: [Room.small, .medium])
    func itDecaysInItsDecayTime(room: Room) {
        var impulse = [Float](repeating: 0, count: Int(3 * Self.rateHz))
        impulse[0] = 1
        let out = Self.render(impulse, room: room)
        var remaining = [Double](repeating: 0, count: impulse.count)
        var sum = 0.0
        for i in stride(from: impulse.count - 1, through: 0, by: -1) {
            sum += Double(out.left[i] * out.left[i] + out.right[i] * out.right[i])
            remaining[i] = sum
        }
        func time(atDecibels level: Double) -> Double {
            Double(remaining.firstIndex { 10 * log10($0 / remaining[0]) < level }!) / Self.rateHz
        }
        let t30 = 2 * (time(atDecibels: -35) - time(atDecibels: -5))
        let expected = LateReverb(room: room, sampleRateHz: Self.rateHz, maximumFrames: 1).tailSeconds
        print("room \(room): T30 \(String(format: "%.3f", t30)) s (decay time \(expected) s)")
        #expect(abs(t30 - expected) <= 0.15 * expected)
    }

    /// A steady tone through the reverb alone: equal energy in both ears (within 0.1 dB)
    /// at every third octave, though the ears' signals differ. M and S turn at 3 and 10 Hz,
    /// so their cross-terms in each ear beat at 7 and 13 Hz: over whole seconds they cancel.
    @Test(arguments: [Room.small, .medium])
    func bothEarsGetTheSameEnergyAtEveryFrequency(room: Room) {
        var worst = 0.0
        for f in [100.0, 160, 250, 400, 630, 1000, 1600, 2500, 4000, 6300, 8000] {
            let tone = (0..<Int(3 * Self.rateHz)).map { Float(sin(2 * .pi * f * Double($0) / Self.rateHz)) }
            let out = Self.render(tone, room: room)
            let start = Int(1 * Self.rateHz)
            let difference = CueAnalysis.ildDecibels(left: Array(out.left[start...]), right: Array(out.right[start...]))
            worst = max(worst, abs(difference))
            #expect(abs(difference) <= 0.1, "room \(room), \(f) Hz: the ears' reverb differs by \(difference) dB")
        }
        print("room \(room): largest interaural difference of the reverb of a tone \(String(format: "%.3f", worst)) dB")
    }
}
