import Testing
import SceneSoundDSP
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
        #expect(model.gain(distanceMetres: 0.3) == 1)  // clamped inside the reference distance
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
