import SceneSoundDSP

/// Identifies a stream between the server and the engine.
public typealias StreamID = UInt32

/// What the server asks of the render thread. Everything a command carries was allocated
/// before it was sent.
public enum EngineCommand {
    case addStream(EngineStream)
    case removeStream(StreamID)
    /// Ask for an event once ring frame `throughFrame` (exclusive) has been rendered to the
    /// output. A later request replaces an earlier one (its target is never smaller).
    case notifyWhenDrained(StreamID, throughFrame: Int)
    case setGain(StreamID, linear: Float)
    case setMode(StreamID, SpatialMode)
    case setScene(StreamID, sceneIndex: Int)
    case placeScene(index: Int, position: Vector3, widthMetres: Double)
    case setSceneLowpass(index: Int, cutoffHz: Double, gain: Float)
    /// A scene slot the server freed: back to straight ahead, unmuffled, at once (no glide), so
    /// that the scene that reuses it starts clean. The server sends it only once no stream
    /// renders at the slot any more.
    case resetScene(index: Int)
    case setHeadPose(HeadPose, glide: Bool)
    /// How far and how fast alerts duck playback streams.
    case setDucking(DuckingParameters)
    /// The headphone equalization from now on (nil: none), faded in over the old one; the one
    /// it replaces comes back as `.retiredHeadphoneEQ`.
    case setHeadphoneEQ(HeadphoneEQFilter?)
    /// Another HRTF set from now on, crossfaded in (SpatialRenderer.beginSwitch); the switch
    /// comes back as `.retiredHRTF` with the old set's state. Streams added after it wait
    /// until the crossfade is over (they carry voices for the new set).
    case switchHRTF(HRTFSwitch)
    /// How the mix is rendered from now on (the output device's method and the listener's
    /// spatial choice for it), crossfaded from the one before.
    case setRendering(OutputRendering)
}

/// What the render thread tells the server.
public enum EngineEvent {
    /// The stream's frames up to `throughFrame` have left the engine; the last of them is in
    /// the output before output frame `outputFrame`.
    case drained(StreamID, throughFrame: Int, outputFrame: Int)
    /// A stream removed from the render thread, handed back to be released off it.
    case released(EngineStream)
    /// A headphone equalization the renderer no longer uses, to be released off it.
    case retiredHeadphoneEQ(HeadphoneEQFilter)
    /// A finished HRTF switch, holding the old set's stage and voices, to be released off it.
    case retiredHRTF(HRTFSwitch)
}

/// A stream as the engine holds it: the render source plus its scene.
public final class EngineStream: @unchecked Sendable {
    public let id: StreamID
    public let source: RenderSource
    public let input: RingInput
    @exclusivity(unchecked) var sceneIndex: Int
    /// The gain the server set; the scene's gain multiplies it.
    @exclusivity(unchecked) var gain: Float
    /// Drain target in ring frames (0: none pending) and the output frame it is reached at.
    @exclusivity(unchecked) var drainThroughFrame = 0
    @exclusivity(unchecked) var drainAtOutputFrame = Int.max
    /// Set when the server removes the stream: fade for one block, then hand it back.
    @exclusivity(unchecked) var removing = false
    /// An alert: while it has audio to play, the streams that `ducksUnderAlerts` are lowered;
    /// it ignores its scene's muffling (a minimized window's alert stays clearly audible) and
    /// must never be degraded under load. Set before `addStream`, read only by the render thread.
    @exclusivity(unchecked) public var isAlert = false { didSet { source.isAlert = isAlert } }
    /// A playback stream: lowered while an alert plays. Set before `addStream`.
    @exclusivity(unchecked) public var ducksUnderAlerts = false

    public init(id: StreamID, source: RenderSource, input: RingInput, sceneIndex: Int) {
        self.id = id
        self.source = source
        self.input = input
        self.sceneIndex = sceneIndex
        gain = source.gain
    }
}
