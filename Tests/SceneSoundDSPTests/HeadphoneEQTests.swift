import Foundation
import SceneSoundDSP
import Testing

/// AutoEQ's ParametricEQ.txt as the parser reads it, and the cookbook biquads it becomes.
@Suite struct HeadphoneEQTests {
    static let autoEQ = """
        Preamp: -6.4 dB
        Filter 1: ON LSC Fc 105 Hz Gain 5.2 dB Q 0.70
        Filter 2: ON PK Fc 2637 Hz Gain -3.8 dB Q 1.41
        Filter 3: OFF PK Fc 5000 Hz Gain 2.0 dB Q 2.00
        Filter 4: ON HSC Fc 10000 Hz Gain -1.4 dB Q 0.70\r

        # a comment
        """

    @Test func readsAutoEQsFileAndLeavesOffFiltersOut() throws {
        let eq = try ParametricEQ(parsing: Self.autoEQ)
        #expect(eq.preampDecibels == -6.4)
        #expect(eq.filters == [
            .init(shape: .lowShelf, frequencyHz: 105, gainDecibels: 5.2, q: 0.7),
            .init(shape: .peaking, frequencyHz: 2637, gainDecibels: -3.8, q: 1.41),
            .init(shape: .highShelf, frequencyHz: 10000, gainDecibels: -1.4, q: 0.7),
        ])
    }

    @Test(arguments: [
        ("Preamp: -6.4 dB\nFilter 1: ON PK Fc 1000 Hz Gain 6 dB Q\n", 2, "expected 'Filter N: ON|OFF PK|LSC|HSC Fc F Hz Gain G dB Q Q'"),
        ("Filter 1: ON PK Fc 1000 Hz Gain 6 dB Q 1\nFilter 2: ON BP Fc 1000 Hz Gain 6 dB Q 1\n", 2, "filter type 'BP' is not supported (accepted: PK, LSC, HSC)"),
        ("Filter 1: ON PK Fc 1k Hz Gain 6 dB Q 1\n", 1, "Fc '1k' is not a number"),
        ("\n\nFilter 1: MAYBE PK Fc 1000 Hz Gain 6 dB Q 1\n", 3, "'MAYBE' is not ON or OFF"),
        ("Filter 1: ON PK Fc 1000 Hz Gain 60 dB Q 1\n", 1, "Gain 60 dB is out of range (accepted: -30.0 to 30.0 dB)"),
        ("Preamp: loud\n", 1, "expected 'Preamp: G dB'"),
        ("Preamp: -1 dB\nPreamp: -2 dB\n", 2, "a second Preamp line"),
        ("GraphicEQ: 20 -1; 40 0\n", 1, "expected 'Preamp: G dB' or 'Filter N:"),
    ])
    func refusesAMalformedLineNamingIt(text: String, line: Int, expected: String) {
        do {
            _ = try ParametricEQ(parsing: text)
            Issue.record("accepted: \(text)")
        } catch {
            #expect(error.line == line)
            #expect(error.description.hasPrefix("line \(line): "))
            #expect(error.message.contains(expected), "\(error)")
        }
    }

    /// The cookbook's sections reach their gain where they should: a peak at its centre, a
    /// shelf far on its side (and half its gain at the corner).
    @Test func cookbookBiquadsHaveTheirGainsWhereTheyShould() {
        let rate = 48000.0
        let peak = BiquadCoefficients(.peaking, frequencyHz: 1000, gainDecibels: 6, q: 1.41, sampleRateHz: rate)
        #expect(abs(peak.magnitudeDecibels(atHz: 1000, sampleRateHz: rate) - 6) < 1e-9)
        #expect(abs(peak.magnitudeDecibels(atHz: 50, sampleRateHz: rate)) < 0.05)
        #expect(abs(peak.magnitudeDecibels(atHz: 15000, sampleRateHz: rate)) < 0.05)
        let low = BiquadCoefficients(.lowShelf, frequencyHz: 105, gainDecibels: 5.2, q: 0.7, sampleRateHz: rate)
        #expect(abs(low.magnitudeDecibels(atHz: 10, sampleRateHz: rate) - 5.2) < 0.05)
        #expect(abs(low.magnitudeDecibels(atHz: 105, sampleRateHz: rate) - 2.6) < 0.01)
        #expect(abs(low.magnitudeDecibels(atHz: 5000, sampleRateHz: rate)) < 0.05)
        let high = BiquadCoefficients(.highShelf, frequencyHz: 5000, gainDecibels: -4, q: 0.7, sampleRateHz: rate)
        #expect(abs(high.magnitudeDecibels(atHz: 20000, sampleRateHz: rate) + 4) < 0.1)
        #expect(abs(high.magnitudeDecibels(atHz: 5000, sampleRateHz: rate) + 2) < 0.01)
        #expect(abs(high.magnitudeDecibels(atHz: 100, sampleRateHz: rate)) < 0.05)
    }

    /// The filter as it runs on samples: a 1 kHz tone through a +6 dB peak at 1 kHz comes out
    /// 6 dB louder (the preamp applied too).
    @Test func theFilterRunsTheCascadeOnSamples() throws {
        let eq = try ParametricEQ(parsing: "Preamp: -2 dB\nFilter 1: ON PK Fc 1000 Hz Gain 6 dB Q 1.41\n")
        let filter = try HeadphoneEQFilter(eq, sampleRateHz: 48000)
        let frames = 48000
        var left: [Float] = (0..<frames).map { n -> Float in Float(0.25 * sin(2 * Double.pi * 1000 * Double(n) / 48000)) }
        let input = left
        var right = left
        filter.process(&left, ear: 0, frames: frames)
        filter.process(&right, ear: 1, frames: frames)
        func rms(_ x: [Float]) -> Double { (x[24000...].reduce(0) { $0 + Double($1) * Double($1) } / 24000).squareRoot() }
        let gain = 20 * log10(rms(left) / rms(input))
        #expect(abs(gain - 4) < 0.01, "\(gain) dB")
        #expect(left == right)
    }

    @Test func aFrequencyTheRateCannotCarryIsRefused() throws {
        let eq = try ParametricEQ(parsing: "Filter 1: ON HSC Fc 20000 Hz Gain 3 dB Q 0.7\n")
        #expect(throws: ParametricEQError.self) { try HeadphoneEQFilter(eq, sampleRateHz: 32000) }
        _ = try HeadphoneEQFilter(eq, sampleRateHz: 48000)
    }

    /// Without an EQ the stage passes the audio bit-exact; switching fades, and the filter it
    /// replaced comes back to be freed elsewhere.
    @Test func theStageIsBitExactWithoutAnEQAndRetiresWhatItReplaced() throws {
        let stage = HeadphoneEqualizer(sampleRateHz: 48000, maximumFrames: 256)
        var left = (0..<256).map { Float($0) / 256 }, right = left.reversed() as [Float]
        let (l0, r0) = (left, right)
        stage.process(left: &left, right: &right, frames: 256)
        #expect(left == l0 && right == r0)
        let eq = try ParametricEQ(parsing: "Filter 1: ON PK Fc 1000 Hz Gain 6 dB Q 1.41\n")
        let first = try HeadphoneEQFilter(eq, sampleRateHz: 48000)
        stage.use(first)
        #expect(stage.takeRetired() == nil)
        for _ in 0..<4 { stage.process(left: &left, right: &right, frames: 256) }
        stage.use(nil)
        for _ in 0..<4 { stage.process(left: &left, right: &right, frames: 256) }
        #expect(stage.takeRetired() === first)
        #expect(stage.takeRetired() == nil)
        left = l0; right = r0
        stage.process(left: &left, right: &right, frames: 256)
        #expect(left == l0 && right == r0)
    }
}
