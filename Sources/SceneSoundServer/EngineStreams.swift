import SceneSoundDSP
import SceneSoundEngine
import SceneSoundProtocol

/// Every stream the server puts into the engine, client streams and sample plays alike: their
/// ids, their construction (one place for both), and how many the engine holds — counted from
/// `add` until the render thread hands the stream back, so that a removed stream still fading
/// out counts against `maximumStreams`. Each stream holds the scene slot it renders at over
/// the same span, so that a slot is freed only once the render thread no longer uses it.
/// Event-loop confined.
final class EngineStreams {
    private let commands: EngineCommandQueue
    private let scenes: SceneRegistry
    /// The scene slot each stream renders at (acquired from `scenes` by whoever made it).
    private var sceneSlots: [StreamID: Int] = [:]
    /// The set new streams get voices for: the one the engine renders once the commands
    /// queued so far are applied (HRTFSetting changes it as it queues a switch).
    var hrtf: HRTFSet
    /// Every stream added and not yet handed back (an HRTF switch brings each its voices).
    private(set) var live: [StreamID: EngineStream] = [:]
    private let blockFrames: Int
    private let defaultPosition: Vector3
    let maximumStreams: Int
    /// Streams added and not yet released by the render thread.
    private(set) var count = 0
    private var nextClientID: StreamID = 1
    /// Plays take ids from the top half of the id space, so they never collide with client
    /// streams (numbered from 1) however long the server runs.
    private var nextPlayID: StreamID = playIDBase
    private static let playIDBase: StreamID = 0x8000_0000

    init(engine: Engine, commands: EngineCommandQueue, scenes: SceneRegistry) {
        self.commands = commands
        self.scenes = scenes
        hrtf = engine.hrtf
        blockFrames = engine.configuration.blockFrames
        defaultPosition = engine.defaultScenePosition
        maximumStreams = engine.maximumStreams
    }

    var hasRoom: Bool { count < maximumStreams }

    enum Owner { case client, play }

    /// A new engine stream reading `input`, at the default place until its scene is applied.
    /// Alerts duck playback streams; playback streams are the ones ducked. `sceneIndex` was
    /// acquired for it (`SceneDirectory.acquire`): the stream now holds it, and must be added.
    /// `layout`: the standard one for the channel count when nil.
    func make(_ owner: Owner, input: RingInput, channelCount: Int, layout: ChannelLayout? = nil, kind: StreamKind,
              spatialMode: SceneSoundProtocol.SpatialMode, volumeDecibels: Float, sceneIndex: Int) -> EngineStream {
        let id: StreamID
        switch owner {
        case .client:
            id = nextClientID
            nextClientID = nextClientID == Self.playIDBase - 1 ? 1 : nextClientID + 1
        case .play:
            id = nextPlayID
            nextPlayID = nextPlayID == .max ? Self.playIDBase : nextPlayID + 1
        }
        let source = RenderSource(
            input: input, channelCount: channelCount, layout: layout, mode: Self.engineMode(spatialMode),
            channelPositions: Array(repeating: defaultPosition, count: channelCount),
            gain: Decibels.linearGain(Double(volumeDecibels)), hrtf: hrtf, maximumFrames: blockFrames)
        let stream = EngineStream(id: id, source: source, input: input, sceneIndex: sceneIndex)
        stream.isAlert = kind == .alert
        stream.ducksUnderAlerts = kind == .playback
        sceneSlots[id] = sceneIndex
        return stream
    }

    func add(_ stream: EngineStream) {
        count += 1
        live[stream.id] = stream
        commands.push(.addStream(stream))
    }

    /// The stream's gain from the next block on (the renderer ramps to it over that block).
    func setGain(_ id: StreamID, linear: Float) {
        commands.push(.setGain(id, linear: linear))
    }

    /// The stream's spatial mode from the next block on, switched as it is: fade it out first
    /// (`setGain`) where the switch must not be heard.
    func setMode(_ id: StreamID, _ mode: SceneSoundProtocol.SpatialMode) {
        commands.push(.setMode(id, Self.engineMode(mode)))
    }

    /// Stops the stream in the engine; it counts until `released`.
    func remove(_ id: StreamID) {
        commands.push(.removeStream(id))
    }

    /// Moves a stream to another scene slot (acquired for it); its old one is let go after the
    /// command that moves it, so nothing that reuses the old slot can reach the engine first.
    func setScene(_ id: StreamID, sceneIndex: Int) {
        commands.push(.setScene(id, sceneIndex: sceneIndex))
        let previous = sceneSlots.updateValue(sceneIndex, forKey: id)
        if let previous { scenes.release(index: previous) }
    }

    /// The render thread handed a removed stream back (its memory is freed here, off that
    /// thread); its scene slot is free of it now.
    func released(_ stream: EngineStream) {
        count -= 1
        live[stream.id] = nil
        if let slot = sceneSlots.removeValue(forKey: stream.id) { scenes.release(index: slot) }
    }

    static func engineMode(_ mode: SceneSoundProtocol.SpatialMode) -> SceneSoundEngine.SpatialMode {
        switch mode {
        case .anchored: return .anchored
        case .headLocked: return .headLocked
        case .off: return .off
        }
    }
}
