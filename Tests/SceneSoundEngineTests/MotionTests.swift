import Foundation
import Testing
import SceneSoundDSP
import SceneSoundEngine

/// Moving sources and heads: smooth ITD, no clicks, the head-pose convention.
@Suite struct MotionTests {
    /// The rendered system's own response to an impulse, long enough to hold the filters.
    static func impulseCues(azimuthDegrees: Double, headYawDegrees: Double = 0) -> BinauralCues {
        var impulse = [Float](repeating: 0, count: 1024)
        impulse[0] = 1
        let out = OfflineRender().renderStatic(impulse, azimuthDegrees: azimuthDegrees, headYawDegrees: headYawDegrees)
        return CueAnalysis.cues(left: out.left, right: out.right, sampleRateHz: KEMAR.rateHz)
    }

    @Test func itdGrowsSmoothlyFromAheadToTheSide() {
        let itds = (0...90).map { Self.impulseCues(azimuthDegrees: Double($0)).itdMicroseconds }
        let steps = zip(itds.dropFirst(), itds).map { $0 - $1 }
        print("ITD 0→90° in 1° steps: \(Int(itds.first!))…\(Int(itds.last!)) µs, largest step \(steps.max()!) µs, smallest \(steps.min()!) µs")
        #expect(steps.allSatisfy { $0 >= 0 }, "ITD must grow monotonically")
        #expect(steps.allSatisfy { $0 <= 15 }, "no ITD step over 15 µs")
    }

    @Test func turningTheHeadLeftMovesAheadToTheRight() {
        let turned = Self.impulseCues(azimuthDegrees: 0, headYawDegrees: 90)
        let right = Self.impulseCues(azimuthDegrees: -90)
        #expect(turned.itdMicroseconds < -600)
        #expect(abs(turned.itdMicroseconds - right.itdMicroseconds) < 1)
        #expect(abs(turned.interauralLevelDifferenceDecibels - right.interauralLevelDifferenceDecibels) < 0.01)
    }

    @Test func headLockedSourcesIgnoreTheHead() {
        var noise = WhiteNoise(seed: 9)
        let input = noise.samples(9600, amplitude: 0.3)
        let place: (Double) -> (position: Vector3, pose: HeadPose) = { t in
            (SphericalPosition(azimuthDegrees: 45).cartesian, HeadPose(orientation: Quaternion(yawDegrees: 200 * t)))
        }
        let locked = OfflineRender().render(input, mode: .headLocked, place: place)
        let still = OfflineRender().renderStatic(input, azimuthDegrees: 45, distanceMetres: 1)
        let identical = locked.left == still.left && locked.right == still.right
        #expect(identical)
    }

    /// The discontinuity measure: the largest third difference relative to the peak. A sine
    /// of angular frequency ω has |Δ³y| ≤ ω³·|y|, a step of s has |Δ³y| ≈ s. The first and
    /// last 50 ms (where the test signal itself starts and stops) are left out.
    static func discontinuity(_ y: [Float]) -> Double {
        var worst = 0.0, peak = 0.0
        let margin = 2400
        for i in (margin + 3)..<(y.count - margin) {
            let d3 = Double(y[i]) - 3 * Double(y[i - 1]) + 3 * Double(y[i - 2]) - Double(y[i - 3])
            worst = max(worst, abs(d3))
            peak = max(peak, abs(Double(y[i])))
        }
        return worst / peak
    }

    static let sine: [Float] = (0..<96000).map { Float(sin(2 * .pi * 500 * Double($0) / 48000)) * 0.5 }
    /// The sine rendered still at 30°: the reference every click test compares with.
    static let staticRender = OfflineRender().renderStatic(sine, azimuthDegrees: 30)

    @Test func aSineCirclingAt360DegreesPerSecondHasNoClicks() {
        let staticRender = Self.staticRender
        let moving = OfflineRender().render(Self.sine) { t in
            (SphericalPosition(azimuthDegrees: 360 * t).cartesian, .neutral)
        }
        let headTurning = OfflineRender().render(Self.sine) { t in
            (SphericalPosition(azimuthDegrees: 0).cartesian, HeadPose(orientation: Quaternion(yawDegrees: -360 * t)))
        }
        let reference = max(Self.discontinuity(staticRender.left), Self.discontinuity(staticRender.right))
        let sweep = max(Self.discontinuity(moving.left), Self.discontinuity(moving.right))
        let turn = max(Self.discontinuity(headTurning.left), Self.discontinuity(headTurning.right))
        print("discontinuity: static \(reference), source sweeping 360°/s \(sweep), head turning 360°/s \(turn)")
        // "At the level of a static render": within 6 dB of it. The naive renderer below is
        // some 50 dB above.
        #expect(sweep < 2 * reference)
        #expect(turn < 2 * reference)
    }

    @Test func posesAt250HzSweepingTheHeadForTenSecondsHaveNoClicks() {
        // The head swings ±90° at 0.5 Hz (up to 283°/s); a tracker reports it every 4 ms and
        // the renderer takes the newest report each block, gliding between them.
        let seconds = 10.0
        let sine = (0..<Int(48000 * seconds)).map { Float(sin(2 * .pi * 500 * Double($0) / 48000)) * 0.5 }
        let out = OfflineRender().render(sine) { t in
            let reported = (t * 250).rounded(.down) / 250  // sample-and-hold at 250 Hz
            return (SphericalPosition(azimuthDegrees: 0).cartesian,
                    HeadPose(orientation: Quaternion(yawDegrees: 90 * sin(2 * .pi * 0.5 * reported))))
        }
        let reference = Self.discontinuity(Self.staticRender.left)
        let measured = max(Self.discontinuity(out.left), Self.discontinuity(out.right))
        print("250 Hz poses, head sweeping ±90° for 10 s: discontinuity \(measured) (static \(reference))")
        #expect(measured < 2 * reference)
    }

    @Test func theMeasureCatchesAFilterSwitchWithoutCrossfade() {
        // A naive renderer: each 256-sample block convolved with the nearest measured
        // response, switched at the block boundary. The measure must flag it.
        let block = 256
        var left = [Float](repeating: 0, count: Self.sine.count)
        var start = 0
        while start < Self.sine.count {
            let azimuth = (360 * Double(start) / 48000 / 5).rounded() * 5
            let m = KEMAR.measurement(azimuthDegrees: azimuth)
            for n in start..<min(start + block, Self.sine.count) {
                var s: Float = 0
                for k in 0..<min(m.left.count, n + 1) { s += m.left[k] * Self.sine[n - k] }
                left[n] = s
            }
            start += block
        }
        let reference = Self.discontinuity(Self.staticRender.left)
        let naive = Self.discontinuity(left)
        print("discontinuity of a naive filter switch: \(naive) (static \(reference))")
        #expect(naive > 100 * reference)
    }
}
