import Foundation
import Testing
import SceneSoundDSP
@testable import SceneSoundServer

/// `--head-tracking full|yaw-only|off` and `--head-recenter-seconds`, in process on the
/// prediction tests' rig (a real engine, a clock the test moves).
@Suite struct HeadRecenteringTests {
    typealias Rig = HeadPredictionTests.Rig

    static func rig(_ configure: (inout HeadTrackingSettings) -> Void) -> Rig {
        var settings = HeadTrackingSettings()
        settings.prediction = false
        configure(&settings)
        return Rig(settings: settings, outputLatencySeconds: 0.02)
    }

    static let turned = SceneSoundDSP.HeadPose(orientation: SceneSoundDSP.Quaternion(yawDegrees: 30, pitchDegrees: 20, rollDegrees: 10),
                                               positionMetres: Vector3(x: 0.1, y: 0, z: -0.05))

    @Test func yawOnlyFollowsTheTurnAloneAndOffIgnoresTrackers() throws {
        let full = Self.rig { _ in }
        full.head.update(Self.turned, from: .opentrack)
        #expect(abs(full.render().orientation.yawDegrees - 30) < 1e-6)
        #expect(abs(pitchAndRollDegrees(full.head.effective.orientation).pitch - 20) < 1e-6)

        let yawOnly = Self.rig { $0.mode = .yawOnly }
        yawOnly.head.update(Self.turned, from: .opentrack)
        let rendered = yawOnly.render()
        let (pitch, roll) = pitchAndRollDegrees(rendered.orientation)
        print(String(format: "yaw-only: tracker yaw 30°, pitch 20°, roll 10° → rendered yaw %.2f°, pitch %.2f°, roll %.2f°, position %.2f m",
                     rendered.orientation.yawDegrees, pitch, roll, rendered.positionMetres.length))
        #expect(abs(rendered.orientation.yawDegrees - 30) < 1e-6)
        #expect(abs(pitch) < 1e-6 && abs(roll) < 1e-6 && rendered.positionMetres == .zero)

        let off = Self.rig { $0.mode = .off }
        off.head.update(Self.turned, from: .opentrack)
        off.head.update(Self.turned, from: .osc)
        #expect(off.render().orientation == .identity)
        #expect(try #require(off.head.status.tracking) == "off")
        // `scenesound head set` (the protocol) still places the head.
        off.head.update(SceneSoundDSP.HeadPose(orientation: SceneSoundDSP.Quaternion(yawDegrees: -40)))
        #expect(abs(off.render().orientation.yawDegrees + 40) < 1e-6)
    }

    /// Sends a tracked head at `yaw(t)` (50 poses a second) from `from` to `to` seconds.
    /// Returns the last yaw sent.
    @discardableResult
    static func track(_ rig: Rig, from: Double, to: Double, yaw: (Double) -> Double) -> Double {
        var t = from, last = 0.0
        while t < to {
            rig.advance(to: t)
            last = yaw(t)
            rig.head.update(SceneSoundDSP.HeadPose(orientation: SceneSoundDSP.Quaternion(yawDegrees: last)), from: .opentrack)
            rig.head.tick()
            _ = rig.render()
            t += 0.02
        }
        return last
    }

    /// A tracker drifted to 30° while the listener faces the screen: resting, forward glides there.
    @Test func aRestingHeadBecomesStraightAheadAfterTheConfiguredRest() throws {
        let rig = Self.rig { $0.recenterAfterSeconds = 2 }
        // Half a degree of wobble: still "at rest" (within a few degrees).
        Self.track(rig, from: 0, to: 1.9) { 30 + 0.5 * sin(7 * $0) }
        let beforeRest = rig.head.effective.orientation.yawDegrees
        #expect(abs(beforeRest - 30) < 1)
        #expect(rig.head.automaticRecenters == 0)
        Self.track(rig, from: 1.9, to: 8) { 30 + 0.5 * sin(7 * $0) }
        let after = rig.head.effective.orientation.yawDegrees
        print(String(format: "recentering after 2 s: yaw %.2f° at 1.9 s, %.2f° at 8 s (%d glide)", beforeRest, after, rig.head.automaticRecenters))
        #expect(abs(after) < 1)
        #expect(rig.head.automaticRecenters == 1)
        // Turning away from the rest moves the sound as ever (the reference stays).
        let away = Self.track(rig, from: 8, to: 8.5) { 30 + ($0 - 8) * 120 }
        #expect(abs(rig.head.effective.orientation.yawDegrees - (away - 30)) < 2.5)
    }

    @Test func aMovingHeadIsNeverRecentered() throws {
        // A slow sway, ±20° at 0.3 Hz: near its ends it stays within 4° for under a second.
        let rig = Self.rig { $0.recenterAfterSeconds = 1.5 }
        let last = Self.track(rig, from: 0, to: 10) { 20 * sin(2 * .pi * 0.3 * $0) }
        #expect(rig.head.automaticRecenters == 0)
        #expect(abs(rig.head.effective.orientation.yawDegrees - last) < 1e-6)
    }

    /// Off by default; and a pose set by hand is never moved (only trackers drift).
    @Test func recenteringIsOffByDefaultAndLeavesPosesSetByHand() throws {
        let byDefault = Self.rig { _ in }
        Self.track(byDefault, from: 0, to: 5) { _ in 30 }
        #expect(abs(byDefault.head.effective.orientation.yawDegrees - 30) < 1e-6)
        #expect(byDefault.head.status.recenterAfterSeconds == nil)

        let rig = Self.rig { $0.recenterAfterSeconds = 1 }
        rig.head.update(SceneSoundDSP.HeadPose(orientation: SceneSoundDSP.Quaternion(yawDegrees: 30)))
        for step in 1...300 {
            rig.advance(to: Double(step) * 0.01)
            rig.head.tick()
        }
        #expect(abs(rig.head.effective.orientation.yawDegrees - 30) < 1e-6)
    }
}
