import SceneSoundDSP
import Logging
import NIOCore
import SceneSoundEngine
import SceneSoundProtocol

/// The server's side of system and alert sounds (SPEC.md 6.6): assembles uploads into the
/// cache, starts each play as a one-shot engine stream, coalesces bursts, and reports
/// `PLAYBACK_ENDED` once a play's last sample has reached the output. Event-loop confined.
final class SamplePlayback {
    /// One play in the engine.
    private struct ActivePlay {
        let playID: UInt32
        weak var session: ClientSession?
        let stream: EngineStream
        let kind: StreamKind
        /// The scene it was played at, as resolved then.
        let sceneID: String
        let volumeDecibels: Float
        /// The output frame by which the last sample is out, once the engine knows it.
        var endsAtOutputFrame: Int?
    }

    private struct UploadKey: Hashable {
        let session: ObjectIdentifier
        let name: String
    }

    private let configuration: SampleConfiguration
    private let maximumSampleBytes: Int
    private let engineRateHz: Double
    private let engineStreams: EngineStreams
    private let scenes: SceneDirectory
    private let commands: EngineCommandQueue
    /// Whether the audio output plays now (alerts flag their window when it does not).
    private let outputConnected: () -> Bool
    /// The engine's output frames rendered so far (logged when a play is queued).
    private let renderedFrames: () -> Int
    private let logger: Logger
    private var cache: SampleCache
    private var uploads: [UploadKey: SampleUploadAssembler] = [:]
    private var plays: [StreamID: ActivePlay] = [:]
    private var coalescer: BurstCoalescer
    private var nextPlayID: UInt32 = 1
    /// Installed by the X11 side (see `AlertAttention`).
    weak var attention: AlertAttention?

    init(configuration: SampleConfiguration, maximumSampleBytes: Int, engineRateHz: Double,
         engineStreams: EngineStreams, scenes: SceneDirectory, commands: EngineCommandQueue,
         outputConnected: @escaping () -> Bool, renderedFrames: @escaping () -> Int, logger: Logger) {
        self.configuration = configuration
        self.maximumSampleBytes = maximumSampleBytes
        self.engineRateHz = engineRateHz
        self.engineStreams = engineStreams
        self.scenes = scenes
        self.commands = commands
        self.outputConnected = outputConnected
        self.renderedFrames = renderedFrames
        self.logger = logger
        cache = SampleCache(capacityBytes: configuration.cacheBytes)
        coalescer = BurstCoalescer(windowSeconds: configuration.coalesceWindowSeconds)
        commands.push(.setDucking(configuration.ducking))
    }

    var activePlayCount: Int { plays.count }

    /// The plays sounding now, for the status (`plays`), oldest first.
    var status: [StatusDocument.Play] {
        plays.values.sorted { $0.stream.id < $1.stream.id }.map { play in
            StatusDocument.Play(id: Int(play.playID), kind: "\(play.kind)", scene: play.sceneID,
                                levelDecibels: max(StatusReport.silenceDecibels,
                                                   play.stream.input.recentLevelDecibels + Double(play.volumeDecibels)))
        }
    }
    var cachedSampleCount: Int { cache.count }
    var cachedBytes: Int { cache.totalBytes }

    // MARK: SAMPLE_UPLOAD

    /// The reply to one chunk: OK, or the error that abandoned the upload.
    func upload(_ chunk: SampleUpload, from session: ClientSession, requestID: UInt32) -> OutboundFrame {
        let key = UploadKey(session: ObjectIdentifier(session), name: chunk.name)
        do {
            try accept(chunk, key: key)
            return OutboundFrame(message: .ok, requestID: requestID)
        } catch {
            uploads[key] = nil  // an error abandons the upload
            return ClientStreams.error(requestID, error)
        }
    }

    private func accept(_ chunk: SampleUpload, key: UploadKey) throws(ProtocolError) {
        let assembler: SampleUploadAssembler
        if chunk.offsetBytes == 0 {
            try checkLimits(chunk)
            do {
                assembler = try SampleUploadAssembler(first: chunk, engineRateHz: engineRateHz)
            } catch {
                throw ProtocolError(.badFormat, "sample \"\(chunk.name)\": \(error)")
            }
            uploads[key] = assembler
        } else {
            guard let pending = uploads[key] else {
                throw ProtocolError(.invalidArgument, "sample \"\(chunk.name)\": chunk at offset \(chunk.offsetBytes) without an upload in progress (start at offset 0)")
            }
            guard pending.isNext(chunk) else {
                throw ProtocolError(.invalidArgument, "sample \"\(chunk.name)\": chunk at offset \(chunk.offsetBytes) is out of order (expected offset \(pending.receivedBytes), the same format and total_bytes \(pending.totalBytes)); upload abandoned")
            }
            assembler = pending
        }
        assembler.append(chunk)
        guard assembler.isComplete else { return }
        uploads[key] = nil
        let sample = assembler.finish()
        guard sample.byteCount <= cache.capacityBytes else {
            throw ProtocolError(.limitExceeded, "sample \"\(chunk.name)\" needs \(sample.byteCount) bytes; the cache holds \(cache.capacityBytes)")
        }
        let evicted = cache.insert(sample)
        logger.debug("sample '\(sample.name)' cached: \(sample.frameCount) frames, \(sample.byteCount) bytes\(evicted.isEmpty ? "" : "; evicted \(evicted)")")
    }

    private func checkLimits(_ chunk: SampleUpload) throws(ProtocolError) {
        let maximumBytes = maximumSampleBytes
        guard Int(chunk.totalBytes) <= maximumBytes else {
            throw ProtocolError(.limitExceeded, "sample \"\(chunk.name)\" of \(chunk.totalBytes) bytes exceeds max_sample_bytes \(maximumBytes)")
        }
        let seconds = SampleUploadAssembler.durationSeconds(of: chunk)
        guard seconds <= configuration.maximumSampleSeconds else {
            throw ProtocolError(.limitExceeded, "sample \"\(chunk.name)\" is \(seconds) s long; system sounds are at most \(configuration.maximumSampleSeconds) s")
        }
    }

    // MARK: SAMPLE_PLAY

    /// SAMPLE_PLAY: the reply (SAMPLE_PLAYING, and PLAYBACK_ENDED at once for a play coalesced
    /// into one that sounds), or the error to answer with. `PLAYBACK_ENDED` for a play that
    /// sounds is sent by `tick` once its last sample is out.
    func play(_ request: SamplePlay, from session: ClientSession, requestID: UInt32,
              nowSeconds: Double) throws(ProtocolError) -> [OutboundFrame] {
        guard let sample = cache.use(request.name) else {
            throw ProtocolError(.unknownSound, "sample \"\(request.name)\" is not in the cache; upload it first")
        }
        let playID = nextPlayID
        nextPlayID = nextPlayID == .max ? 1 : nextPlayID + 1
        let key = "\(request.kind.rawValue)\u{0}\(request.sceneID)\u{0}\(request.name)"
        guard coalescer.admit(key, atSeconds: nowSeconds) else {
            return [OutboundFrame(message: .samplePlaying(SamplePlaying(playID: playID)), requestID: requestID),
                    OutboundFrame(message: .playbackEnded(PlaybackEnded(playID: playID, reason: .coalesced)), requestID: 0)]
        }
        guard engineStreams.hasRoom else {
            throw ProtocolError(.limitExceeded, "the server plays \(engineStreams.maximumStreams) streams at most")
        }
        let sceneIndex = try scenes.acquireForRequest(request.sceneID, peerPID: session.peerPID)
        // The ring already holds the whole sound, so the first block after these commands
        // plays it: the start latency is one render quantum at most. The frame is read before
        // the push: after it, the render thread may already have played the first block.
        let ring = AudioRing(capacityFrames: sample.frameCount, channelCount: sample.channelCount)
        sample.samples.withUnsafeBufferPointer { _ = ring.write($0.baseAddress!, frames: sample.frameCount) }
        let input = RingInput(ring: ring)
        input.setIdle(true)  // nothing more will come: running dry at the end is not starvation
        let stream = engineStreams.make(
            .play, input: input, channelCount: sample.channelCount, kind: request.kind, spatialMode: request.spatialMode,
            volumeDecibels: request.volumeDecibels, sceneIndex: sceneIndex)
        let queuedFrame = renderedFrames()
        engineStreams.add(stream)
        commands.push(.notifyWhenDrained(stream.id, throughFrame: sample.frameCount))
        plays[stream.id] = ActivePlay(playID: playID, session: session, stream: stream, kind: request.kind,
                                      sceneID: scenes.resolved(request.sceneID, peerPID: session.peerPID),
                                      volumeDecibels: request.volumeDecibels)
        logger.debug("play \(playID) '\(request.name)' (\(request.kind)) queued at output frame \(queuedFrame)")
        if request.kind == .alert {
            requestAttention(for: scenes.resolved(request.sceneID, peerPID: session.peerPID), demanded: request.demandAttention)
        }
        return [OutboundFrame(message: .samplePlaying(SamplePlaying(playID: playID)), requestID: requestID)]
    }

    /// Flags the alert's window when the client asked for it, the server is configured to, or
    /// no audio output is available (the visual fallback). Captured apps' alerts too.
    func requestAttention(for sceneID: String, demanded: Bool) {
        guard let attention, demanded || configuration.alertsDemandAttention || !outputConnected() else { return }
        if let window = scenes.windowID(of: sceneID) { attention.alertNeedsAttention(windowID: window, sceneID: sceneID) }
    }

    // MARK: Engine events and the tick

    /// The engine's drain event for a play: its last sample leaves the engine at `outputFrame`.
    func engineDrained(_ id: StreamID, outputFrame: Int) {
        plays[id]?.endsAtOutputFrame = outputFrame
    }

    /// Ends the plays whose last sample the output has delivered.
    func tick(deliveredFrame: Int) {
        for (id, play) in plays {
            guard let end = play.endsAtOutputFrame, end <= deliveredFrame else { continue }
            plays[id] = nil
            engineStreams.remove(id)
            play.session?.send(.playbackEnded(PlaybackEnded(playID: play.playID, reason: .completed)))
        }
    }

    /// A connection closed: its uploads are dropped and its plays stopped (SPEC.md 2).
    func sessionEnded(_ session: ClientSession) {
        let owner = ObjectIdentifier(session)
        uploads = uploads.filter { $0.key.session != owner }
        for (id, play) in plays where play.session == nil || play.session === session {
            plays[id] = nil
            engineStreams.remove(id)
        }
    }
}
