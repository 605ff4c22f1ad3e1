import Foundation
import SceneSoundDSP

/// Extrapolates the head's orientation over the time from a pose's arrival to its being heard,
/// from the tracker's recent angular velocity, so that a turning head is not heard late.
///
/// A tracker's poses are noisy, and differencing noise makes fast noise, so the velocity is
/// smoothed with a cutoff that rises with the head's speed (the 1€ filter's idea, Casiez,
/// Roussel & Vogel 2012): heavy smoothing at rest, little lag while turning. The pose itself
/// goes through a 1€ filter as well (quiet at rest), and its lag is added to the horizon. The
/// extrapolation is scaled down at low speed (speed² / (speed² + `restSpeed²`)), so a still head's
/// noise is not extrapolated, and is bounded (`maximumHorizonSeconds`, `maximumDegrees`).
/// Parameters were chosen by simulating a ±45°, 1 Hz swing and a still head with 0.2° of noise
/// at 100 poses a second (docs/MEASUREMENTS.md).
///
/// Angular velocities are vectors in degrees per second in the world frame; the extrapolated
/// orientation is exp(ω·t) · q. Event-loop confined; time is passed in.
struct HeadPosePredictor {
    struct Parameters {
        /// The speed estimate's cutoff (the 1€ filter's derivative cutoff).
        var speedCutoffHz = 5.0
        /// The velocity's cutoff: `velocityMinimumCutoffHz + velocityCutoffHzPerDegreePerSecond · speed`.
        var velocityMinimumCutoffHz = 1.0
        var velocityCutoffHzPerDegreePerSecond = 1.0
        /// The pose's 1€ filter: `poseMinimumCutoffHz + poseCutoffHzPerDegreePerSecond · speed`.
        var poseMinimumCutoffHz = 1.0
        var poseCutoffHzPerDegreePerSecond = 1.0
        /// Below about this speed the extrapolation fades out (noise, not motion).
        var restSpeedDegreesPerSecond = 40.0
        var maximumHorizonSeconds = 0.1
        var maximumDegrees = 30.0
        /// Faster than a head turns (about 800°/s at most): a jump (a pose set by hand, a
        /// tracker's glitch or recentering), taken as it is rather than extrapolated.
        var jumpDegreesPerSecond = 1500.0
        /// A gap longer than this between poses starts afresh (a new tracker, a pause).
        var resetAfterSeconds = 0.25
        /// When poses stop, the extrapolation fades to the last pose over this long, once
        /// `fadeAfterIntervals` of the usual interval have passed without one.
        var fadeSeconds = 0.1
        var fadeAfterIntervals = 2.5
    }

    let parameters: Parameters
    private var last: (orientation: Quaternion, seconds: Double)?
    private var filtered = Quaternion.identity
    private var derivative = Vector3.zero
    private var velocity = Vector3.zero
    /// The usual interval between poses (a running mean): steadier than each pair's arrival
    /// times, which the network and the event loop jitter.
    private(set) var intervalSeconds = 0.01
    private var intervalKnown = false

    init(parameters: Parameters = .init()) {
        self.parameters = parameters
    }

    /// Forgets the motion: the next pose is taken as it is (a recenter, a jump).
    mutating func reset() {
        last = nil
        intervalKnown = false
    }

    /// Takes a pose that arrived at `seconds`.
    mutating func add(_ orientation: Quaternion, atSeconds seconds: Double) {
        let q = orientation.normalized
        guard let previous = last, seconds - previous.seconds <= parameters.resetAfterSeconds,
              seconds > previous.seconds else {
            last = (q, seconds)
            filtered = q
            derivative = .zero
            velocity = .zero
            return
        }
        let gap = seconds - previous.seconds
        // Senders keep a steady rate: the mean interval follows it (a gap far off the mean, a
        // loss or a burst, moves it only a little), and stands for a pair's own arrival times
        // unless the gap is clearly longer (a loss): datagrams delayed on the way and then
        // delivered together were still measured an interval apart.
        if intervalKnown {
            intervalSeconds += 0.1 * (min(max(gap, intervalSeconds / 3), intervalSeconds * 3) - intervalSeconds)
        } else {
            intervalSeconds = max(gap, 0.001)
            intervalKnown = true
        }
        let dt = gap < 1.5 * intervalSeconds ? intervalSeconds : gap
        let raw = rotationVectorDegrees(q * previous.orientation.conjugate) * (1 / dt)
        guard raw.length <= parameters.jumpDegreesPerSecond else {
            last = (q, seconds)
            filtered = q
            derivative = .zero
            velocity = .zero
            return
        }
        derivative = derivative + (raw - derivative) * smoothing(cutoffHz: parameters.speedCutoffHz, dt)
        let speed = derivative.length
        let velocityCutoff = parameters.velocityMinimumCutoffHz + parameters.velocityCutoffHzPerDegreePerSecond * speed
        velocity = velocity + (raw - velocity) * smoothing(cutoffHz: velocityCutoff, dt)
        let towards = rotationVectorDegrees(q * filtered.conjugate)
        filtered = (rotation(degrees: towards * smoothing(cutoffHz: poseCutoffHz(speed), dt)) * filtered).normalized
        last = (q, seconds)
    }

    /// The orientation expected to be heard `horizonSeconds` after the newest pose's arrival,
    /// asked at `nowSeconds`; the raw newest pose when there is none to extrapolate from.
    func predicted(horizonSeconds: Double, nowSeconds: Double) -> Quaternion? {
        guard let last else { return nil }
        let speed = derivative.length
        let alpha = smoothing(cutoffHz: poseCutoffHz(speed), intervalSeconds)
        let filterLagSeconds = (1 - alpha) / alpha * intervalSeconds
        // A pose waits on average half an interval before the next replaces it.
        let horizon = min(max(0, horizonSeconds) + intervalSeconds / 2, parameters.maximumHorizonSeconds)
        let rest = parameters.restSpeedDegreesPerSecond
        let gain = speed * speed / (speed * speed + rest * rest)
        var step = velocity * (gain * (horizon + filterLagSeconds))
        if step.length > parameters.maximumDegrees { step = step * (parameters.maximumDegrees / step.length) }
        let predicted = (rotation(degrees: step) * filtered).normalized
        // Poses stopped: back to the last one, gradually.
        let silence = nowSeconds - last.seconds - parameters.fadeAfterIntervals * intervalSeconds
        let weight = silence <= 0 ? 1 : max(0, 1 - silence / parameters.fadeSeconds)
        return weight >= 1 ? predicted : Quaternion.slerp(last.orientation, predicted, weight)
    }

    /// True while the extrapolation is fading after poses stopped (the caller pushes it on).
    func isFading(nowSeconds: Double) -> Bool {
        guard let last else { return false }
        let silence = nowSeconds - last.seconds - parameters.fadeAfterIntervals * intervalSeconds
        return silence > 0 && silence < parameters.fadeSeconds + intervalSeconds
    }

    private func poseCutoffHz(_ speed: Double) -> Double {
        parameters.poseMinimumCutoffHz + parameters.poseCutoffHzPerDegreePerSecond * speed
    }

    /// A one-pole smoothing factor for a cutoff at a sampling interval (the 1€ filter's α).
    private func smoothing(cutoffHz: Double, _ dt: Double) -> Double {
        let tau = 1 / (2 * Double.pi * cutoffHz)
        return 1 / (1 + tau / dt)
    }
}

/// The rotation vector of `q` (axis × angle), in degrees, taking the short way.
func rotationVectorDegrees(_ q: Quaternion) -> Vector3 {
    var q = q.normalized
    if q.w < 0 { q = Quaternion(w: -q.w, x: -q.x, y: -q.y, z: -q.z) }
    let s = (q.x * q.x + q.y * q.y + q.z * q.z).squareRoot()
    guard s > 1e-12 else { return Vector3(x: q.x, y: q.y, z: q.z) * (2 * 180 / .pi) }
    let angle = 2 * atan2(s, q.w) * 180 / .pi
    return Vector3(x: q.x, y: q.y, z: q.z) * (angle / s)
}

/// The rotation by a rotation vector in degrees.
func rotation(degrees v: Vector3) -> Quaternion {
    let angle = v.length
    guard angle > 1e-12 else { return .identity }
    return Quaternion(axis: v, angleRadians: angle * .pi / 180)
}
