#if canImport(Glibc)
import SceneSoundDSP
import Glibc
#endif

/// How much playback streams are lowered while an alert plays, and how fast. The ramps are in
/// dB per second so that the duck sounds even: a gain ramp linear in amplitude would drop
/// most of its level in the first few milliseconds.
public struct DuckingParameters: Sendable, Equatable {
    /// Negative: −12 dB by default. 0 switches ducking off.
    public var decibels: Double
    /// Time to reach the full duck when an alert starts.
    public var attackSeconds: Double
    /// Time to come back to unity after the last alert ends.
    public var releaseSeconds: Double

    public init(decibels: Double = -12, attackSeconds: Double = 0.05, releaseSeconds: Double = 0.25) {
        self.decibels = min(0, decibels)
        self.attackSeconds = max(0, attackSeconds)
        self.releaseSeconds = max(0, releaseSeconds)
    }
}

/// The duck gain, advanced once per block on the render thread (plain arithmetic: no
/// allocation, no locks). Each block's gain is applied through the sources' own per-sub-block
/// gain glides, so steps between blocks are smoothed too.
struct AlertDuckEnvelope {
    var parameters = DuckingParameters()
    private(set) var levelDecibels = 0.0
    private(set) var gain: Float = 1

    /// Moves towards the duck (`alerting`) or back to unity by one block's worth of ramp.
    mutating func advance(alerting: Bool, blockSeconds: Double) {
        let target = alerting ? parameters.decibels : 0
        guard levelDecibels != target else { return }
        let seconds = alerting ? parameters.attackSeconds : parameters.releaseSeconds
        let depth = -parameters.decibels
        let step = seconds > 0 && depth > 0 ? depth * blockSeconds / seconds : .infinity
        levelDecibels = target < levelDecibels ? max(target, levelDecibels - step) : min(target, levelDecibels + step)
        gain = Decibels.linearGain(levelDecibels)
    }
}
