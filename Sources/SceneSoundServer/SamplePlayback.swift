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
        /// The output frame by which the last sample is out, once the engine knows it.
        var endsAtOutputFrame: Int?
    }

    private struct UploadKey: Hashable {
        let session: ObjectIdentifier
        let name: String
    }

    private unowned let server: SoundServer
    private let configuration: SampleConfiguration
    private var cache: SampleCache
    private var uploads: [UploadKey: SampleUploadAssembler] = [:]
    private var plays: [StreamID: ActivePlay] = [:]
    private var coalescer: BurstCoalescer
    private var nextPlayID: UInt32 = 1
    /// Plays take engine stream ids from the top half of the id space, so that they never
    /// collide with client streams (numbered from 1 by the server) without sharing a counter.
    private var nextStreamID: StreamID = 0x8000_0000
    /// Installed by the X11 side (see `AlertAttention`).
    weak var attention: AlertAttention?

    init(server: SoundServer) {
        self.server = server
        configuration = server.configuration.samples
        cache = SampleCache(capacityBytes: configuration.cacheBytes)
        coalescer = BurstCoalescer(windowSeconds: configuration.coalesceWindowSeconds)
        server.engine.commands.push(.setDucking(configuration.ducking))
    }

    var activePlayCount: Int { plays.count }
    var cachedSampleCount: Int { cache.count }
    var cachedBytes: Int { cache.totalBytes }

    // MARK: SAMPLE_UPLOAD

    func upload(_ chunk: SampleUpload, from session: ClientSession, requestID: UInt32) {
        let key = UploadKey(session: ObjectIdentifier(session), name: chunk.name)
        do {
            try accept(chunk, key: key)
            session.send(.ok, requestID: requestID)
        } catch {
            uploads[key] = nil  // an error abandons the upload
            session.send(.error(ErrorReply(error)), requestID: requestID)
        }
    }

    private func accept(_ chunk: SampleUpload, key: UploadKey) throws(ProtocolError) {
        let assembler: SampleUploadAssembler
        if chunk.offsetBytes == 0 {
            try checkLimits(chunk)
            do {
                assembler = try SampleUploadAssembler(first: chunk, engineRateHz: server.engine.configuration.sampleRateHz)
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
        server.logger.debug("sample '\(sample.name)' cached: \(sample.frameCount) frames, \(sample.byteCount) bytes\(evicted.isEmpty ? "" : "; evicted \(evicted)")")
    }

    private func checkLimits(_ chunk: SampleUpload) throws(ProtocolError) {
        let maximumBytes = server.configuration.maximumSampleBytes
        guard Int(chunk.totalBytes) <= maximumBytes else {
            throw ProtocolError(.limitExceeded, "sample \"\(chunk.name)\" of \(chunk.totalBytes) bytes exceeds max_sample_bytes \(maximumBytes)")
        }
        let seconds = SampleUploadAssembler.durationSeconds(of: chunk)
        guard seconds <= configuration.maximumSampleSeconds else {
            throw ProtocolError(.limitExceeded, "sample \"\(chunk.name)\" is \(seconds) s long; system sounds are at most \(configuration.maximumSampleSeconds) s")
        }
    }

    // MARK: SAMPLE_PLAY

    func play(_ request: SamplePlay, from session: ClientSession, requestID: UInt32) {
        guard let sample = cache.use(request.name) else {
            return session.send(.error(ErrorReply(ProtocolError(.unknownSound, "sample \"\(request.name)\" is not in the cache; upload it first"))), requestID: requestID)
        }
        let playID = nextPlayID
        nextPlayID = nextPlayID == .max ? 1 : nextPlayID + 1
        let key = "\(request.kind.rawValue)\u{0}\(request.sceneID)\u{0}\(request.name)"
        guard coalescer.admit(key, atSeconds: Double(NIODeadline.now().uptimeNanoseconds) * 1e-9) else {
            session.send(.samplePlaying(SamplePlaying(playID: playID)), requestID: requestID)
            session.send(.playbackEnded(PlaybackEnded(playID: playID, reason: .coalesced)))
            return
        }
        guard server.totalStreamCount + plays.count < server.engine.maximumStreams else {
            return session.send(.error(ErrorReply(ProtocolError(.limitExceeded, "the server plays \(server.engine.maximumStreams) streams at most"))), requestID: requestID)
        }
        let stream = makeEngineStream(sample, request, peerPID: session.peerPID)
        // The ring already holds the whole sound, so the first block after these commands
        // plays it: the start latency is one render quantum at most. The frame is read before
        // the push: after it, the render thread may already have played the first block.
        let queuedFrame = server.engine.renderedFrames
        server.engine.commands.push(.addStream(stream))
        server.engine.commands.push(.notifyWhenDrained(stream.id, throughFrame: sample.frameCount))
        plays[stream.id] = ActivePlay(playID: playID, session: session, stream: stream)
        session.send(.samplePlaying(SamplePlaying(playID: playID)), requestID: requestID)
        server.logger.debug("play \(playID) '\(request.name)' (\(request.kind)) queued at output frame \(queuedFrame)")
        if request.kind == .alert { requestAttention(for: request.sceneID, demanded: request.demandAttention) }
    }

    private func makeEngineStream(_ sample: CachedSample, _ request: SamplePlay, peerPID: Int32) -> EngineStream {
        let id = nextStreamID
        nextStreamID = nextStreamID == .max ? 0x8000_0000 : nextStreamID + 1
        let engine = server.engine
        let ring = AudioRing(capacityFrames: sample.frameCount, channelCount: sample.channelCount)
        sample.samples.withUnsafeBufferPointer { _ = ring.write($0.baseAddress!, frames: sample.frameCount) }
        let input = RingInput(ring: ring)
        input.setIdle(true)  // nothing more will come: running dry at the end is not starvation
        let source = RenderSource(
            input: input, channelCount: sample.channelCount, mode: SoundServer.engineMode(request.spatialMode),
            channelPositions: Array(repeating: server.scenes.defaultPosition, count: sample.channelCount),
            gain: Decibels.linearGain(Double(request.volumeDecibels)), hrtf: engine.hrtf,
            maximumFrames: engine.configuration.blockFrames)
        let stream = EngineStream(id: id, source: source, input: input, sceneIndex: server.sceneIndex(for: request.sceneID, peerPID: peerPID))
        stream.isAlert = request.kind == .alert
        return stream
    }

    /// Flags the alert's window when the client asked for it, the server is configured to, or
    /// no audio output is available (the visual fallback).
    private func requestAttention(for sceneID: String, demanded: Bool) {
        guard let attention, demanded || configuration.alertsDemandAttention || !server.output.status.connected else { return }
        let window: UInt32?
        if let id = SceneID.x11WindowID(sceneID) {
            window = id
        } else if case .window(let id)? = server.scenes.scenes[sceneID]?.anchor {
            window = id
        } else if let id = server.scenes.scenes[sceneID]?.window?.windowID {
            window = id  // a program's own window, found through its pid
        } else {
            window = nil
        }
        if let window { attention.alertNeedsAttention(windowID: window, sceneID: sceneID) }
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
            server.engine.commands.push(.removeStream(id))
            play.session?.send(.playbackEnded(PlaybackEnded(playID: play.playID, reason: .completed)))
        }
    }

    /// A connection closed: its uploads are dropped and its plays stopped (SPEC.md 2).
    func sessionEnded(_ session: ClientSession) {
        let owner = ObjectIdentifier(session)
        uploads = uploads.filter { $0.key.session != owner }
        for (id, play) in plays where play.session == nil || play.session === session {
            plays[id] = nil
            server.engine.commands.push(.removeStream(id))
        }
    }
}
