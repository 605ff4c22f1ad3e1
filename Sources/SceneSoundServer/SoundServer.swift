import Foundation
import Logging
import NIOCore
import NIOPosix
import SceneSoundDSP
import SceneSoundEngine
import SceneSoundOutputs
import SceneSoundProtocol
import SceneSoundX11

/// `struct ucred` from <sys/socket.h> (Swift's Glibc hides it without _GNU_SOURCE).
struct PeerCredentials: Sendable {
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0
}

/// Health counters shown by `status`.
struct ServerCounters {
    var rejectedFrames = 0
    var refusedConnections = 0
    var stalledClients = 0
    var rateLimitedMessages = 0
    var connections = 0
}

/// The socket server: accepts clients on the Unix socket, runs their sessions on one event
/// loop, feeds the engine and relays its events. Everything here is confined to that loop.
public final class SoundServer: @unchecked Sendable {
    public let configuration: ServerConfiguration
    public let engine: Engine
    public let output: OutputBackend
    let logger: Logger
    let hrtfStatus: StatusDocument.HRTF
    let eventLoop: EventLoop
    private let group: MultiThreadedEventLoopGroup
    private var serverChannel: Channel?
    private var sessions: [ObjectIdentifier: ClientSession] = [:]
    private var sessionCounter = 0
    private var nextStreamID: StreamID = 1
    private var retired: [StreamID: ServerStream] = [:]
    private var tickTask: RepeatedTask?
    lazy var scenes = SceneRegistry(engine: engine)
    /// The sample cache and system/alert plays (SamplePlayback.swift).
    lazy var samples = SamplePlayback(server: self)
    var counters = ServerCounters()
    private let startTime = Date()

    lazy var head = HeadTracking(engine: engine)
    private(set) var windows: WindowAnchoring?
    /// Other apps' streams, when the daemon captures them (it owns them; status reads them).
    weak var capturedApps: CapturedAppStreams?
    private var windowTracker: WindowTracker?
    private var attentionAdapter: X11AlertAttention?
    private var openTrackChannel: Channel?

    public init(configuration: ServerConfiguration, engine: Engine, output: OutputBackend,
                hrtfPath: String, logger: Logger) {
        self.configuration = configuration
        self.engine = engine
        self.output = output
        self.logger = logger
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        eventLoop = group.next()
        hrtfStatus = StatusDocument.HRTF(path: hrtfPath, measurements: engine.hrtf.measurementCount,
                                         filterTaps: engine.hrtf.filterTaps, rateHz: engine.hrtf.sampleRateHz)
    }

    /// Binds the socket (directory 0700, socket 0600) and starts serving.
    public func start() throws {
        try SocketPlacement.prepare(path: configuration.socketPath)
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: 64)
            // Past 1 MiB of unread output the channel turns unwritable (see ClientSession.tick).
            .childChannelOption(ChannelOptions.writeBufferWaterMark, value: .init(low: 256 * 1024, high: 1024 * 1024))
            // A client's EOF is seen as such, so a graceful close can wait for it.
            .childChannelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
            .childChannelInitializer { [unowned self] channel in
                self.eventLoop.makeCompletedFuture {
                    try self.accept(channel)
                }
            }
        // Created 0600 (bind makes the file under the umask; listening starts straight after, so
        // a chmod afterwards would leave a moment at the looser mode).
        let previousMask = umask(0o177)
        let bound = Result { try bootstrap.bind(unixDomainSocketPath: configuration.socketPath).wait() }
        umask(previousMask)
        let channel = try bound.get()
        guard chmod(configuration.socketPath, 0o600) == 0 else {
            throw ServerError("cannot restrict \(configuration.socketPath) to its owner: \(String(cString: strerror(errno)))")
        }
        serverChannel = channel
        tickTask = eventLoop.scheduleRepeatedTask(initialDelay: .zero,
                                                  delay: .nanoseconds(Int64(configuration.tickSeconds * 1e9))) { [unowned self] _ in
            self.tick()
        }
        logger.info("listening on \(configuration.socketPath)")
    }

    /// Stops accepting, ends every session, and stops the event loop.
    /// Stops accepting first (and removes the socket), so that no client connects to a server
    /// on its way out, then ends every session and stops the event loop.
    public func stop() {
        try? serverChannel?.close().wait()
        unlink(configuration.socketPath)
        try? eventLoop.submit { [self] in
            tickTask?.cancel()
            for session in sessions.values { session.shutDown() }
        }.wait()
        try? openTrackChannel?.close().wait()
        windowTracker?.stop()
        try? group.syncShutdownGracefully()
    }

    private func accept(_ channel: Channel) throws {
        sessionCounter += 1
        let session = ClientSession(server: self, sessionNumber: sessionCounter)
        try channel.pipeline.syncOperations.addHandler(session)
        counters.connections += 1
        sessions[ObjectIdentifier(session)] = session
    }

    /// Called by a session once its channel is active: who is at the other end (only the
    /// server's own user, and root if allowed) and whether there is room for them.
    func admit(_ session: ClientSession, channel: Channel) {
        guard let provider = channel as? SocketOptionProvider else {
            return refuse(session, ProtocolError(.notPermitted, "peer credentials unavailable"))
        }
        let credentials: EventLoopFuture<PeerCredentials> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
        credentials.whenComplete { [unowned self] result in
            switch result {
            case .success(let peer) where peer.uid == getuid() || (peer.uid == 0 && self.configuration.allowRoot):
                session.peerPID = peer.pid
                if self.sessions.count > self.configuration.maximumClients {
                    self.refuse(session, ProtocolError(.limitExceeded, "the server takes \(self.configuration.maximumClients) clients at most"))
                }
            case .success(let peer):
                self.refuse(session, ProtocolError(.notPermitted, "uid \(peer.uid) may not use uid \(getuid())'s sound server"))
            case .failure(let error):
                self.refuse(session, ProtocolError(.notPermitted, "peer credentials unavailable: \(error)"))
            }
        }
    }

    private func refuse(_ session: ClientSession, _ error: ProtocolError) {
        counters.refusedConnections += 1
        logger.warning("refused a connection: \(error.detail)")
        session.send(.error(ErrorReply(error)))
        session.close()
    }

    func sessionEnded(_ session: ClientSession) {
        samples.sessionEnded(session)
        sessions.removeValue(forKey: ObjectIdentifier(session))
    }

    var totalStreamCount: Int { sessions.values.reduce(0) { $0 + $1.streams.count } + retired.count }

    // MARK: Streams

    func makeStream(_ open: StreamOpen, peerPID: Int32) throws -> ServerStream {
        let format = open.format
        let rate = engine.configuration.sampleRateHz
        let converter = try PCMConverter(format: format, engineRateHz: rate)
        let capacity = max(Int(configuration.streamBufferSeconds * rate), engine.configuration.blockFrames * 4)
        let ring = AudioRing(capacityFrames: capacity, channelCount: Int(format.channels))
        let input = RingInput(ring: ring)
        let id = nextStreamID
        nextStreamID &+= 1
        let sceneIndex = sceneIndex(for: open.sceneID, peerPID: peerPID)
        let source = RenderSource(
            input: input, channelCount: Int(format.channels), mode: Self.engineMode(open.spatialMode),
            channelPositions: Array(repeating: scenes.defaultPosition, count: Int(format.channels)),
            gain: Decibels.linearGain(Double(open.volumeDecibels)), hrtf: engine.hrtf,
            maximumFrames: engine.configuration.blockFrames)
        let engineStream = EngineStream(id: id, source: source, input: input, sceneIndex: sceneIndex)
        engineStream.isAlert = open.kind == .alert
        engineStream.ducksUnderAlerts = open.kind == .playback
        return ServerStream(id: id, open: open, converter: converter, engineStream: engineStream,
                            loopLimitFrames: Int(60 * rate))
    }

    /// The engine slot for a scene a client plays to. With windows tracked, "no scene" and a
    /// name the program never bound follow the program's own window (`_NET_WM_PID`).
    func sceneIndex(for id: String, peerPID: Int32) -> Int {
        guard let windows, peerPID > 0 else { return scenes.index(for: id) }
        let sceneID = id.isEmpty ? SceneRegistry.processSceneID(pid: peerPID) : id
        let index = scenes.index(for: sceneID)
        scenes.adoptForProcess(sceneID, pid: peerPID)
        windows.place(sceneID)
        return index
    }

    // MARK: Windows

    /// Follows the windows of an X display (nil: $DISPLAY) and anchors scenes to them.
    public func startWindowTracking(displayName: String?, settings: WindowAnchoringSettings = .init()) {
        let anchoring = WindowAnchoring(server: self, settings: settings)
        let tracker = WindowTracker(configuration: .init(displayName: displayName)) { [weak self] snapshot in
            // Handed to the event loop; the tracker thread never waits on the server.
            self?.eventLoop.execute { self?.windows?.apply(snapshot) }
        }
        try? eventLoop.submit {
            self.windows = anchoring
            self.windowTracker = tracker
            let attention = X11AlertAttention(tracker: tracker)
            self.attentionAdapter = attention  // alertAttention holds it weakly
            self.alertAttention = attention
        }.wait()
        tracker.start()
        logger.info("following windows on display \(displayName ?? "$DISPLAY")")
    }

    static func engineMode(_ mode: SceneSoundProtocol.SpatialMode) -> SceneSoundEngine.SpatialMode {
        switch mode {
        case .anchored: return .anchored
        case .headLocked: return .headLocked
        case .off: return .off
        }
    }

    func retire(_ stream: ServerStream) {
        retired[stream.id] = stream
    }

    // MARK: The tick: engine events, drains, credit

    private func tick() {
        while let event = engine.events.pop() {
            switch event {
            case .drained(let id, let through, let outputFrame):
                for session in sessions.values { session.engineDrained(id, throughFrame: through, outputFrame: outputFrame) }
                samples.engineDrained(id, outputFrame: outputFrame)
            case .released(let stream):
                // The render thread let go of it: its memory is freed here, off that thread.
                retired.removeValue(forKey: stream.id)
            }
        }
        let delivered = engine.deliveredFrameCount
        for session in sessions.values { session.tick(deliveredFrame: delivered) }
        samples.tick(deliveredFrame: delivered)
    }

    // MARK: Head

    func setHeadPose(_ pose: SceneSoundProtocol.HeadPose) {
        let q = pose.orientation
        let position = pose.position.map { Vector3(x: Double($0.x), y: Double($0.y), z: Double($0.z)) } ?? .zero
        head.update(SceneSoundDSP.HeadPose(
            orientation: SceneSoundDSP.Quaternion(w: Double(q.w), x: Double(q.x), y: Double(q.y), z: Double(q.z)),
            positionMetres: position))
    }

    func recenterHead() { head.recenter() }

    /// Listens for opentrack on 127.0.0.1:`port` (loopback only: head poses are the user's).
    public func startOpenTrack(port: Int) throws {
        let bootstrap = DatagramBootstrap(group: group)
            .channelInitializer { [unowned self] channel in
                self.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(OpenTrackHandler(server: self))
                }
            }
        do {
            openTrackChannel = try bootstrap.bind(host: "127.0.0.1", port: port).wait()
        } catch {
            throw ServerError("cannot listen for opentrack on 127.0.0.1:\(port): \(error)")
        }
        logger.info("opentrack input on 127.0.0.1:\(port)")
    }

    func receiveOpenTrack(_ bytes: ByteBuffer) {
        let pose = bytes.withUnsafeReadableBytes { OpenTrackPacket.decode($0) }
        guard let pose else {
            head.openTrackRejected += 1
            return
        }
        head.openTrackAccepted += 1
        head.update(pose)
    }

    // MARK: Status

    func sceneListEntries() -> [SceneListEntry] {
        scenes.sortedScenes.map { scene in
            let p = SphericalPosition(cartesian: scene.position)
            let anchor: SceneAnchor
            var window: UInt32 = 0
            switch scene.anchor {
            case .none: anchor = .none
            case .window(let id): anchor = .window; window = id
            case .position: anchor = .position
            case .process:
                // Following its program's window: a window anchor once the window is known.
                if let found = scene.window?.windowID { anchor = .window; window = found } else { anchor = .none }
            }
            return SceneListEntry(sceneID: scene.id, anchor: anchor, windowID: window,
                                  position: ScenePosition(azimuthDegrees: Float(p.azimuthDegrees),
                                                          elevationDegrees: Float(p.elevationDegrees),
                                                          distanceMetres: Float(p.distanceMetres)))
        }
    }

    func statusDocument() -> StatusDocument {
        StatusReport(server: self, sessions: Array(sessions.values), startTime: startTime).document
    }
}

public struct ServerError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Feeds opentrack datagrams to the server, on its event loop.
final class OpenTrackHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>
    private unowned let server: SoundServer

    init(server: SoundServer) { self.server = server }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        server.receiveOpenTrack(unwrapInboundIn(data).data)
    }
}

/// Alerts flag their window through the tracker's connection (`_NET_WM_STATE_DEMANDS_ATTENTION`).
final class X11AlertAttention: AlertAttention {
    private let tracker: WindowTracker
    init(tracker: WindowTracker) { self.tracker = tracker }

    func alertNeedsAttention(windowID: UInt32, sceneID: String) {
        tracker.setDemandsAttention(windowID: windowID)
    }
}
