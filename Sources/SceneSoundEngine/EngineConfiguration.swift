import SceneSoundDSP

/// How a stream is placed (README; protocol/SPEC.md).
public enum SpatialMode: String, CaseIterable, Sendable {
    /// World-locked at its scene; head tracking applies.
    case anchored
    /// Placed relative to the head; turning does not move it.
    case headLocked = "head-locked"
    /// Plain stereo, bit-exact at unity gain.
    case off
}

public struct EngineConfiguration: Sendable {
    public var sampleRateHz: Double
    /// The render quantum. At least 128: every filter change is crossfaded over one voice
    /// span (at least a sub-block), and a crossfade shorter than 128 samples would be audible.
    public var blockFrames: Int
    public var room: Room
    public var distanceModel: DistanceModel
    /// How far apart the two channels of a stereo stream sound, as an angle at the listener.
    public var stereoSpreadDegrees: Double
    public var limiterThresholdDecibels: Double
    /// The cap on per-source HRTF voices; the other sources share the ambisonic bus
    /// (OverloadGovernor). Alerts always get voices, beyond the cap.
    public var maximumHRTFVoices: Int
    /// Silence (every stream drained, the mix's tails below −90 dBFS) after which the output
    /// may rest and let the device suspend (the daemon's `rest_after_seconds`).
    public var restAfterSeconds: Double = EngineConfiguration.defaultRestAfterSeconds

    /// Long enough that a pause between two sounds costs no suspend and resume (a device's
    /// resume can click or take its own time), short enough that a silent desktop soon costs nothing.
    public static let defaultRestAfterSeconds = 3.0
    /// What `restAfterSeconds` may be set to.
    public static let restAfterSecondsRange = 0.1...3600.0

    /// The default cap: 64 stereo streams (or 128 mono ones) all on their own voices; a
    /// desktop rarely plays more at once, and the bus only takes the sources beyond.
    public static let defaultMaximumHRTFVoices = 128
    /// What the cap may be set to (the daemon's `hrtf_voices`).
    public static let maximumHRTFVoicesRange = 0...2048

    public static let blockFramesRange = 128...8192
    public static let sampleRateRange = 8000.0...192000.0

    public init(sampleRateHz: Double = 48000, blockFrames: Int = 256, room: Room = .none,
                distanceModel: DistanceModel = DistanceModel(), stereoSpreadDegrees: Double = 30,
                limiterThresholdDecibels: Double = -1, maximumHRTFVoices: Int = EngineConfiguration.defaultMaximumHRTFVoices) {
        self.sampleRateHz = sampleRateHz
        self.blockFrames = blockFrames
        self.room = room
        self.distanceModel = distanceModel
        self.stereoSpreadDegrees = stereoSpreadDegrees
        self.limiterThresholdDecibels = limiterThresholdDecibels
        self.maximumHRTFVoices = maximumHRTFVoices
    }

    /// Sub-blocks per block: as many as fit while each stays at least 128 frames, so that
    /// the bus turns with the head every ~2.7 ms at 48 kHz.
    public var subBlockCount: Int { max(1, blockFrames / 128) }

    /// Frames the per-source HRTF voices render at a time (one partition of their
    /// frequency-domain convolution, SpectralVoiceMix): two sub-blocks where they pair up
    /// (256 at the default block), else one. Longer spans cost less per frame and fade
    /// filter changes over longer.
    public static func voiceSpanFrames(blockFrames: Int) -> Int {
        let count = max(1, blockFrames / 128), sub = blockFrames / count
        return count % 2 == 0 ? 2 * sub : sub
    }
    public var voiceSpanFrames: Int { Self.voiceSpanFrames(blockFrames: blockFrames) }
}
