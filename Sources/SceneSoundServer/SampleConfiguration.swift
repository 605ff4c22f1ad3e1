import SceneSoundEngine

/// Settings of the sample cache and of system and alert sounds (SPEC.md 6.6, DESIGN.md
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

/// The hook through which an alert flags its window for attention. The X11 tracker installs
/// it; the server calls it on its event loop, once per alert that is anchored to a window,
/// when `alertsDemandAttention` is set or the audio output is unavailable.
public protocol AlertAttention: AnyObject {
    func alertNeedsAttention(windowID: UInt32, sceneID: String)
}

extension SoundServer {
    /// Where alerts ask for their window to be flagged (the X11 tracker, once it exists). Set
    /// it on the server's event loop, or before `start()`; held weakly.
    public var alertAttention: AlertAttention? {
        get { samples.attention }
        set { samples.attention = newValue }
    }
}
