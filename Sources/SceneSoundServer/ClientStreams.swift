import SceneSoundDSP
import SceneSoundEngine
import SceneSoundProtocol

/// The streams of one client: opening them into the engine, their audio and credit, drains,
/// failure and closing (SPEC.md 6.2–6.4). It decides; the session sends what it returns. A
/// request it refuses is thrown as the `ProtocolError` to answer it with. Event-loop confined.
final class ClientStreams {
    struct Limits {
        var maximumStreams: Int
        var bufferSeconds: Double
        var engineRateHz: Double
        var blockFrames: Int
        /// How much a loop stream may hold, in engine frames.
        var loopLimitFrames: Int
    }

    private let limits: Limits
    private let engineStreams: EngineStreams
    private let scenes: SceneDirectory
    private let commands: EngineCommandQueue
    private(set) var streams: [StreamID: ServerStream] = [:]

    init(limits: Limits, engineStreams: EngineStreams, scenes: SceneDirectory, commands: EngineCommandQueue) {
        self.limits = limits
        self.engineStreams = engineStreams
        self.scenes = scenes
        self.commands = commands
    }

    var count: Int { streams.count }

    // MARK: Requests

    func open(_ open: StreamOpen, peerPID: Int32) throws(ProtocolError) -> StreamOpened {
        guard streams.count < limits.maximumStreams else {
            throw ProtocolError(.limitExceeded, "a client may have \(limits.maximumStreams) streams open")
        }
        guard engineStreams.hasRoom else {
            throw ProtocolError(.limitExceeded, "the server plays \(engineStreams.maximumStreams) streams at most")
        }
        let format = open.format
        let converter: PCMConverter
        do {
            converter = try PCMConverter(format: format, engineRateHz: limits.engineRateHz)
        } catch let error as ProtocolError {
            throw error
        } catch {
            throw ProtocolError(.internalError, "\(error)")
        }
        let sceneIndex = try scenes.acquireForRequest(open.sceneID, peerPID: peerPID)
        let capacity = max(Int(limits.bufferSeconds * limits.engineRateHz), limits.blockFrames * 4)
        let input = RingInput(ring: AudioRing(capacityFrames: capacity, channelCount: Int(format.channels)))
        // Validated: the map names each channel once, or is empty (the standard layout).
        let layout = open.channelMap.flatMap { map in
            map.isEmpty ? nil : ChannelLayout(speakers: map.map { ChannelLayout.Speaker(rawValue: Int($0.rawValue))! })
        }
        let engineStream = engineStreams.make(
            .client, input: input, channelCount: Int(format.channels), layout: layout, kind: open.kind,
            spatialMode: open.spatialMode, volumeDecibels: open.volumeDecibels, sceneIndex: sceneIndex)
        let stream = ServerStream(id: engineStream.id, open: open, converter: converter, engineStream: engineStream,
                                  loopLimitFrames: limits.loopLimitFrames)
        streams[stream.id] = stream
        engineStreams.add(engineStream)
        let credit = stream.grantableCreditBytes()
        stream.outstandingCreditBytes = credit
        return StreamOpened(streamID: stream.id, creditBytes: UInt32(credit))
    }

    func setVolume(_ change: StreamSetVolume) throws(ProtocolError) {
        let stream = try live(change.streamID)
        stream.volumeDecibels = change.volumeDecibels
        commands.push(.setGain(stream.id, linear: Decibels.linearGain(Double(change.volumeDecibels))))
    }

    func setScene(_ change: StreamSetScene, peerPID: Int32) throws(ProtocolError) {
        let stream = try live(change.streamID)
        let sceneIndex = try scenes.acquireForRequest(change.sceneID, peerPID: peerPID)
        stream.sceneID = change.sceneID
        engineStreams.setScene(stream.id, sceneIndex: sceneIndex)
    }

    /// STREAM_DATA. Throws only what closes the connection (`credit_exceeded`); anything else
    /// comes back as the frames to send (an error for an unknown stream, a stream's failure).
    func receive(_ data: StreamData) throws(ProtocolError) -> [OutboundFrame] {
        guard let stream = streams[data.streamID] else {
            return [Self.error(0, ProtocolError(.unknownStream, "stream \(data.streamID) is not open; data dropped"))]
        }
        guard stream.defunctCode == nil else { return [] }  // dropped silently, not counted
        guard data.pcm.count <= stream.outstandingCreditBytes else {
            throw ProtocolError(.creditExceeded,
                "stream \(stream.id): \(data.pcm.count) bytes sent with \(stream.outstandingCreditBytes) bytes of credit")
        }
        stream.outstandingCreditBytes -= data.pcm.count
        if stream.loopClosed { return [] }  // a loop takes no data after its first drain
        guard data.pcm.count % stream.format.bytesPerFrame == 0 else {
            return fail(stream, ProtocolError(.badFormat,
                "\(data.pcm.count) bytes is not a whole number of \(stream.format.bytesPerFrame)-byte frames"))
        }
        stream.append(stream.converter.convert(data.pcm))
        commands.workArrived()
        if stream.loops && stream.loopContent.count / Int(stream.format.channels) > stream.loopLimitFrames {
            return fail(stream, ProtocolError(.limitExceeded, "looped content is longer than the server keeps"))
        }
        return []
    }

    /// STREAM_DRAIN: answered later, by `tick`, once the last frame has reached the output.
    func drain(_ id: StreamID, requestID: UInt32) throws(ProtocolError) {
        guard let stream = streams[id] else { throw ProtocolError(.unknownStream, "stream \(id) is not open") }
        if let code = stream.defunctCode { throw ProtocolError(code, "stream \(id) failed") }
        stream.append(stream.converter.flush())
        commands.workArrived()
        let through = stream.ring.framesWritten
        stream.pendingDrains.append((requestID, through))
        if stream.loops && !stream.loopClosed {
            stream.loopClosed = true
        } else {
            stream.engineStream.input.setIdle(true)
        }
        commands.push(.notifyWhenDrained(id, throughFrame: through))
    }

    /// STREAM_CLOSE: the frames to send, its OK last.
    func close(_ id: StreamID, requestID: UInt32) throws(ProtocolError) -> [OutboundFrame] {
        guard let stream = streams.removeValue(forKey: id) else {
            throw ProtocolError(.unknownStream, "stream \(id) is not open")
        }
        return retire(stream) + [OutboundFrame(message: .ok, requestID: requestID)]
    }

    /// The connection ended: every stream leaves the engine.
    func closeAll() {
        for stream in streams.values { _ = retire(stream) }
        streams.removeAll()
    }

    /// At shutdown: STREAM_ENDED for each.
    func shutdownEvents() -> [OutboundFrame] {
        streams.keys.sorted().map { OutboundFrame(message: .streamEnded(StreamEnded(streamID: $0, reason: .serverShutdown)), requestID: 0) }
    }

    // MARK: The tick

    /// Tops up loops, answers drains whose last frame the output has delivered, and grants
    /// credit in chunks of at least a block (a fast writer is paced without chatter).
    func tick(deliveredFrame: Int) -> [OutboundFrame] {
        var out: [OutboundFrame] = []
        for stream in streams.values.sorted(by: { $0.id < $1.id }) {
            if stream.loopClosed { stream.refillLoop() }
            completeDrains(stream, deliveredFrame: deliveredFrame, into: &out)
            let grant = stream.grantableCreditBytes()
            if grant >= limits.blockFrames * stream.format.bytesPerFrame {
                stream.outstandingCreditBytes += grant
                out.append(OutboundFrame(message: .creditGranted(CreditGranted(streamID: stream.id, bytes: UInt32(grant))), requestID: 0))
            }
        }
        return out
    }

    /// The engine rendered a drained stream's last frame; the output has it at `outputFrame`.
    func engineDrained(_ id: StreamID, throughFrame: Int, outputFrame: Int) {
        streams[id]?.deliveredDrains.append((throughFrame, outputFrame))
    }

    private func completeDrains(_ stream: ServerStream, deliveredFrame: Int, into out: inout [OutboundFrame]) {
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
            out.append(OutboundFrame(message: .streamEnded(StreamEnded(streamID: stream.id, reason: .drained)), requestID: 0))
            out.append(OutboundFrame(message: .ok, requestID: drain.requestID))
        }
    }

    // MARK: Failure and retirement

    private func live(_ id: StreamID) throws(ProtocolError) -> ServerStream {
        guard let stream = streams[id], stream.defunctCode == nil else {
            throw ProtocolError(.unknownStream, "stream \(id) is not open")
        }
        return stream
    }

    /// The stream fails (STREAM_ERROR); only STREAM_CLOSE is accepted for it from now on.
    private func fail(_ stream: ServerStream, _ error: ProtocolError) -> [OutboundFrame] {
        stream.defunctCode = error.code
        var out = [OutboundFrame(message: .streamError(SceneSoundProtocol.StreamError(
            streamID: stream.id, code: error.code, message: error.detail)), requestID: 0)]
        for drain in stream.pendingDrains {
            out.append(Self.error(drain.requestID, ProtocolError(error.code, "stream \(stream.id) failed")))
        }
        stream.pendingDrains.removeAll()
        engineStreams.remove(stream.id)
        return out
    }

    /// Stops the stream in the engine (unless its failure already did); drains still waiting
    /// are answered with an error.
    private func retire(_ stream: ServerStream) -> [OutboundFrame] {
        let out = stream.pendingDrains.map {
            Self.error($0.requestID, ProtocolError(.unknownStream, "stream \(stream.id) was closed"))
        }
        stream.pendingDrains.removeAll()
        if stream.defunctCode == nil { engineStreams.remove(stream.id) }
        return out
    }

    static func error(_ requestID: UInt32, _ error: ProtocolError) -> OutboundFrame {
        OutboundFrame(message: .error(ErrorReply(error)), requestID: requestID)
    }
}
