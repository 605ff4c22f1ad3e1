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
        get { core.samples.attention }
        set { core.samples.attention = newValue }
    }
}
