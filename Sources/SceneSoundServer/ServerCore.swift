import Foundation
import Logging
import NIOCore
import SceneSoundEngine
import SceneSoundOutputs
import SceneSoundProtocol
import SceneSoundWindows

/// Health counters shown by `status`. Event-loop confined.
final class ServerCounters {
    var rejectedFrames = 0
    var refusedConnections = 0
    var stalledClients = 0
    var rateLimitedMessages = 0
    var connections = 0
}

/// The connected sessions: for the tick, status and the client limit. Event-loop confined.
final class SessionRegistry {
    private var sessions: [ObjectIdentifier: ClientSession] = [:]

    func add(_ session: ClientSession) { sessions[ObjectIdentifier(session)] = session }
    func remove(_ session: ClientSession) { sessions[ObjectIdentifier(session)] = nil }
    var count: Int { sessions.count }
    /// In the order they connected.
    var all: [ClientSession] { sessions.values.sorted { $0.sessionNumber < $1.sessionNumber } }
}

/// Everything the server runs on its event loop, built and wired once: the engine command
/// queue, the engine's streams, scenes, head tracking, system sounds, the sessions, and the
/// tick that relays the engine's events. It knows no sockets: `SoundServer` puts it behind the
/// Unix socket, and tests drive its sessions through `EmbeddedChannel`s and call `tick()`
/// after rendering blocks themselves. Event-loop confined (hence unchecked: it is handed to the
/// loop's closures, and touched only there).
final class ServerCore: @unchecked Sendable {
    let configuration: ServerConfiguration
    let engine: Engine
    let commands: EngineCommandQueue
    let engineStreams: EngineStreams
    let scenes: SceneDirectory
    let head: HeadTracking
    let samples: SamplePlayback
    let headphoneEQ: HeadphoneEQSetting
    let hrtf: HRTFSetting
    let outputDevices: OutputDevices
    let counters = ServerCounters()
    let sessions = SessionRegistry()
    let outputStatus: () -> OutputStatus
    var hrtfStatus: StatusDocument.HRTF { hrtf.status }
    let logger: Logger
    let startTime = Date()
    /// Other apps' streams, when the daemon captures them (it owns them; status reads them).
    weak var capturedApps: CapturedAppStreams?
    /// Told on the tick when the first stream starts and when the last one ends, and when the
    /// output rests (not playing) with streams still open.
    var playingChanged: ((Bool) -> Void)?
    private var wasPlaying = false
    private var sessionCounter = 0

    init(configuration: ServerConfiguration, engine: Engine, outputStatus: @escaping () -> OutputStatus,
         hrtfPath: String, logger: Logger) {
        self.configuration = configuration
        self.engine = engine
        self.outputStatus = outputStatus
        self.logger = logger
        commands = EngineCommandQueue(queue: engine.commands, refusalThreshold: configuration.maximumWaitingEngineCommands)
        let sceneRegistry = SceneRegistry(commands: commands, defaultPosition: engine.defaultScenePosition,
                                          maximumScenes: engine.maximumScenes)
        engineStreams = EngineStreams(engine: engine, commands: commands, scenes: sceneRegistry)
        scenes = SceneDirectory(registry: sceneRegistry)
        // A pose is heard after the output's latency and the limiter's look-ahead.
        let lookAheadSeconds = Double(engine.renderer.latencyFrames) / engine.configuration.sampleRateHz
        head = HeadTracking(engine: engine, commands: commands, settings: configuration.headTracking,
                            latencySeconds: { (outputStatus().latencySeconds ?? 0) + lookAheadSeconds })
        samples = SamplePlayback(configuration: configuration.samples, maximumSampleBytes: configuration.maximumSampleBytes,
                                 engineRateHz: engine.configuration.sampleRateHz, engineStreams: engineStreams,
                                 scenes: scenes, commands: commands, outputConnected: { outputStatus().connected },
                                 renderedFrames: { engine.renderedFrames },
                                 logger: logger)
        headphoneEQ = HeadphoneEQSetting(commands: commands, sampleRateHz: engine.configuration.sampleRateHz)
        if let filter = configuration.headphoneEQ { headphoneEQ.use(filter) }
        hrtf = HRTFSetting(engine: engine, path: hrtfPath, commands: commands, engineStreams: engineStreams,
                           loader: configuration.hrtfLoader, chosen: configuration.hrtfChosen)
        let store = DeviceSettingsStore(filePath: configuration.deviceSettingsPath) { [logger] in logger.warning("\($0)") }
        outputDevices = OutputDevices(commands: commands, hrtf: hrtf, headphoneEQ: headphoneEQ, store: store,
                                      preference: configuration.renderPreference, defaults: configuration.deviceDefaults,
                                      logger: logger)
        outputDevices.changed = { [unowned self] in
            let event = Message.outputDeviceChanged(outputDevices.changedEvent)
            for session in sessions.all where session.watchesOutputDevice { session.send(event) }
        }
    }

    // MARK: Sessions

    /// A new client's pipeline: framing, then its session. Returns the session.
    @discardableResult
    func addSession(to pipeline: ChannelPipeline.SynchronousOperations) throws -> ClientSession {
        sessionCounter += 1
        counters.connections += 1
        let session = ClientSession(sessionNumber: sessionCounter, dependencies: SessionDependencies(
            configuration: configuration, engineConfiguration: engine.configuration, commands: commands,
            engineStreams: engineStreams, scenes: scenes, head: head, samples: samples, headphoneEQ: headphoneEQ,
            hrtf: hrtf, outputDevices: outputDevices, counters: counters,
            registry: sessions, statusJSON: { [weak self] in self?.statusDocument().serialized ?? "{}" }, logger: logger))
        try pipeline.addHandler(ByteToMessageHandler(ProtocolFrameDecoder(maximumFrameBytes: configuration.maximumFrameBytes)))
        try pipeline.addHandler(MessageToByteHandler(ProtocolFrameEncoder()))
        try pipeline.addHandler(session)
        return session
    }

    /// At shutdown: every session ends its streams and closes.
    func shutDown() {
        for session in sessions.all { session.shutDown() }
    }

    // MARK: The tick: engine events, drains, credit

    /// Hands on commands that waited for room, relays the engine's events, and lets every
    /// session and play answer what the output has now delivered.
    /// Nothing waits for the tick: no command for the engine, no event from it, no client
    /// whose unread grace period runs. (With the engine quiet, the tick may stop.)
    var isSettled: Bool {
        commands.isEmpty && engine.events.count == 0 && !sessions.all.contains { $0.needsTicking }
    }

    func tick() {
        commands.flush()
        head.tick()
        scenes.registry.freeExpired()
        let sessions = sessions.all
        while let event = engine.events.pop() {
            switch event {
            case .drained(let id, let through, let outputFrame):
                for session in sessions { session.streams.engineDrained(id, throughFrame: through, outputFrame: outputFrame) }
                samples.engineDrained(id, outputFrame: outputFrame)
            case .released(let stream):
                engineStreams.released(stream)
            case .retiredHeadphoneEQ, .retiredHRTF:
                break  // released here, off the render thread
            }
        }
        let delivered = engine.deliveredFrameCount
        for session in sessions { session.tick(deliveredFrame: delivered) }
        samples.tick(deliveredFrame: delivered)
        reportPlaying(engineStreams.count > 0)
    }

    /// The output rests: whatever streams stay open are silent, so nothing needs following
    /// closely (a compositor's re-query timer stops with the tick). The first tick after the
    /// wake reports them again.
    func resting() { reportPlaying(false) }

    private func reportPlaying(_ playing: Bool) {
        if playing != wasPlaying {
            wasPlaying = playing
            playingChanged?(playing)
        }
    }

    // MARK: Windows

    /// Anchors scenes to windows from now on; snapshots go to the returned anchoring's `apply`.
    @discardableResult
    func anchorToWindows(settings: WindowAnchoringSettings) -> WindowAnchoring {
        let anchoring = WindowAnchoring(scenes: scenes.registry, commands: commands, settings: settings)
        scenes.windows = anchoring
        return anchoring
    }

    /// A window snapshot from the tracker: scenes follow their windows, and captured apps
    /// look for their windows again when windows came, went or another became active.
    func applyWindows(_ snapshot: WindowSnapshot) {
        guard let windows = scenes.windows else { return }
        if windows.apply(snapshot) { capturedApps?.windowsChanged() }
    }

    // MARK: Status

    func statusDocument() -> StatusDocument {
        StatusReport(core: self).document
    }
}
