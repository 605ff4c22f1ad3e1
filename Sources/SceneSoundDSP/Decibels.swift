#if canImport(Glibc)
import Glibc
#endif

/// Levels in decibels as linear amplitude gains: the one conversion every module uses.
public enum Decibels {
    /// At or below this a level is silence, a gain of exactly zero: a stream turned all the way
    /// down must be mute, not merely 120 dB down.
    public static let silenceFloor = -120.0

    @inlinable
    public static func linearGain(_ decibels: Double) -> Float {
        decibels <= silenceFloor ? 0 : Float(pow(10, decibels / 20))
    }
}
