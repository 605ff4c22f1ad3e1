import SceneSoundEngine

/// Settings of the sample cache and of system and alert sounds (SPEC.md 6.6, docs/ARCHITECTURE.md
/// "Stream kinds"). Part of `ServerConfiguration` as `samples`.
public struct SampleConfiguration: Sendable {
    /// The cache's bound, counted as the Float audio it holds at the engine rate; the least
    /// recently used samples are evicted to make room.
    public var cacheBytes = 64 * 1024 * 1024
    /// System sounds are short: longer uploads are refused with `limit_exceeded`.
    public var maximumSampleSeconds = 30.0
    /// Identical plays (same name, kind and scene) within this long of one that played are
    /// coalesced into it. 0 switches coalescing off.
    public var coalesceWindowSeconds = 0.1
    /// How playback streams are ducked while an alert plays.
    public var ducking = DuckingParameters()
    /// Flag an alert's window with `_NET_WM_STATE_DEMANDS_ATTENTION` (needs the X11 side to
    /// install `SoundServer.alertAttention`). Also done, whatever this says, while no audio
    /// output is available.
    public var alertsDemandAttention = false

    public init() {}
}
