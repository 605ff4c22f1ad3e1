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
    /// The render quantum. At least 128: every filter change is crossfaded over one
    /// sub-block, and a crossfade shorter than 128 samples would be audible.
    public var blockFrames: Int
    public var room: Room
    public var distanceModel: DistanceModel
    /// How far apart the two channels of a stereo stream sound, as an angle at the listener.
    public var stereoSpreadDegrees: Double
    public var limiterThresholdDecibels: Double
    /// The cap on per-source HRTF voices; the other sources share the ambisonic bus
    /// (OverloadGovernor). Alerts always get voices, beyond the cap.
    public var maximumHRTFVoices: Int

    public static let blockFramesRange = 128...8192
    public static let sampleRateRange = 8000.0...192000.0

    public init(sampleRateHz: Double = 48000, blockFrames: Int = 256, room: Room = .none,
                distanceModel: DistanceModel = DistanceModel(), stereoSpreadDegrees: Double = 30,
                limiterThresholdDecibels: Double = -1, maximumHRTFVoices: Int = 16) {
        self.sampleRateHz = sampleRateHz
        self.blockFrames = blockFrames
        self.room = room
        self.distanceModel = distanceModel
        self.stereoSpreadDegrees = stereoSpreadDegrees
        self.limiterThresholdDecibels = limiterThresholdDecibels
        self.maximumHRTFVoices = maximumHRTFVoices
    }

    /// Sub-blocks per block: as many as fit while each stays at least 128 frames, so that
    /// positions update every ~2.7 ms at 48 kHz.
    public var subBlockCount: Int { max(1, blockFrames / 128) }
}
