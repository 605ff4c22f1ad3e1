/// Protocol versions and the limits every implementation shares.
public enum ProtocolVersion {
    /// The version this module speaks.
    public static let current: UInt16 = 2
    /// Every version this module can speak; a server picks the highest one it shares with the client.
    /// Version 2 adds STREAM_OPEN's channel map and 3 to 8 channels (SPEC.md section 11).
    public static let supported: ClosedRange<UInt16> = 1...2

    /// The highest version in both ranges, or nil when they do not overlap (the server then
    /// answers `HELLO` with `ERROR unsupported_version` and closes the connection).
    public static func negotiate(
        clientMinimum: UInt16, clientMaximum: UInt16,
        serverSupported: ClosedRange<UInt16> = supported
    ) -> UInt16? {
        let lowest = max(clientMinimum, serverSupported.lowerBound)
        let highest = min(clientMaximum, serverSupported.upperBound)
        return lowest <= highest ? highest : nil
    }
}

/// Limits fixed by the protocol itself (servers may configure some of them within bounds).
public enum ProtocolLimits {
    /// Default largest frame, header included, that either side may send (256 KiB).
    public static let defaultMaxFrameBytes = 256 * 1024
    /// A server may not configure its maximum frame size below this, so that a `HELLO`
    /// (at most a few hundred bytes) always fits before the client has learnt the real limit.
    public static let minimumMaxFrameBytes = 4 * 1024
    /// Scene ids, sample names, client and server names are length-prefixed by one byte.
    public static let maxShortStringBytes = 255
    /// Accepted sample rates.
    public static let rateHzRange: ClosedRange<UInt32> = 8_000...192_000
    /// Accepted channel counts: up to 7.1 for streams from version 2 on; samples and version 1
    /// streams carry one or two.
    public static let channelsRange: ClosedRange<UInt8> = 1...8
    public static let stereoChannelsRange: ClosedRange<UInt8> = 1...2
    /// Accepted gains; the server renders anything at or below −120 dB as silence.
    public static let volumeDecibelsRange: ClosedRange<Float> = -200...24
    /// Accepted scene placements.
    public static let azimuthDegreesRange: ClosedRange<Float> = -360...360
    public static let elevationDegreesRange: ClosedRange<Float> = -90...90
    public static let distanceMetresRange: ClosedRange<Float> = 0.01...1000
    /// How far a head-pose quaternion's norm may stray from 1 (the server renormalises it).
    public static let quaternionNormTolerance: Float = 0.01
}
