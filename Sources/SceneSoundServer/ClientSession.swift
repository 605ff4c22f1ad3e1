import Foundation
import Logging
import NIOCore
import SceneSoundDSP
import SceneSoundEngine
import SceneSoundProtocol

/// One connected client: decodes its frames, runs the protocol state machine, owns its
/// streams. Confined to the server's event loop, like everything it touches.
final class ClientSession: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    let server: SoundServer
    let sessionNumber: Int
    private(set) var clientName = ""
    private(set) var clientPID: UInt32 = 0
    /// The peer's pid from SO_PEERCRED (trusted, unlike HELLO's).
    var peerPID: Int32 = 0
    private var decoder: FrameDecoder
    private var welcomed = false
    private var context: ChannelHandlerContext?
    private(set) var streams: [StreamID: ServerStream] = [:]
    private var logger: Logger
    private var closing = false
    private lazy var rate = MessageRateLimiter(messagesPerSecond: server.configuration.maximumMessagesPerSecond)
    private var lastRateError: NIODeadline?
    /// Since when the client has left more than the high-water mark of our messages unread.
    private var unreadSince: NIODeadline?

    init(server: SoundServer, sessionNumber: Int) {
        self.server = server
        self.sessionNumber = sessionNumber
        decoder = FrameDecoder(maxFrameBytes: server.configuration.maximumFrameBytes)
        logger = server.logger
        logger[metadataKey: "client"] = "\(sessionNumber)"
    }

    var displayName: String { clientName.isEmpty ? "client \(sessionNumber)" : clientName }

    // MARK: Channel events

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func channelActive(context: ChannelHandlerContext) {
        server.admit(self, channel: context.channel)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        do { try decoder.finish() } catch { logger.debug("connection ended mid-frame") }
        releaseAllStreams()
        server.sessionEnded(self)
        self.context = nil
    }

    /// The client closed its side: the session is over (half-closure is only allowed so that
    /// our own graceful close can drain it).
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed = event {
            context.close(promise: nil)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        logger.debug("connection error: \(error)")
        context.close(promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !closing else { return }
        let buffer = unwrapInboundIn(data)
        buffer.withUnsafeReadableBytes { decoder.append($0) }
        do {
            while !closing, let frame = try decoder.nextFrame() {
                // Audio is paced by credit; everything else by the message rate.
                if frame.typeCode != MessageType.streamData.rawValue, !rate.take() {
                    rejectForRate(frame)
                    continue
                }
                try handle(frame)
            }
        } catch let error as ProtocolError {
            fail(error)
        } catch {
            fail(ProtocolError(.internalError, "\(error)"))
        }
    }

    // MARK: Sending

    func send(_ message: Message, requestID: UInt32 = 0) {
        guard let context, context.channel.isActive, !closing else { return }
        if !context.channel.isWritable, unreadSince == nil { unreadSince = NIODeadline.now() }
        var bytes: [UInt8] = []
        FrameEncoder.append(message, requestID: requestID, to: &bytes)
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: bytes)), promise: nil)
    }

    private func reply(_ requestID: UInt32, _ error: ProtocolError) {
        send(.error(ErrorReply(error)), requestID: requestID)
    }

    /// A protocol error: reported, and the connection closed if its code says so.
    private func fail(_ error: ProtocolError, requestID: UInt32 = 0) {
        server.counters.rejectedFrames += 1
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
    private func rejectForRate(_ frame: Frame) {
        server.counters.rateLimitedMessages += 1
        let error = ProtocolError(.limitExceeded,
            "more than \(server.configuration.maximumMessagesPerSecond) messages per second; message not carried out")
        if frame.requestID != 0 {
            reply(frame.requestID, error)
            return
        }
        let now = NIODeadline.now()
        if let last = lastRateError, now - last < .seconds(1) { return }
        lastRateError = now
        reply(0, error)
    }

    // MARK: Protocol

    private func handle(_ frame: Frame) throws {
        guard let type = MessageType(rawValue: frame.typeCode) else {
            throw ProtocolError(.unknownMessageType, "message type 0x\(String(frame.typeCode, radix: 16)) unknown")
        }
        let message: Message
        do {
            message = try Message.decode(frame: frame)
        } catch {
            guard !error.code.closesConnection, frame.requestID != 0, welcomed else { throw error }
            // A bad request gets its error with its own id; the connection lives on.
            reply(frame.requestID, error)
            server.counters.rejectedFrames += 1
            return
        }
        guard welcomed else {
            guard case .hello(let hello) = message else {
                throw ProtocolError(.unexpectedMessage, "the first message must be HELLO, not \(type)")
            }
            try handshake(hello, requestID: frame.requestID)
            return
        }
        try dispatch(message, requestID: frame.requestID)
    }

    private func handshake(_ hello: Hello, requestID: UInt32) throws {
        guard let version = ProtocolVersion.negotiate(clientMinimum: hello.minimumVersion,
                                                      clientMaximum: hello.maximumVersion) else {
            let range = ProtocolVersion.supported
            throw ProtocolError(.unsupportedVersion, "server supports protocol versions \(range.lowerBound)...\(range.upperBound)")
        }
        clientName = hello.clientName
        clientPID = hello.clientPID
        logger[metadataKey: "client"] = "\(sessionNumber) \(clientName)"
        welcomed = true
        let configuration = server.configuration
        send(.welcome(Welcome(version: version, sampleRateHz: UInt32(server.engine.configuration.sampleRateHz),
                              blockFrames: UInt32(server.engine.configuration.blockFrames),
                              maxFrameBytes: UInt32(configuration.maximumFrameBytes),
                              maxStreams: UInt32(configuration.maximumStreamsPerClient),
                              maxSampleBytes: UInt32(configuration.maximumSampleBytes),
                              serverName: configuration.serverName)), requestID: requestID)
        logger.debug("handshake done")
    }

    private func dispatch(_ message: Message, requestID: UInt32) throws {
        switch message {
        case .hello:
            reply(requestID, ProtocolError(.unexpectedMessage, "HELLO was already exchanged"))
        case .streamOpen(let open):
            openStream(open, requestID: requestID)
        case .streamData(let data):
            try receive(data)
        case .streamDrain(let reference):
            drain(reference.streamID, requestID: requestID)
        case .streamClose(let reference):
            closeStream(reference.streamID, requestID: requestID)
        case .streamSetVolume(let change):
            guard let stream = liveStream(change.streamID, requestID: requestID) else { return }
            stream.volumeDecibels = change.volumeDecibels
            server.engine.commands.push(.setGain(stream.id, linear: Decibels.linearGain(Double(change.volumeDecibels))))
            send(.ok, requestID: requestID)
        case .streamSetScene(let change):
            guard let stream = liveStream(change.streamID, requestID: requestID) else { return }
            stream.sceneID = change.sceneID
            server.engine.commands.push(.setScene(stream.id, sceneIndex: server.sceneIndex(for: change.sceneID, peerPID: peerPID)))
            send(.ok, requestID: requestID)
        case .scenePlace(let place):
            guard SceneID.x11WindowID(place.sceneID) == nil else {
                return reply(requestID, ProtocolError(.notPermitted, "x11: scenes follow their window and cannot be placed"))
            }
            server.scenes.place(place.sceneID, at: SphericalPosition(
                azimuthDegrees: Double(place.position.azimuthDegrees), elevationDegrees: Double(place.position.elevationDegrees),
                distanceMetres: Double(place.position.distanceMetres)))
            send(.ok, requestID: requestID)
        case .sceneBindWindow(let bind):
            guard SceneID.x11WindowID(bind.sceneID) == nil else {
                return reply(requestID, ProtocolError(.notPermitted, "x11: scenes name their window already"))
            }
            server.scenes.bind(bind.sceneID, window: bind.windowID)
            server.windows?.place(bind.sceneID)
            send(.ok, requestID: requestID)
        case .sceneUnbind(let unbind):
            guard SceneID.x11WindowID(unbind.sceneID) == nil else {
                return reply(requestID, ProtocolError(.notPermitted, "x11: scenes cannot be unbound"))
            }
            guard server.scenes.unbind(unbind.sceneID) else {
                return reply(requestID, ProtocolError(.unknownScene, "scene '\(unbind.sceneID)' has no binding"))
            }
            send(.ok, requestID: requestID)
        case .sceneList:
            send(.sceneListReply(SceneListReply(entries: server.sceneListEntries())), requestID: requestID)
        case .headPose(let pose):
            server.setHeadPose(pose)
        case .headRecenter:
            server.recenterHead()
            send(.ok, requestID: requestID)
        case .statusRequest:
            send(.statusReply(StatusReply(json: server.statusDocument().serialized)), requestID: requestID)
        case .sampleUpload(let chunk):
            server.samples.upload(chunk, from: self, requestID: requestID)
        case .samplePlay(let play):
            server.samples.play(play, from: self, requestID: requestID)
        case .welcome, .ok, .error, .sceneListReply, .streamOpened, .samplePlaying, .statusReply,
             .creditGranted, .streamEnded, .streamError, .playbackEnded:
            // Server-to-client types; Message.decode(frame:) already rejects their direction.
            throw ProtocolError(.unexpectedMessage, "\(message.type) is not sent by clients")
        }
    }

    // MARK: Streams

    private func liveStream(_ id: StreamID, requestID: UInt32) -> ServerStream? {
        guard let stream = streams[id], stream.defunctCode == nil else {
            reply(requestID, ProtocolError(.unknownStream, "stream \(id) is not open"))
            return nil
        }
        return stream
    }

    private func openStream(_ open: StreamOpen, requestID: UInt32) {
        guard streams.count < server.configuration.maximumStreamsPerClient else {
            return reply(requestID, ProtocolError(.limitExceeded,
                "a client may have \(server.configuration.maximumStreamsPerClient) streams open"))
        }
        guard server.totalStreamCount < server.engine.maximumStreams else {
            return reply(requestID, ProtocolError(.limitExceeded, "the server plays \(server.engine.maximumStreams) streams at most"))
        }
        do {
            let stream = try server.makeStream(open, peerPID: peerPID)
            streams[stream.id] = stream
            server.engine.commands.push(.addStream(stream.engineStream))
            let credit = stream.grantableCreditBytes()
            stream.outstandingCreditBytes = credit
            send(.streamOpened(StreamOpened(streamID: stream.id, creditBytes: UInt32(credit))), requestID: requestID)
            logger.debug("stream \(stream.id) opened: \(open.kind) \(open.format.sampleFormat) \(open.format.channels) ch \(open.format.rateHz) Hz, scene '\(open.sceneID)'")
        } catch let error as ProtocolError {
            reply(requestID, error)
        } catch {
            reply(requestID, ProtocolError(.internalError, "\(error)"))
        }
    }

    private func receive(_ data: StreamData) throws {
        guard let stream = streams[data.streamID] else {
            return reply(0, ProtocolError(.unknownStream, "stream \(data.streamID) is not open; data dropped"))
        }
        guard stream.defunctCode == nil else { return }  // dropped silently, not counted
        guard data.pcm.count <= stream.outstandingCreditBytes else {
            throw ProtocolError(.creditExceeded,
                "stream \(stream.id): \(data.pcm.count) bytes sent with \(stream.outstandingCreditBytes) bytes of credit")
        }
        stream.outstandingCreditBytes -= data.pcm.count
        if stream.loopClosed { return }  // a loop takes no data after its first drain
        guard data.pcm.count % stream.format.bytesPerFrame == 0 else {
            return makeDefunct(stream, ProtocolError(.badFormat,
                "\(data.pcm.count) bytes is not a whole number of \(stream.format.bytesPerFrame)-byte frames"))
        }
        stream.append(stream.converter.convert(data.pcm))
        if stream.loops && stream.loopContent.count / Int(stream.format.channels) > stream.loopLimitFrames {
            makeDefunct(stream, ProtocolError(.limitExceeded, "looped content is longer than the server keeps"))
        }
    }

    private func drain(_ id: StreamID, requestID: UInt32) {
        guard let stream = streams[id] else {
            return reply(requestID, ProtocolError(.unknownStream, "stream \(id) is not open"))
        }
        if let code = stream.defunctCode {
            return reply(requestID, ProtocolError(code, "stream \(id) failed"))
        }
        stream.append(stream.converter.flush())
        let through = stream.ring.framesWritten
        stream.pendingDrains.append((requestID, through))
        if stream.loops && !stream.loopClosed {
            stream.loopClosed = true
        } else {
            stream.engineStream.input.setIdle(true)
        }
        server.engine.commands.push(.notifyWhenDrained(id, throughFrame: through))
    }

    private func closeStream(_ id: StreamID, requestID: UInt32) {
        guard let stream = streams.removeValue(forKey: id) else {
            return reply(requestID, ProtocolError(.unknownStream, "stream \(id) is not open"))
        }
        retire(stream)
        send(.ok, requestID: requestID)
    }

    private func makeDefunct(_ stream: ServerStream, _ error: ProtocolError) {
        stream.defunctCode = error.code
        send(.streamError(SceneSoundProtocol.StreamError(streamID: stream.id, code: error.code, message: error.detail)))
        for drain in stream.pendingDrains { reply(drain.requestID, ProtocolError(error.code, "stream \(stream.id) failed")) }
        stream.pendingDrains.removeAll()
        server.engine.commands.push(.removeStream(stream.id))
    }

    /// Stops the stream in the engine; the server keeps it until the render thread hands it back.
    private func retire(_ stream: ServerStream) {
        for drain in stream.pendingDrains { reply(drain.requestID, ProtocolError(.unknownStream, "stream \(stream.id) was closed")) }
        if stream.defunctCode == nil { server.engine.commands.push(.removeStream(stream.id)) }
        server.retire(stream)
    }

    private func releaseAllStreams() {
        for stream in streams.values { retire(stream) }
        streams.removeAll()
    }

    // MARK: Tick (called by the server on the event loop)

    /// Grants credit, tops up loops and answers drains whose last frame reached the output.
    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { unreadSince = nil }
        context.fireChannelWritabilityChanged()
    }

    func tick(deliveredFrame: Int) {
        guard !closing else { return }
        // A client that stops reading its replies and events would make us buffer without
        // bound: after a grace period it is disconnected, and its streams freed.
        if let since = unreadSince, NIODeadline.now() - since > .seconds(Int64(server.configuration.unreadGraceSeconds)) {
            logger.warning("closing connection: the client has not read its messages for \(server.configuration.unreadGraceSeconds) s")
            server.counters.stalledClients += 1
            close(graceful: false)  // it reads nothing, so nothing more can reach it
            return
        }
        for stream in streams.values {
            if stream.loopClosed { stream.refillLoop() }
            completeDrains(stream, deliveredFrame: deliveredFrame)
            let grant = stream.grantableCreditBytes()
            // Grant in chunks of at least a block, so a fast writer is paced without chatter.
            if grant >= server.engine.configuration.blockFrames * stream.format.bytesPerFrame {
                stream.outstandingCreditBytes += grant
                send(.creditGranted(CreditGranted(streamID: stream.id, bytes: UInt32(grant))))
            }
        }
    }

    func engineDrained(_ id: StreamID, throughFrame: Int, outputFrame: Int) {
        streams[id]?.deliveredDrains.append((throughFrame, outputFrame))
    }

    private func completeDrains(_ stream: ServerStream, deliveredFrame: Int) {
        guard !stream.deliveredDrains.isEmpty else { return }
        var reached = 0
        stream.deliveredDrains.removeAll { done in
            guard done.outputFrame <= deliveredFrame else { return false }
            reached = max(reached, done.throughFrame)
            return true
        }
        guard reached > 0 else { return }
        let finished = stream.pendingDrains.filter { $0.throughFrame <= reached }
        stream.pendingDrains.removeAll { $0.throughFrame <= reached }
        for drain in finished {
            send(.streamEnded(StreamEnded(streamID: stream.id, reason: .drained)))
            send(.ok, requestID: drain.requestID)
        }
    }

    /// At shutdown: every stream ends.
    func shutDown() {
        for stream in streams.values {
            send(.streamEnded(StreamEnded(streamID: stream.id, reason: .serverShutdown)))
        }
        close()
    }
}
