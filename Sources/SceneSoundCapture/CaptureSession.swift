import CPulse
import Foundation
import SceneSoundPlatform
import SceneSoundPulse

protocol CaptureSessionDelegate: AnyObject {
    func sessionDidStartCapturing(_ session: CaptureSession, sinkName: String)
    func sessionDidFail(_ session: CaptureSession, reason: String)
}

/// One connection's worth of capture: sweep leftovers, start the guard, load the capture
/// sink, then take every eligible stream as it appears and record it. When anything it
/// relies on goes away (the server, the sink, the guard), it fails as a whole and the
/// supervisor starts a new one. Confined to the mainloop thread. Its parts live in
/// `CaptureSession+Setup` (sweep, guard, capture sink), `+Recordings` (recorders, PipeWire's
/// link repairs), `+DefaultSink` (the server's events, the default sink), `+Rest` (heartbeat,
/// rest), `+Volume` and `+Ending`; its state is internal to the module for them, and touched by
/// nothing else.
final class CaptureSession {
    enum Phase { case connecting, preparing, capturing, finished }

    struct TrackedStream {
        var identity: CapturedStreamIdentity
        var recorder: (any StreamRecorder)?
        /// The move to the capture sink is in flight: the recorder attaches once it is done
        /// (PulseAudio ends a direct monitor when its input moves).
        var isMoving: Bool
        /// Where it was moved from, and when: pipewire-pulse confirms a move before the
        /// stream is relinked, and goes on reporting the old sink for a moment.
        var movedFromSink: UInt32? = nil
        var movedAt: Date? = nil
        /// The consumer was told it started (and so must be told it ended): its recording may
        /// be replaced without the consumer seeing a new stream.
        var isAnnounced = false

        /// Whether the stream's sink, not being ours, only shows the server catching up.
        func isStillArriving(on sink: UInt32) -> Bool {
            if sink == UInt32.max { return true }  // not linked anywhere yet
            guard sink == movedFromSink, let movedAt else { return false }
            return Date().timeIntervalSince(movedAt) < 2.0
        }
    }

    let token: String
    let context: OpaquePointer
    let requests: PulseRequests
    let mainloop: PulseMainloop
    let configuration: AppCapture.Configuration
    let consumer: AppCaptureConsumer
    weak var delegate: CaptureSessionDelegate?

    var phase = Phase.connecting
    var excludedBinaries: Set<String>
    var guardLink: CaptureGuardLink?
    var heartbeatTimer: OpaquePointer?
    var captureSink: SinkFacts?
    /// The capture sink is the graph node's park sink (not a module's): destroyed as the session ends.
    var madeParkSink = false
    var pacer: MonitorRecorder?
    let onsets: OnsetRecovery
    var defaultSink: (name: String, index: UInt32)?
    var volumeMirror = VolumeMirror()
    /// The callers of the default-sink refresh on its way, and of the next one.
    var defaultSinkRefresh: (waiting: [() -> Void], next: [() -> Void])?
    /// Counts refreshes begun and ended: an answer or a timeout ends one, whichever comes first.
    var defaultSinkRefreshGeneration = 0
    /// The server's and the node's readings of the default while they name different real
    /// sinks (`DefaultSinkChoice`), and since when (system uptime): the same a second on, the
    /// node's is taken.
    var defaultSinkDisagreement: (readings: DefaultSinkChoice.Readings, sinceSeconds: Double)?
    var streams: [UInt32: TrackedStream] = [:]
    /// Streams left where they play until they end: the ones the user moved off the capture
    /// sink (their choice stands) and the ones whose recording kept failing (sent back to the
    /// real sink, where taking them again would only bounce them between the two).
    var leftAlone: Set<UInt32> = []
    /// Recordings started per stream, and why the last one ended: a stream whose recording
    /// keeps failing is given up.
    var attachments: [UInt32: (count: Int, lastFailure: String?)] = [:]
    /// Recorded streams whose recording ended while they were linked to no sink, and how many
    /// times each has been looked at since (see `awaitRelink`).
    var relinking: [UInt32: Int] = [:]
    /// New streams linked to no sink yet, and how many times each has been looked at since
    /// (see `awaitFirstLink`).
    var awaitingFirstLink: [UInt32: Int] = [:]
    /// The server is pipewire-pulse (known once the guard has started).
    var serverIsPipeWire = false
    /// PipeWire's, from its pulse server's name ([major, minor, micro]).
    var pipeWireVersion: [Int]?
    /// On pipewire-pulse with SceneSound's output a node of the graph: apps are linked into it.
    var graph: (any CaptureGraph)? { serverIsPipeWire ? configuration.graph : nil }
    /// Every recording's fragment: on pipewire-pulse never shorter than its graph's quantum
    /// is set to be (`pipeWireFragmentSeconds`; at the defaults the two are the same).
    var recordingFragmentSeconds: Double {
        serverIsPipeWire ? max(configuration.fragmentSeconds, configuration.pipeWireFragmentSeconds) : configuration.fragmentSeconds
    }
    /// Resting: nothing played on our sink for `restAfterSeconds` (see `rest()`).
    var isResting = false
    /// Streams on our sink that are not corked, as last reported.
    var playingInputs: Set<UInt32> = []
    /// On pipewire-pulse: which streams reported corked are really paused.
    var pauses = PauseConfirmation()
    /// Counts the times the capture woke or went quiet: a rest timer of an older count is stale.
    var restGeneration = 0
    var routeChecksRunning = false
    /// PipeWire links from captured streams to other sinks seen at the last route check.
    var strayLinksSeen = Set<UInt32>()
    /// Watches the guard's socket: its questions while resting, its end.
    var guardSocketEvent: OpaquePointer?

    init?(mainloop: PulseMainloop, configuration: AppCapture.Configuration, token: String,
          consumer: AppCaptureConsumer, delegate: CaptureSessionDelegate) {
        guard let context = pa_context_new(mainloop.api, configuration.applicationName) else { return nil }
        self.context = context
        requests = PulseRequests(context: context)
        self.mainloop = mainloop
        self.configuration = configuration
        self.token = token
        self.consumer = consumer
        onsets = OnsetRecovery(consumer: consumer, rateHz: configuration.rateHz)
        self.delegate = delegate
        excludedBinaries = configuration.excludedBinaries
        let userdata = Unmanaged.passUnretained(self).toOpaque()
        pa_context_set_state_callback(context, { _, userdata in
            CaptureSession.from(userdata).contextStateChanged()
        }, userdata)
        pa_context_set_subscribe_callback(context, { _, event, index, userdata in
            CaptureSession.from(userdata).serverChanged(event: event, index: index)
        }, userdata)
    }

    deinit {
        shutDownLocally()
        pa_context_unref(context)
    }

    static func from(_ userdata: UnsafeMutableRawPointer?) -> CaptureSession {
        Unmanaged<CaptureSession>.fromOpaque(userdata!).takeUnretainedValue()
    }

    var capturedStreams: [CapturedStreamIdentity] {
        streams.values.filter(\.isAnnounced).map(\.identity).sorted { $0.streamIndex < $1.streamIndex }
    }

    var captureSinkName: String? { captureSink?.name }

    func connect() {
        if pulseConnect(context, serverAddress: configuration.serverAddress) < 0 { fail("cannot connect: \(pulseErrorText(context: context))") }
    }

    // MARK: Following the streams

    func rescan() {
        guard phase == .capturing else { return }
        requests.sinkInputs { [weak self] inputs in
            guard let self, let inputs else { return }
            inputs.forEach(evaluate)
        }
    }

    var decisionContext: CaptureDecision.Context {
        CaptureDecision.Context(
            ownProcessID: getpid(), defaultSinkIndex: defaultSink?.index, captureSinkIndex: captureSink?.index,
            excludedBinaries: excludedBinaries)
    }

    func evaluate(_ facts: SinkInputFacts) {
        guard phase == .capturing, let captureSink else { return }
        notePlaying(facts, on: captureSink.index)
        let decision = CaptureDecision.decide(facts, in: decisionContext)
        if var tracked = streams[facts.index] {
            if tracked.isMoving { return }
            if relinking[facts.index] != nil { return reconsiderRecording(facts) }
            if facts.sinkIndex != captureSink.index {
                if tracked.isStillArriving(on: facts.sinkIndex) { return }
                return movedElsewhere(tracked.identity, to: facts.sinkIndex)
            }
            if case .returnToDefaultSink = decision {
                release(facts.index)
                return returnToDefaultSink(facts.index)
            }
            var identity = CapturedStreamIdentity(facts)
            // Its layout is the one it was taken with (its recording is made for it): after a
            // move onto our 7.1 sink pipewire-pulse reports the sink's map as the stream's.
            identity.channels = tracked.identity.channels
            identity.isMono = tracked.identity.isMono
            identity.recordingStepSeconds = tracked.identity.recordingStepSeconds
            if identity != tracked.identity {
                tracked.identity = identity
                streams[facts.index] = tracked
                consumer.captureDidUpdate(identity)
            }
            return
        }
        guard !leftAlone.contains(facts.index) else { return }
        switch decision {
        case .take:
            // No input set for it on PipeWire's node: left where it plays, not moved to ours and back.
            if let graph, !graph.hasFreeSet {
                return leaveOnRealSink(CapturedStreamIdentity(facts), reason: Self.noFreeSet, movingBack: facts.sinkIndex == captureSink.index)
            }
            var identity = CapturedStreamIdentity(facts)
            // Half of it: the queue, read at any moment, already holds half a piece on average.
            identity.recordingStepSeconds = max(0, recordingFragmentSeconds - configuration.fragmentSeconds) / 2
            if facts.sinkIndex == captureSink.index {
                streams[facts.index] = TrackedStream(identity: identity, recorder: nil, isMoving: false)
                attach(facts.index)
            } else {
                streams[facts.index] = TrackedStream(
                    identity: identity, recorder: nil, isMoving: true, movedFromSink: facts.sinkIndex)
                requests.moveSinkInput(facts.index, toSink: captureSink.index) { [weak self] moved in
                    guard let self, phase == .capturing, streams[facts.index]?.isMoving == true else { return }
                    streams[facts.index]?.isMoving = false
                    streams[facts.index]?.movedAt = Date()
                    if moved {
                        // pipewire-pulse sends no event for the move: ours now, and playing.
                        if !facts.isCorked, playingInputs.insert(facts.index).inserted { inputsChanged() }
                        return attach(facts.index)
                    }
                    streams[facts.index] = nil
                    // A stream that just ended cannot be moved; its end is on its way.
                    if pa_context_errno(context) != PA_ERR_NOENTITY.rawValue {
                        onsets.captureDidLeave(identity, reason: "the server did not move it to the capture sink (\(pulseErrorText(context: context)))")
                    }
                }
            }
        case .returnToDefaultSink:
            onsets.forget(facts.index)
            returnToDefaultSink(facts.index)
        case .leave(.notOnDefaultSink) where attachments[facts.index] != nil:
            // Recorded before, and moved: PulseAudio ended the recording with the move.
            movedElsewhere(CapturedStreamIdentity(facts), to: facts.sinkIndex)
        case .leave(.notOnDefaultSink) where facts.sinkIndex == UInt32.max:
            awaitFirstLink(facts.index)
        case .leave:
            break  // left where it plays: forgotten when it ends
        }
    }

    /// A captured stream whose recording ended is looked at again: still ours on our sink, it is
    /// recorded anew as the same stream; linked to no sink, it is waited for (pipewire-pulse
    /// re-links a stream moved onto our 7.1 sink from a sink of another layout, which ends the
    /// recording made at the move, and says nothing when the new link is made): looked at every
    /// 50 ms for at most 2 s, then sent back to the real sink. Anywhere else, it is let go as
    /// any stream the capture no longer records.
    func reconsiderRecording(_ facts: SinkInputFacts) {
        let index = facts.index
        guard phase == .capturing, let captureSink, let tracked = streams[index], tracked.recorder == nil, !tracked.isMoving else { return }
        if facts.sinkIndex == UInt32.max { return awaitRelink(facts) }
        relinking[index] = nil
        if facts.sinkIndex == captureSink.index, case .take = CaptureDecision.decide(facts, in: decisionContext) { return attach(index) }
        release(index)
        evaluate(facts)
    }

    func awaitRelink(_ facts: SinkInputFacts) {
        let index = facts.index
        let looks = relinking[index, default: 0]
        guard looks < 40 else {
            return leaveOnRealSink(CapturedStreamIdentity(facts), reason: "linked to no sink for 2 s after its recording ended; sent back to the real sink")
        }
        relinking[index] = looks + 1
        after(seconds: 0.05) { [weak self] in
            guard let self, phase == .capturing, relinking[index] != nil else { return }
            lookAgain(index)
        }
    }

    /// A new stream linked to no sink yet. On PipeWire the session manager links an app a
    /// moment after pipewire-pulse announced it, and pipewire-pulse sends no event for a link:
    /// on a busy machine the app's last event came before, and parked on our sink, which never
    /// runs, it changes no more until we take it (seen: three apps never taken, about one
    /// start in nine while a compile ran). So it is looked at every 50 ms for at most 2 s, and
    /// judged once linked.
    func awaitFirstLink(_ index: UInt32) {
        guard awaitingFirstLink[index] == nil else { return }
        awaitingFirstLink[index] = 0
        lookForFirstLink(index)
    }

    private func lookForFirstLink(_ index: UInt32) {
        after(seconds: 0.05) { [weak self] in
            guard let self, phase == .capturing, let looks = awaitingFirstLink[index], looks < Self.firstLinkLooks else { return }
            requests.sinkInput(index) { [weak self] facts in
                guard let self, phase == .capturing, awaitingFirstLink[index] != nil else { return }
                guard let facts else { return streamEnded(index) }
                guard facts.sinkIndex != UInt32.max else {
                    // Unlinked for 2 s: left as it is (a later event showing it on our sink still takes it).
                    awaitingFirstLink[index] = looks + 1
                    if looks + 1 < Self.firstLinkLooks { lookForFirstLink(index) }
                    return
                }
                awaitingFirstLink[index] = nil
                evaluate(facts)
            }
        }
    }

    static let firstLinkLooks = 40

    /// Asks the server where the stream is now; `reconsiderRecording` takes it from there.
    func lookAgain(_ index: UInt32) {
        requests.sinkInput(index) { [weak self] facts in
            guard let self else { return }
            if let facts { reconsiderRecording(facts) } else { streamEnded(index) }
        }
    }

    /// Moved off the capture sink by the user or a policy: their choice stands until it ends.
    func movedElsewhere(_ stream: CapturedStreamIdentity, to sink: UInt32) {
        release(stream.streamIndex)
        leftAlone.insert(stream.streamIndex)
        onsets.captureDidLeave(stream, reason: "moved to sink \(sink) by the user or a policy; it plays there until it ends")
    }

    func attach(_ index: UInt32) {
        guard let captureSink, var tracked = streams[index] else { return }
        if let graph, !graph.hasFreeSet {
            return leaveOnRealSink(tracked.identity, reason: Self.noFreeSet)
        }
        var attempts = attachments[index] ?? (0, nil)
        attempts.count += 1
        // On PipeWire our link is what starts the app (the park sink holds it until then), and
        // its cycles go to the stream's feed from the first: the consumer must have the stream
        // before the link is made, or a consumer slow to take it (a log line that waited) loses
        // the sound's start.
        let isNew = !tracked.isAnnounced
        if graph != nil, attempts.count <= 3 { announce(&tracked) }
        let recorder = attempts.count <= 3 ? makeRecorder(index, sinkName: captureSink.name, identity: tracked.identity) : nil
        if recorder == nil, attempts.count <= 3 { attempts.lastFailure = "not started: \(pulseErrorText(context: context))" }
        attachments[index] = attempts
        guard let recorder else {
            let tries = min(attempts.count, 3)
            return leaveOnRealSink(tracked.identity, reason: """
                its recording failed after \(tries) \(tries == 1 ? "try" : "tries") (\(attempts.lastFailure ?? "?")); \
                sent back to the real sink
                """)
        }
        tracked.recorder = recorder
        if isNew { announce(&tracked) } else { onsets.recordingDidRestart(streamIndex: index) }
        streams[index] = tracked
    }

    /// Tells the consumer of the stream, once.
    private func announce(_ tracked: inout TrackedStream) {
        guard !tracked.isAnnounced else { return }
        tracked.isAnnounced = true
        streams[tracked.identity.streamIndex] = tracked
        onsets.captureDidStart(tracked.identity)
    }

    static let noFreeSet = "every input set of SceneSound's PipeWire node is taken (or the node is reconnecting); it plays on the real sink until it ends"

    /// Left playing on the real sink (moved back there from ours) rather than silent on ours,
    /// until it ends.
    func leaveOnRealSink(_ stream: CapturedStreamIdentity, reason: String, movingBack: Bool = true) {
        release(stream.streamIndex)
        leftAlone.insert(stream.streamIndex)
        onsets.captureDidLeave(stream, reason: reason)
        if movingBack { returnToDefaultSink(stream.streamIndex) }
    }

    /// Stops capturing a stream without touching where it plays.
    func release(_ index: UInt32) {
        guard let tracked = streams.removeValue(forKey: index) else { return }
        relinking[index] = nil
        tracked.recorder?.close()
        if tracked.isAnnounced { onsets.captureDidEnd(streamIndex: index) }
    }

    func returnToDefaultSink(_ index: UInt32, attemptsLeft: Int = 5) {
        guard let defaultSink else { return }
        requests.moveSinkInput(index, toSink: defaultSink.index) { [weak self] moved in
            guard let self, !moved, attemptsLeft > 0, phase == .capturing else { return }
            // The real sink may have gone a moment ago (a headset unplugged), before the
            // server said so: learn the one that took over, and try again.
            after(seconds: 0.1) { [weak self] in
                self?.refreshDefaultSink { [weak self] in self?.returnToDefaultSink(index, attemptsLeft: attemptsLeft - 1) }
            }
        }
    }

    func streamEnded(_ index: UInt32) {
        if playingInputs.remove(index) != nil { inputsChanged() }
        pauses.forget(index)
        release(index)
        onsets.forget(index)
        leftAlone.remove(index)
        attachments[index] = nil
        awaitingFirstLink[index] = nil
    }

    func setExcludedBinaries(_ binaries: Set<String>) {
        excludedBinaries = binaries
        rescan()
    }

    func after(seconds: Double, _ body: @escaping () -> Void) {
        PulseMainloop.after(mainloop.api, seconds: seconds, body)
    }
}
