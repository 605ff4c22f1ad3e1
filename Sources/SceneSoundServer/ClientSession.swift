import Logging
import NIOCore
import SceneSoundEngine
import SceneSoundProtocol

/// What a session uses of the server, handed to it when the client connects.
struct SessionDependencies {
    let configuration: ServerConfiguration
    let engineConfiguration: EngineConfiguration
    let commands: EngineCommandQueue
    let engineStreams: EngineStreams
    let scenes: SceneDirectory
    let head: HeadTracking
    let samples: SamplePlayback
    let headphoneEQ: HeadphoneEQSetting
    let hrtf: HRTFSetting
    let outputDevices: OutputDevices
    let counters: ServerCounters
    let registry: SessionRegistry
    /// The status document, serialized (STATUS_REQUEST).
    let statusJSON: () -> String
    let logger: Logger
}

/// One client's protocol state machine (SPEC.md): the handshake, every request and its reply,
/// the message rate, the limits, when the connection closes, and the stream owner behind it.
/// It sits behind `ProtocolFrameDecoder` and `ProtocolFrameEncoder`, sees whole `Frame`s and
/// writes `OutboundFrame`s, so an `EmbeddedChannel` drives it in tests. Confined to the
/// server's event loop, like everything it touches.
final class ClientSession: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = Frame
    typealias OutboundOut = OutboundFrame

    let sessionNumber: Int
    private let dependencies: SessionDependencies
    private var configuration: ServerConfiguration { dependencies.configuration }
    private(set) var clientName = ""
    private(set) var clientPID: UInt32 = 0
    /// The peer's pid from SO_PEERCRED (trusted, unlike HELLO's); 0 until admitted.
    private(set) var peerPID: Int32 = 0
    let streams: ClientStreams
    private var welcomed = false
    /// The protocol version agreed in the handshake (payload layouts depend on it).
    private var version: UInt16 = 1
    private var context: ChannelHandlerContext?
    private var logger: Logger
    private var closing = false
    private var rate: MessageRateLimiter
    private var lastRateError: NIODeadline?
    /// Since when the client has left more than the high-water mark of our messages unread.
    private var unreadSince: NIODeadline?

    init(sessionNumber: Int, dependencies: SessionDependencies) {
        self.sessionNumber = sessionNumber
        self.dependencies = dependencies
        let configuration = dependencies.configuration
        let engine = dependencies.engineConfiguration
        streams = ClientStreams(
            limits: .init(maximumStreams: configuration.maximumStreamsPerClient, bufferSeconds: configuration.streamBufferSeconds,
                          engineRateHz: engine.sampleRateHz, blockFrames: engine.blockFrames,
                          loopLimitFrames: Int(60 * engine.sampleRateHz)),
            engineStreams: dependencies.engineStreams, scenes: dependencies.scenes, commands: dependencies.commands)
        rate = MessageRateLimiter(messagesPerSecond: configuration.maximumMessagesPerSecond)
        logger = dependencies.logger
        logger[metadataKey: "client"] = "\(sessionNumber)"
    }

    var displayName: String { clientName.isEmpty ? "client \(sessionNumber)" : clientName }

    // MARK: Channel events

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        dependencies.registry.add(self)
    }

    func channelInactive(context: ChannelHandlerContext) {
        streams.closeAll()
        dependencies.samples.sessionEnded(self)
        dependencies.registry.remove(self)
        self.context = nil
        context.fireChannelInactive()
    }

    /// The client closed its side: the session is over (half-closure is only allowed so that
    /// our own graceful close can drain it). Admission news comes this way too.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case ChannelEvent.inputClosed:
            context.close(promise: nil)
        case PeerAdmission.admitted(let pid):
            peerPID = pid
        case PeerAdmission.refused(let error):
            reply(0, error)
            close()
        default:
            context.fireUserInboundEventTriggered(event)
        }
    }

    /// The framing layer's verdict on a frame it could not take (too large, reserved flags):
    /// reported, and the connection closed. Once closing, its complaints about the bytes that
    /// still arrive are ignored.
    func errorCaught(context: ChannelHandlerContext, error: Error) {
        guard !closing else { return }
        if let error = error as? ProtocolError {
            fail(error)
        } else {
            logger.debug("connection error: \(error)")
            close(graceful: false)
        }
    }

    /// The tick must run: the client stopped reading and its grace period is running.
    var needsTicking: Bool { unreadSince != nil }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { unreadSince = nil }
        context.fireChannelWritabilityChanged()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !closing else { return }
        let frame = unwrapInboundIn(data)
        // Audio is paced by credit; everything else by the message rate.
        if frame.typeCode != MessageType.streamData.rawValue, !rate.take(now: context.eventLoop.now) {
            return rejectForRate(frame, now: context.eventLoop.now)
        }
        do {
            try handle(frame)
        } catch {
            fail(error)
        }
    }

    // MARK: Sending and closing

    /// OUTPUT_DEVICE_WATCH: told of every change of the output device or its rendering.
    private(set) var watchesOutputDevice = false

    func send(_ message: Message, requestID: UInt32 = 0) {
        send([OutboundFrame(message: message, requestID: requestID)])
    }

    func send(_ frames: [OutboundFrame]) {
        guard !frames.isEmpty, let context, context.channel.isActive, !closing else { return }
        if !context.channel.isWritable, unreadSince == nil {
            unreadSince = context.eventLoop.now
            dependencies.commands.workArrived()  // its grace period runs out on the tick
        }
        for frame in frames { context.write(wrapOutboundOut(frame), promise: nil) }
        context.flush()
    }

    private func reply(_ requestID: UInt32, _ error: ProtocolError) {
        send(.error(ErrorReply(error)), requestID: requestID)
    }

    /// A protocol error: reported, and the connection closed if its code says so.
    private func fail(_ error: ProtocolError, requestID: UInt32 = 0) {
        dependencies.counters.rejectedFrames += 1
        reply(requestID, error)
        if error.code.closesConnection || !welcomed {
            logger.info("closing connection: \(error)")
            close()
        } else {
            logger.debug("rejected: \(error)")
        }
    }

    /// Closes after what was sent has gone out: our side is shut for writing first and what
    /// the client still sends is read and dropped, so that its last frames in flight do not
    /// turn into a reset that would swallow our final ERROR. Fully closed on its EOF, or after
    /// a grace period.
    func close(graceful: Bool = true) {
        guard !closing, let context else { return }
        closing = true
        let channel = context.channel
        if graceful {
            context.close(mode: .output, promise: nil)
        } else {
            channel.close(promise: nil)
        }
        channel.eventLoop.scheduleTask(in: .seconds(2)) { channel.close(promise: nil) }
    }

    /// A message over the rate is not carried out. A request still gets its one reply (the
    /// error); a one-way message is dropped, and the client hears why at most once a second so
    /// that a flood does not turn into a flood of errors.
    private func rejectForRate(_ frame: Frame, now: NIODeadline) {
        dependencies.counters.rateLimitedMessages += 1
        let error = ProtocolError(.limitExceeded,
            "more than \(configuration.maximumMessagesPerSecond) messages per second; message not carried out")
        if frame.requestID != 0 {
            return reply(frame.requestID, error)
        }
        if let last = lastRateError, now - last < .seconds(1) { return }
        lastRateError = now
        reply(0, error)
    }

    // MARK: Protocol

    private func handle(_ frame: Frame) throws(ProtocolError) {
        guard let type = MessageType(rawValue: frame.typeCode) else {
            throw ProtocolError(.unknownMessageType, "message type 0x\(String(frame.typeCode, radix: 16)) unknown")
        }
        let message: Message
        do {
            message = try Message.decode(frame: frame, version: version)
        } catch {
            guard !error.code.closesConnection, frame.requestID != 0, welcomed else { throw error }
            // A bad request gets its error with its own id; the connection lives on.
            dependencies.counters.rejectedFrames += 1
            return reply(frame.requestID, error)
        }
        guard welcomed else {
            guard case .hello(let hello) = message else {
                throw ProtocolError(.unexpectedMessage, "the first message must be HELLO, not \(type)")
            }
            return try handshake(hello, requestID: frame.requestID)
        }
        do {
            try dispatch(message, requestID: frame.requestID)
        } catch where !error.code.closesConnection {
            // A request refused: its one reply is the error; the connection lives on.
            reply(frame.requestID, error)
        }
    }

    private func handshake(_ hello: Hello, requestID: UInt32) throws(ProtocolError) {
        guard let version = ProtocolVersion.negotiate(clientMinimum: hello.minimumVersion,
                                                      clientMaximum: hello.maximumVersion) else {
            let range = ProtocolVersion.supported
            throw ProtocolError(.unsupportedVersion, "server supports protocol versions \(range.lowerBound)...\(range.upperBound)")
        }
        clientName = hello.clientName
        clientPID = hello.clientPID
        logger[metadataKey: "client"] = "\(sessionNumber) \(clientName)"
        welcomed = true
        self.version = version
        let engine = dependencies.engineConfiguration
        send(.welcome(Welcome(version: version, sampleRateHz: UInt32(engine.sampleRateHz),
                              blockFrames: UInt32(engine.blockFrames),
                              maxFrameBytes: UInt32(configuration.maximumFrameBytes),
                              maxStreams: UInt32(configuration.maximumStreamsPerClient),
                              maxSampleBytes: UInt32(configuration.maximumSampleBytes),
                              serverName: configuration.serverName)), requestID: requestID)
        logger.debug("handshake done")
    }

    /// Carries out one message. A thrown error that does not close the connection is the
    /// request's reply; one that does (`credit_exceeded`) ends the session.
    private func dispatch(_ message: Message, requestID: UInt32) throws(ProtocolError) {
        switch message {
        case .hello:
            throw ProtocolError(.unexpectedMessage, "HELLO was already exchanged")
        case .streamOpen(let open):
            try refuseWhileEngineBehind()
            let opened = try streams.open(open, peerPID: peerPID)
            send(.streamOpened(opened), requestID: requestID)
            logger.debug("stream \(opened.streamID) opened: \(open.kind) \(open.format.sampleFormat) \(open.format.channels) ch \(open.format.rateHz) Hz, scene '\(open.sceneID)'")
        case .streamData(let data):
            do {
                send(try streams.receive(data))
            } catch {
                fail(error)
            }
        case .streamDrain(let reference):
            try streams.drain(reference.streamID, requestID: requestID)
        case .streamClose(let reference):
            send(try streams.close(reference.streamID, requestID: requestID))
        case .streamSetVolume(let change):
            try streams.setVolume(change)
            send(.ok, requestID: requestID)
        case .streamSetScene(let change):
            try streams.setScene(change, peerPID: peerPID)
            send(.ok, requestID: requestID)
        case .scenePlace(let place):
            guard !SceneID.isWindowScene(place.sceneID) else {
                throw ProtocolError(.notPermitted, "x11: and wayland: scenes follow their window and cannot be placed")
            }
            try dependencies.scenes.place(place.sceneID, at: place.position)
            send(.ok, requestID: requestID)
        case .sceneBindWindow(let bind):
            guard !SceneID.isWindowScene(bind.sceneID) else {
                throw ProtocolError(.notPermitted, "x11: and wayland: scenes name their window already")
            }
            try dependencies.scenes.bind(bind.sceneID, window: bind.windowID)
            send(.ok, requestID: requestID)
        case .sceneUnbind(let unbind):
            guard !SceneID.isWindowScene(unbind.sceneID) else {
                throw ProtocolError(.notPermitted, "x11: and wayland: scenes cannot be unbound")
            }
            guard dependencies.scenes.unbind(unbind.sceneID) else {
                throw ProtocolError(.unknownScene, "scene '\(unbind.sceneID)' has no binding")
            }
            send(.ok, requestID: requestID)
        case .sceneList:
            send(.sceneListReply(SceneListReply(entries: dependencies.scenes.listEntries())), requestID: requestID)
        case .headPose(let pose):
            dependencies.head.update(pose)
        case .headRecenter:
            dependencies.head.recenter()
            send(.ok, requestID: requestID)
        case .headTrackingSet(let request):
            let mode = HeadTrackingMode(rawValue: request.mode.name) ?? .full
            let recenter = request.recenterAfterSeconds > 0 ? Double(request.recenterAfterSeconds) : nil
            dependencies.head.setTracking(mode: mode, recenterAfterSeconds: recenter)
            logger.info("head tracking: \(mode.rawValue), recentering \(recenter.map { "after \($0) s" } ?? "off")")
            send(.ok, requestID: requestID)
        case .headTrackerUse(let request):
            let tracker = HeadTrackerChoice(rawValue: request.tracker.name) ?? .any
            let rate = request.posesPerSecond > 0 ? Int(request.posesPerSecond) : nil
            dependencies.head.useTracker(tracker, posesPerSecond: rate)
            logger.info("head tracker: \(tracker.rawValue), \(rate.map { "\($0) poses/s" } ?? "each input's own rate limit")")
            send(.ok, requestID: requestID)
        case .statusRequest:
            send(.statusReply(StatusReply(json: dependencies.statusJSON())), requestID: requestID)
        case .headphoneEQUse(let request):
            try dependencies.headphoneEQ.use(path: request.path)
            dependencies.outputDevices.headphoneEQChosen(request.path)
            logger.info("headphone EQ: \(request.path.isEmpty ? "none" : request.path)")
            send(.ok, requestID: requestID)
        case .hrtfUse(let request):
            guard let eventLoop = context?.eventLoop else { return }
            let path = request.path
            let devices = dependencies.outputDevices
            // Kept for the next start only when no device is known to keep it for.
            try dependencies.hrtf.use(path: path, on: eventLoop, keepAsDefault: devices.device == nil) { [weak self] result in
                if case .success = result { devices.hrtfChosen(path) }
                guard let self else { return }
                switch result {
                case .success:
                    logger.info("HRTF set: \(path)")
                    send(.ok, requestID: requestID)
                case .failure(let error):
                    logger.info("HRTF set \(path) refused: \(error)")
                    reply(requestID, error)
                }
            }
        case .spatialUse(let request):
            guard let spatial = OutputRendering.Spatial(rawValue: request.spatial.name) else {
                throw ProtocolError(.invalidArgument, "spatial \(request.spatial.name) unknown")
            }
            dependencies.outputDevices.useSpatial(spatial)
            logger.info("spatial \(spatial.rawValue) for \(dependencies.outputDevices.device?.key ?? "the output")")
            send(.ok, requestID: requestID)
        case .renderUse(let request):
            guard let render = RenderPreference(rawValue: request.render.name) else {
                throw ProtocolError(.invalidArgument, "render \(request.render.name) unknown")
            }
            dependencies.outputDevices.useRender(render)
            logger.info("render \(render.rawValue) for \(dependencies.outputDevices.device?.key ?? "the output")")
            send(.ok, requestID: requestID)
        case .sampleUpload(let chunk):
            send([dependencies.samples.upload(chunk, from: self, requestID: requestID)])
        case .samplePlay(let play):
            try refuseWhileEngineBehind()
            let now = context.map { Double($0.eventLoop.now.uptimeNanoseconds) * 1e-9 } ?? 0
            send(try dependencies.samples.play(play, from: self, requestID: requestID, nowSeconds: now))
        case .outputDeviceWatch:
            watchesOutputDevice = true
            send(.ok, requestID: requestID)
            send(.outputDeviceChanged(dependencies.outputDevices.changedEvent))
        case .welcome, .ok, .error, .sceneListReply, .streamOpened, .samplePlaying, .statusReply,
             .creditGranted, .streamEnded, .streamError, .playbackEnded, .outputDeviceChanged:
            // Server-to-client types; Message.decode(frame:) already rejects their direction.
            throw ProtocolError(.unexpectedMessage, "\(message.type) is not sent by clients")
        }
    }

    /// New streams and plays wait for nothing: while the render thread is far behind on its
    /// commands they are refused, and the client may try again.
    private func refuseWhileEngineBehind() throws(ProtocolError) {
        let commands = dependencies.commands
        guard commands.isBacklogged else { return }
        commands.refusedRequests += 1
        throw ProtocolError(.limitExceeded,
            "the renderer is \(commands.waitingCount) commands behind; nothing new starts until it catches up")
    }

    // MARK: Tick (called by the server on the event loop)

    /// Drops a client that has not read its messages for the grace period; otherwise grants
    /// credit, tops up loops and answers drains.
    func tick(deliveredFrame: Int) {
        guard !closing, let context else { return }
        // A client that stops reading its replies and events would make us buffer without
        // bound: after a grace period it is disconnected, and its streams freed.
        if let since = unreadSince, context.eventLoop.now - since > .seconds(Int64(configuration.unreadGraceSeconds)) {
            logger.warning("closing connection: the client has not read its messages for \(configuration.unreadGraceSeconds) s")
            dependencies.counters.stalledClients += 1
            close(graceful: false)  // it reads nothing, so nothing more can reach it
            return
        }
        send(streams.tick(deliveredFrame: deliveredFrame))
    }

    /// At shutdown: every stream ends.
    func shutDown() {
        send(streams.shutdownEvents())
        close()
    }
}
