import Foundation
import SceneSoundDSP
import SceneSoundEngine
import Testing

/// The headphone EQ on what the engine renders: after the binaural stage, handed over through
/// the command queue, switched while a tone plays without a click.
@Suite struct HeadphoneEQRenderTests {
    static let rateHz = 48000.0

    static func filter(_ text: String) throws -> HeadphoneEQFilter {
        try HeadphoneEQFilter(try ParametricEQ(parsing: text), sampleRateHz: rateHz)
    }

    /// A mono tone at 30° left through the engine; `switchAt`: seconds into the render at which
    /// `.setHeadphoneEQ(eq)` is pushed (0: before the first block). Returns both ears.
    static func render(tone frequencyHz: Double, seconds: Double, eq: HeadphoneEQFilter?, switchAt: Double = 0)
        -> (left: [Float], right: [Float])
    {
        let configuration = EngineConfiguration(sampleRateHz: rateHz, blockFrames: 256, room: .none)
        let engine = Engine(hrtf: KEMAR.set, configuration: configuration)
        let frames = Int(seconds * rateHz)
        let tone = (0..<frames).map { Float(0.25 * sin(2 * Double.pi * frequencyHz * Double($0) / rateHz)) }
        let ring = AudioRing(capacityFrames: frames, channelCount: 1)
        _ = tone.withUnsafeBufferPointer { ring.write($0.baseAddress!, frames: frames) }
        let input = RingInput(ring: ring)
        let source = RenderSource(input: input, channelCount: 1, mode: .anchored,
                                  channelPositions: [SphericalPosition(azimuthDegrees: 30, distanceMetres: 1).cartesian],
                                  gain: 1, hrtf: KEMAR.set, maximumFrames: configuration.blockFrames)
        engine.renderer.governor.simulatedLoadFraction = 0
        let stream = EngineStream(id: 1, source: source, input: input, sceneIndex: 0)
        #expect(engine.commands.push(.addStream(stream)))
        engine.commands.push(.placeScene(index: 0, position: source.channelPositions[0], widthMetres: 0))
        var left: [Float] = [], right: [Float] = []
        var block = [Float](repeating: 0, count: 512)
        var switched = false
        while left.count < frames {
            if !switched && Double(left.count) >= switchAt * rateHz {
                #expect(engine.commands.push(.setHeadphoneEQ(eq)))
                switched = true
            }
            engine.render(into: &block)
            for n in 0..<256 { left.append(block[2 * n]); right.append(block[2 * n + 1]) }
            while engine.events.pop() != nil {}
        }
        return (left, right)
    }

    /// Amplitude of `frequencyHz` in x[range] (a whole number of periods).
    static func amplitude(_ x: [Float], frequencyHz: Double, range: Range<Int>) -> Double {
        var re = 0.0, im = 0.0
        for n in range {
            let phase = 2 * Double.pi * frequencyHz * Double(n) / rateHz
            re += Double(x[n]) * cos(phase)
            im += Double(x[n]) * sin(phase)
        }
        return 2 * (re * re + im * im).squareRoot() / Double(range.count)
    }

    @Test func aSixDecibelPeakAtOneKilohertzRaisesOneKilohertzBySixDecibels() throws {
        let eq = try Self.filter("Preamp: 0 dB\nFilter 1: ON PK Fc 1000 Hz Gain 6.0 dB Q 1.41\n")
        let plain = Self.render(tone: 1000, seconds: 1, eq: nil)
        let equalized = Self.render(tone: 1000, seconds: 1, eq: eq)
        let steady = 24000..<48000  // 24 000 samples: 500 whole periods
        for (name, a, b) in [("left", plain.left, equalized.left), ("right", plain.right, equalized.right)] {
            let gain = 20 * log10(Self.amplitude(b, frequencyHz: 1000, range: steady) / Self.amplitude(a, frequencyHz: 1000, range: steady))
            print("headphone EQ +6 dB PK at 1 kHz, \(name) ear at 1 kHz: \(String(format: "%+.3f", gain)) dB")
            #expect(abs(gain - 6) <= 0.2)
        }
        // Away from the peak the response is untouched (within the bell's skirt at 100 Hz).
        let low = Self.render(tone: 100, seconds: 1, eq: eq), lowPlain = Self.render(tone: 100, seconds: 1, eq: nil)
        let lowGain = 20 * log10(Self.amplitude(low.left, frequencyHz: 100, range: steady)
                                 / Self.amplitude(lowPlain.left, frequencyHz: 100, range: steady))
        #expect(abs(lowGain) < 0.2, "\(lowGain) dB at 100 Hz")
    }

    /// Switching while a tone plays fades: no sample-to-sample jump beyond what the tone itself
    /// has (third difference, as the motion tests measure clicks), and no silent run.
    @Test func switchingWhileAToneIsPlayingHasNoClick() throws {
        let eq = try Self.filter("Preamp: -3 dB\nFilter 1: ON PK Fc 500 Hz Gain 9 dB Q 0.7\n")
        let plain = Self.render(tone: 500, seconds: 1, eq: nil)
        let switched = Self.render(tone: 500, seconds: 1, eq: eq, switchAt: 0.5)
        let reference = MotionTests.discontinuity(plain.left)
        let measured = MotionTests.discontinuity(switched.left)
        print("headphone EQ switched mid-tone: discontinuity \(measured) (static \(reference))")
        #expect(measured < 2 * reference)
        var run = 0, longest = 0
        for s in switched.left[4800...] { run = abs(s) < 1e-6 ? run + 1 : 0; longest = max(longest, run) }
        #expect(longest < 3)
    }
}
