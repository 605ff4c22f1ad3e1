import Testing
@testable import SceneSoundDSP
import Foundation

@Suite struct GeometryTests {
    @Test func azimuthConventionIsSOFA() {
        let left = SphericalPosition(azimuthDegrees: 90).cartesian
        #expect(abs(left.x + 1) < 1e-12 && abs(left.z) < 1e-12)
        let ahead = SphericalPosition(cartesian: Vector3(x: 0, y: 0, z: -2))
        #expect(abs(ahead.azimuthDegrees) < 1e-12 && abs(ahead.distanceMetres - 2) < 1e-12)
        let up = SphericalPosition(cartesian: Vector3(x: 0, y: 1, z: 0))
        #expect(abs(up.elevationDegrees - 90) < 1e-9)
    }

    @Test func positiveYawTurnsTheHeadLeftSoAheadSoundsRight() {
        let pose = HeadPose(orientation: Quaternion(yawDegrees: 90))
        let seen = pose.relative(Vector3(x: 0, y: 0, z: -1))
        #expect(abs(seen.azimuthDegrees + 90) < 1e-9)
        #expect(abs(pose.orientation.yawDegrees - 90) < 1e-9)
    }

    @Test func positivePitchLooksUp() {
        let pose = HeadPose(orientation: Quaternion(yawDegrees: 0, pitchDegrees: 30))
        // A source straight ahead now appears below the gaze.
        #expect(abs(pose.relative(Vector3(x: 0, y: 0, z: -1)).elevationDegrees + 30) < 1e-9)
    }

    @Test func positiveRollTiltsTheHeadRight() {
        let pose = HeadPose(orientation: Quaternion(yawDegrees: 0, rollDegrees: 30))
        // The top of the head leans to the right (+x), so the right ear drops: a source level
        // with it on the right now appears above, one on the left below.
        #expect(pose.orientation.rotate(Vector3(x: 0, y: 1, z: 0)).x > 0.49)
        #expect(abs(pose.relative(Vector3(x: 1, y: 0, z: 0)).elevationDegrees - 30) < 1e-9)
        #expect(abs(pose.relative(Vector3(x: -1, y: 0, z: 0)).elevationDegrees + 30) < 1e-9)
    }

    @Test func leaningTowardsASourceBringsItNearer() {
        let pose = HeadPose(positionMetres: Vector3(x: 0, y: 0, z: -0.2))
        #expect(abs(pose.relative(Vector3(x: 0, y: 0, z: -0.6)).distanceMetres - 0.4) < 1e-12)
    }

    @Test func slerpHalfway() {
        let q = Quaternion.slerp(Quaternion(yawDegrees: 0), Quaternion(yawDegrees: 90), 0.5)
        #expect(abs(q.yawDegrees - 45) < 1e-9)
    }
}

@Suite struct DistanceModelTests {
    @Test func doublingTheDistanceLosesSixDecibels() {
        let model = DistanceModel(referenceDistanceMetres: 1, rolloffFactor: 1, maximumDistanceMetres: 1000)
        for d in [1.0, 2.0, 5.0, 40.0] {
            let drop = 20 * log10(model.gain(distanceMetres: 2 * d) / model.gain(distanceMetres: d))
            #expect(abs(drop + 6.0206) < 1e-3)
        }
    }

    /// The reference is the listener's distance to the screen: a window there at unity, a
    /// window at 0.5 m at least 3 dB louder than one at 0.8 m (no clamp at the reference),
    /// and a floor at 0.1 m.
    @Test func windowsAtADeskDifferInLevel() {
        let model = DistanceModel()
        #expect(model.referenceDistanceMetres == 0.6)
        #expect(abs(model.gain(distanceMetres: 0.6) - 1) < 1e-12)
        let nearOverFar = 20 * log10(model.gain(distanceMetres: 0.5) / model.gain(distanceMetres: 0.8))
        print("0.5 m over 0.8 m: \(String(format: "%+.2f", nearOverFar)) dB")
        #expect(nearOverFar >= 3)
        #expect(model.gain(distanceMetres: 0.01) == model.gain(distanceMetres: 0.1))
        #expect(model.gain(distanceMetres: 0.1) > model.gain(distanceMetres: 0.2))
    }

    @Test func maximumDistanceClamps() {
        let model = DistanceModel(maximumDistanceMetres: 10)
        #expect(model.gain(distanceMetres: 50) == model.gain(distanceMetres: 10))
    }

    @Test func cullDistance() {
        let model = DistanceModel(cullDistanceMetres: 20)
        #expect(!model.isCulled(distanceMetres: 19.9) && model.isCulled(distanceMetres: 20))
    }
}

@Suite struct LimiterTests {
    @Test func loudInputNeverExceedsTheThreshold() {
        let limiter = Limiter(sampleRateHz: 48000, thresholdDecibels: -1)
        var noise = WhiteNoise(seed: 1)
        var peak: Float = 0
        for block in 0..<200 {
            let amplitude: Float = block % 50 < 25 ? 8 : 0.2  // loud bursts and quiet stretches
            var samples = noise.samples(512, amplitude: amplitude)
            limiter.process(interleaved: &samples, frames: 256)
            peak = max(peak, samples.map(abs).max()!)
        }
        #expect(peak <= limiter.thresholdAmplitude * 1.000001)
        #expect(limiter.takeMinimumGain() < 0.2)
    }

    @Test func quietInputPassesBitExactAfterTheLookahead() {
        let limiter = Limiter(sampleRateHz: 48000)
        var noise = WhiteNoise(seed: 2)
        let input = noise.samples(2 * 4096, amplitude: 0.5)
        var output = input
        limiter.process(interleaved: &output, frames: 4096)
        let delay = limiter.latencyFrames * 2
        let exact = Array(output[delay...]) == Array(input[..<(input.count - delay)])
        #expect(exact)
    }

    /// A block the limiter only delays (`passesIdleBlocks`) comes out, and leaves the limiter,
    /// exactly as the full per-frame path would have: bursts over the threshold, the release
    /// after them, quiet stretches, blocks of many lengths, stereo and 5.1.
    @Test(arguments: [2, 6])
    func anIdleBlockIsWhatTheFullPathGives(channelCount: Int) {
        let fast = Limiter(sampleRateHz: 48000, releaseSeconds: 0.002)
        let full = Limiter(sampleRateHz: 48000, releaseSeconds: 0.002)
        full.passesIdleBlocks = false
        var noise = WhiteNoise(seed: 5)
        var differing = 0
        for block in 0..<400 {
            let frames = [256, 37, 1, 128, 500][block % 5]
            let amplitude: Float = block % 40 == 7 ? 3 : block % 40 == 20 ? 0.95 : 0.4
            var fastOutput = noise.samples(channelCount * frames, amplitude: amplitude), fullOutput = fastOutput
            fast.process(interleaved: &fastOutput, channelCount: channelCount, frames: frames)
            full.process(interleaved: &fullOutput, channelCount: channelCount, frames: frames)
            if fastOutput != fullOutput { differing += 1 }
        }
        #expect(differing == 0, "\(differing) of 400 blocks differ")
        #expect(fast.takeMinimumGain() == full.takeMinimumGain())
        // Most blocks were idle, not all: both paths ran.
        #expect(fast.idleBlocks > 200 && fast.idleBlocks < 390, "\(fast.idleBlocks) idle blocks of 400")
        #expect(full.idleBlocks == 0)
    }

    @Test func gainRecoversToExactlyOneAfterABurst() {
        let limiter = Limiter(sampleRateHz: 48000, releaseSeconds: 0.01)
        var loud = [Float](repeating: 4, count: 512)
        limiter.process(interleaved: &loud, frames: 256)
        var noise = WhiteNoise(seed: 4)
        let quiet = noise.samples(2 * 48000, amplitude: 0.1)
        var out = quiet
        limiter.process(interleaved: &out, frames: 48000)
        let delay = limiter.latencyFrames * 2
        // One second later the gain is exactly 1 again.
        let exact = Array(out[(2 * 47000)...]) == Array(quiet[(2 * 47000 - delay)..<(quiet.count - delay)])
        #expect(exact)
    }
}

/// The rigid sphere of NearField against the published figures (Duda & Martens 1998's series;
/// radius 8.75 cm, source on an ear's axis, 0.5 m over 1.4 m).
@Suite struct NearFieldModelTests {
    static func level(_ incidence: Double, _ r: Double, _ f: Double) -> Double {
        20 * log10(NearField.sphereMagnitude(radiusMetres: 0.0875, distanceMetres: r, incidenceRadians: incidence, frequencyHz: f))
    }

    @Test(arguments: [(100.0, 3.0), (200, 2.9), (500, 2.6), (1000, 2.5), (2000, 2.5), (4000, 2.7), (8000, 2.9)])
    func theILDGrowsAsTheSpheres(frequencyHz: Double, ildChangeDecibels: Double) {
        let change = (Self.level(0, 0.5, frequencyHz) - Self.level(.pi, 0.5, frequencyHz))
            - (Self.level(0, 1.4, frequencyHz) - Self.level(.pi, 1.4, frequencyHz))
        #expect(abs(change - ildChangeDecibels) <= 0.06)
        // With the inverse distance law (8.94 dB): near ear +10.0 … +10.6, far ear +7.1 … +7.6.
        let inverse = 20 * log10(1.4 / 0.5)
        let nearEar = Self.level(0, 0.5, frequencyHz) - Self.level(0, 1.4, frequencyHz) + inverse
        let farEar = Self.level(.pi, 0.5, frequencyHz) - Self.level(.pi, 1.4, frequencyHz) + inverse
        #expect(nearEar >= 9.95 && nearEar <= 10.65)
        #expect(farEar >= 7.05 && farEar <= 7.65)
    }

    /// Far away the sphere is transparent at low frequencies; at the measurement distance the
    /// gains are exactly 1; ahead at 0.5 m the ears see the source 6.4° to their sides.
    @Test func tableAndParallax() {
        #expect(abs(Self.level(.pi / 2, 10, 20)) < 0.05)
        let field = NearField(measurementDistanceMetres: 1.4, sampleRateHz: 48000)
        var gains = [Float](repeating: 0, count: field.bandCount)
        field.bandGains(incidenceDegrees: 0, distanceMetres: 1.4, into: &gains)
        #expect(gains.allSatisfy { abs($0 - 1) < 1e-6 })
        let ears = field.ears(of: SphericalPosition(azimuthDegrees: 0, distanceMetres: 0.5).cartesian)
        #expect(abs(ears.left.azimuthDegrees + 6.4) < 0.15 && abs(ears.right.azimuthDegrees - 6.4) < 0.15)
        #expect(abs(ears.delayCorrectionSamples.left) < 1e-3 && abs(ears.delayCorrectionSamples.right) < 1e-3)
    }

    /// Down to the nearest distance rendered (0.1 m) every ear's gain is a number, and it moves
    /// smoothly with the distance (under 1 dB a millimetre; the near ear's moves up to 0.6):
    /// there the series' ratios overflowed before it converged and the table held NaN
    /// (200–800 Hz below ~0.105 m, 50 Hz below ~0.125 m).
    @Test func nearestGainsAreFiniteAndSmooth() {
        let field = NearField(measurementDistanceMetres: 1.4, sampleRateHz: 48000)
        for incidence in stride(from: 0.0, through: 180, by: 15) {
            var previous: Float?
            for step in 0...20 {
                let distance = 0.1 + 0.001 * Double(step)
                let decibels = 20 * log10(field.broadbandGain(incidenceDegrees: incidence, distanceMetres: distance))
                #expect(decibels.isFinite, "incidence \(incidence)°, \(distance) m")
                if let previous { #expect(abs(decibels - previous) < 1, "incidence \(incidence)°, \(distance) m") }
                previous = decibels
            }
            var gains = [Float](repeating: 0, count: field.bandCount)
            field.bandGains(incidenceDegrees: incidence, distanceMetres: 0.1, into: &gains)
            #expect(gains.allSatisfy { $0.isFinite && $0 > 0 }, "incidence \(incidence)°: \(gains)")
        }
    }
}
