import Foundation
import SceneSoundDSP
import Testing

/// Amplitude panning over loudspeakers (SpeakerPanner) and the limiter's link across channels.
@Suite struct SpeakerPannerTests {
    static func gains(_ panner: SpeakerPanner, _ azimuthDegrees: Double) -> [Float] {
        var g = [Float](repeating: .nan, count: panner.channelCount)
        g.withUnsafeMutableBufferPointer { panner.gains(azimuthDegrees: azimuthDegrees, into: $0.baseAddress!) }
        return g
    }

    /// Two speakers at ±30°: the tangent law, (gL − gR) / (gL + gR) = tan φ / tan 30°, at constant
    /// power; past the base the nearer speaker alone, behind too.
    @Test func twoSpeakersFollowTheTangentLaw() {
        let panner = SpeakerPanner.itu(channelCount: 2)
        for azimuth in stride(from: -29.0, through: 29, by: 1) {
            let g = Self.gains(panner, azimuth)
            let law = tan(azimuth * .pi / 180) / tan(30 * .pi / 180)
            #expect(abs(Double(g[0] - g[1]) / Double(g[0] + g[1]) - law) < 1e-5, "\(azimuth)°")
            #expect(abs(g[0] * g[0] + g[1] * g[1] - 1) < 1e-5)
        }
        #expect(Self.gains(panner, 0) == [Float(0.5).squareRoot(), Float(0.5).squareRoot()])
        #expect(Self.gains(panner, 60) == [1, 0])
        #expect(Self.gains(panner, 170) == [1, 0])
        #expect(Self.gains(panner, -100) == [0, 1])
        #expect(Self.gains(panner, 30) == [1, 0])
    }

    /// 5.1 and 7.1: every direction on one adjacent pair (at most two gains, both ≥ 0), at constant
    /// power, never the LFE; at a speaker's own azimuth that speaker alone, exactly.
    @Test(arguments: [6, 8])
    func surroundRingsUseAdjacentPairsAtConstantPower(channelCount: Int) {
        let panner = SpeakerPanner.itu(channelCount: channelCount)
        for azimuth in stride(from: -180.0, to: 180, by: 0.5) {
            let g = Self.gains(panner, azimuth)
            #expect(g.filter { $0 != 0 }.count <= 2 && g.allSatisfy { $0 >= 0 }, "\(azimuth)°")
            #expect(abs(g.reduce(0) { $0 + $1 * $1 } - 1) < 1e-5, "\(azimuth)°")
            #expect(g[3] == 0)
            // The pair brackets the direction: the nearest speaker counter-clockwise and the
            // nearest clockwise (angles turned from the direction, 0 ..< 360).
            func turn(to speaker: Double) -> Double {
                let d = (speaker - azimuth).truncatingRemainder(dividingBy: 360)
                return d < 0 ? d + 360 : d
            }
            let ring = panner.azimuthsDegrees.indices.filter { panner.azimuthsDegrees[$0] != nil }
            let ccw = ring.min { turn(to: panner.azimuthsDegrees[$0]!) < turn(to: panner.azimuthsDegrees[$1]!) }!
            let cw = ring.max { turn(to: panner.azimuthsDegrees[$0]!) < turn(to: panner.azimuthsDegrees[$1]!) }!
            for index in g.indices where g[index] != 0 {
                #expect(index == ccw || index == cw, "\(azimuth)° uses the speaker at \(panner.azimuthsDegrees[index]!)°")
            }
        }
        for (index, azimuth) in panner.azimuthsDegrees.enumerated() {
            guard let azimuth else { continue }
            let g = Self.gains(panner, azimuth)
            #expect(g == (0..<channelCount).map { $0 == index ? 1 : 0 })
        }
        // Halfway between FL (30°) and FC (0°): equal.
        let half = Self.gains(panner, 15)
        #expect(abs(half[0] - half[2]) < 1e-6)
    }

    /// One gain for all channels, from the loudest: a quiet channel beside an overload is turned
    /// down as much as the overload (the image does not move).
    @Test func theLimiterLinksEveryChannel() {
        let limiter = Limiter(sampleRateHz: 48000)
        let channels = 6, frames = 4800
        var block = [Float](repeating: 0, count: channels * frames)
        for n in 0..<frames {
            let s = Float(sin(2 * Double.pi * 200 * Double(n) / 48000))
            block[n * channels] = 0.1 * s
            block[n * channels + 5] = 4 * s
        }
        let original = block
        limiter.process(interleaved: &block, channelCount: channels, frames: frames)
        let delay = limiter.latencyFrames
        var worst: Float = 0
        for n in 2400..<frames {
            let quiet = block[n * channels], loud = block[n * channels + 5]
            worst = max(worst, abs(loud))
            let input = original[(n - delay) * channels], inputLoud = original[(n - delay) * channels + 5]
            if abs(inputLoud) > 0.5 { #expect(abs(quiet / input - loud / inputLoud) < 1e-4) }
        }
        #expect(worst <= limiter.thresholdAmplitude * 1.0001)
    }
}
