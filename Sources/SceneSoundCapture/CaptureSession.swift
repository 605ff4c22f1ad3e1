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
/// supervisor starts a new one. Confined to the mainloop thread.
final class CaptureSession {
    private enum Phase { case connecting, preparing, capturing, finished }

    private struct TrackedStream {
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
    private let context: OpaquePointer
    private let requests: PulseRequests
    private let mainloop: PulseMainloop
    private let configuration: AppCapture.Configuration
    private let consumer: AppCaptureConsumer
    private weak var delegate: CaptureSessionDelegate?

    private var phase = Phase.connecting
    private var excludedBinaries: Set<String>
    private var guardLink: CaptureGuardLink?
    private var heartbeatTimer: OpaquePointer?
    private var captureSink: SinkFacts?
    private var pacer: MonitorRecorder?
    /// On pipewire-pulse: PipeWire itself, over which the streams are recorded.
    private var pipeWire: PipeWireConnection?
    /// On pipewire-pulse: connections for the streams recorded over libpulse, one stream each.
    private var recordingContexts: [OpaquePointer] = []
    /// What waits for every recording connection to be ready or failed.
    private var whenRecordingContextsSettled: (() -> Void)?
    private let onsets: OnsetRecovery
    private var defaultSink: (name: String, index: UInt32)?
    private var volumeMirror = VolumeMirror()
    /// The callers of the default-sink refresh on its way, and of the next one.
    private var defaultSinkRefresh: (waiting: [() -> Void], next: [() -> Void])?
    private var streams: [UInt32: TrackedStream] = [:]
    /// Streams left where they play until they end: the ones the user moved off the capture
    /// sink (their choice stands) and the ones whose recording kept failing (sent back to the
    /// real sink, where taking them again would only bounce them between the two).
    private var leftAlone: Set<UInt32> = []
    /// Recordings started per stream, and why the last one ended: a stream whose recording
    /// keeps failing is given up.
    private var attachments: [UInt32: (count: Int, lastFailure: String?)] = [:]
    /// Recorded streams whose recording ended while they were linked to no sink, and how many
    /// times each has been looked at since (see `awaitRelink`).
    private var relinking: [UInt32: Int] = [:]
    /// The server is pipewire-pulse (known once the guard has started).
    private var serverIsPipeWire = false
    /// On pipewire-pulse with SceneSound's output a node of the graph: apps are linked into it.
    private var graph: (any CaptureGraph)? { serverIsPipeWire ? configuration.graph : nil }
    /// Every recording's fragment: on pipewire-pulse never shorter than its graph's quantum
    /// is set to be (`pipeWireFragmentSeconds`; at the defaults the two are the same).
    private var recordingFragmentSeconds: Double {
        serverIsPipeWire ? max(configuration.fragmentSeconds, configuration.pipeWireFragmentSeconds) : configuration.fragmentSeconds
    }
    /// Resting: nothing played on our sink for `restAfterSeconds` (see `rest()`).
    private var isResting = false
    /// Streams on our sink that are not corked, as last reported.
    private var playingInputs: Set<UInt32> = []
    /// On pipewire-pulse: which streams reported corked are really paused.
    private var pauses = PauseConfirmation()
    /// Counts the times the capture woke or went quiet: a rest timer of an older count is stale.
    private var restGeneration = 0
    private var routeChecksRunning = false
    /// PipeWire links from captured streams to other sinks seen at the last route check.
    private var strayLinksSeen = Set<UInt32>()
    private var crossedRecordingsCheckIsDue = false
    /// Watches the guard's socket: its questions while resting, its end.
    private var guardSocketEvent: OpaquePointer?

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

    private static func from(_ userdata: UnsafeMutableRawPointer?) -> CaptureSession {
        Unmanaged<CaptureSession>.fromOpaque(userdata!).takeUnretainedValue()
    }

    var capturedStreams: [CapturedStreamIdentity] {
        streams.values.filter(\.isAnnounced).map(\.identity).sorted { $0.streamIndex < $1.streamIndex }
    }

    var captureSinkName: String? { captureSink?.name }

    func connect() {
        if pulseConnect(context, serverAddress: configuration.serverAddress) < 0 { fail("cannot connect: \(pulseErrorText(context: context))") }
    }

    // MARK: Setting up

    private func contextStateChanged() {
        switch pa_context_get_state(context) {
        case PA_CONTEXT_READY where phase == .connecting:
            phase = .preparing
            prepare()
        case PA_CONTEXT_FAILED, PA_CONTEXT_TERMINATED:
            fail("connection lost: \(pulseErrorText(context: context))")
        default:
            break
        }
    }

    private func prepare() {
        // Every recording reaches the engine through this thread; at normal priority a busy
        // machine kept it waiting long enough for every captured stream to run short (32
        // streams: up to 101 ms in 20 s). Niced as PulseAudio itself is, not real-time: it
        // also does unbounded work (the onset searches of many new streams at once), and a
        // real-time thread doing that can hold every normal thread of the daemon off a core.
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, -11)
        let mask = PA_SUBSCRIPTION_MASK_SINK_INPUT.rawValue | PA_SUBSCRIPTION_MASK_SINK.rawValue
            | PA_SUBSCRIPTION_MASK_SERVER.rawValue | PA_SUBSCRIPTION_MASK_CLIENT.rawValue
        if let operation = pa_context_subscribe(context, pa_subscription_mask_t(mask), nil, nil) {
            pa_operation_unref(operation)
        }
        let ownPID = getpid(), token = token
        // Leftovers: sinks of processes that are gone, and our own from an earlier session.
        CaptureSweep.run(on: context, isTarget: { properties in
            CaptureSinkProperties.isLeftover(properties, processIsAlive: processIsAlive)
                || (properties[CaptureSinkProperties.ownerPIDKey] == String(ownPID)
                    && properties[CaptureSinkProperties.sessionKey] != token)
        }) { [weak self] _ in
            self?.startGuard()
        }
    }

    private func startGuard() {
        guard phase == .preparing else { return }
        if let executable = configuration.guardExecutable {
            do {
                guardLink = try CaptureGuardLink.spawn(
                    executable: executable, session: token, serverAddress: configuration.serverAddress,
                    hangSeconds: configuration.hangSeconds)
            } catch {
                return fail("\(error)")
            }
            watchGuardSocket()
            scheduleHeartbeat()
        }
        requests.serverName { [weak self] serverName in
            guard let self, phase == .preparing else { return }
            if serverName?.contains("PipeWire") == true {
                serverIsPipeWire = true
                if graph == nil {
                    connectPipeWire()
                    connectRecordingContexts()
                }
            }
            requests.defaultSinkName { [weak self] name in self?.loadCaptureSink(previousDefault: name) }
        }
    }

    /// Without PipeWire's own socket the streams are recorded over libpulse, as on PulseAudio.
    private func connectPipeWire() {
        guard let socket = PipeWireConnection.socketPath(
            pulseServerAddress: configuration.serverAddress, environment: ProcessInfo.processInfo.environment) else { return }
        pipeWire = PipeWireConnection(socketPath: socket, applicationName: configuration.applicationName, mainloop: mainloop)
        pipeWire?.onLinkAppeared = { [weak self] in self?.checkForCrossedRecordingsSoon() }
    }

    /// Once per burst (a stream's links come together), outside libpipewire's dispatch.
    private func checkForCrossedRecordingsSoon() {
        guard pipeWire != nil, !crossedRecordingsCheckIsDue else { return }
        crossedRecordingsCheckIsDue = true
        mainloop.runSoon { [weak self] in
            self?.crossedRecordingsCheckIsDue = false
            self?.redoCrossedRecordings()
        }
    }

    /// Connected now, so that they are ready when the first streams are: a connection made
    /// for a stream would only start its recording later, losing more of its start.
    private func connectRecordingContexts() {
        for _ in 0 ..< AppCapture.pulseRecordingsOnPipeWire {
            guard let context = pa_context_new(mainloop.api, configuration.applicationName + " recording") else { return }
            pa_context_set_state_callback(context, { _, userdata in
                CaptureSession.from(userdata).recordingContextStateChanged()
            }, Unmanaged.passUnretained(self).toOpaque())
            guard pulseConnect(context, serverAddress: configuration.serverAddress) == 0 else {
                pa_context_set_state_callback(context, nil, nil)
                pa_context_unref(context)
                return
            }
            recordingContexts.append(context)
        }
    }

    /// A connected recording context with no recording on it; a broken one is never chosen
    /// (its recording ended with it, and the stream is attached again elsewhere).
    private func idleRecordingContext() -> OpaquePointer? {
        recordingContexts.first { context in
            pa_context_get_state(context) == PA_CONTEXT_READY
                && !streams.values.contains { ($0.recorder as? MonitorRecorder)?.context == context }
        }
    }

    private func loadCaptureSink(previousDefault: String?) {
        guard phase == .preparing else { return }
        let arguments = CaptureSinkProperties.nullSinkArguments(
            session: token, ownerPID: getpid(), previousDefaultSink: previousDefault, rateHz: configuration.rateHz,
            isPassive: graph != nil)
        requests.loadModule("module-null-sink", arguments: arguments) { [weak self] module in
            guard let self, phase == .preparing else { return }
            guard module != nil else { return fail("cannot load module-null-sink: \(pulseErrorText(context: context))") }
            findCaptureSink(attemptsLeft: 50)
        }
    }

    /// PipeWire's pulse server may announce the sink a moment after the module loaded.
    private func findCaptureSink(attemptsLeft: Int) {
        requests.sink(named: CaptureSinkProperties.sinkName) { [weak self] sink in
            guard let self, phase == .preparing else { return }
            guard let sink, sink.properties[CaptureSinkProperties.sessionKey] == token else {
                guard attemptsLeft > 0 else { return fail("the capture sink did not appear") }
                return after(seconds: 0.02) { [weak self] in self?.findCaptureSink(attemptsLeft: attemptsLeft - 1) }
            }
            captureSink = sink
            captureSinkReported(sink)
            // Linked into our node, an app reaches the engine in the cycle it plays: no first
            // milliseconds to recover from the mix.
            if graph == nil { pacer = MonitorRecorder(
                context: context, streamIndex: nil, monitorSourceName: sink.name + ".monitor", rateHz: configuration.rateHz,
                fragmentSeconds: recordingFragmentSeconds, streamName: "SceneSound capture pacer", channels: .stereo,
                inhibitsSuspend: serverIsPipeWire, deliver: { [onsets] in onsets.mixDidArrive($0) }, delegate: self) }
            // Ours becomes the default sink, so that a new stream starts there: taken over
            // before its first sample plays rather than moved after it was heard dry.
            whenRecordingContextsSettle { [weak self] in
                self?.refreshDefaultSink { [weak self] in
                    guard let self, phase == .preparing else { return }
                    phase = .capturing
                    delegate?.sessionDidStartCapturing(self, sinkName: sink.name)
                    rescan()
                    startRouteChecks()
                    inputsChanged()
                    // A default chosen by the user while we prepared raised an event we did not
                    // follow yet; read the default once more, now that every change is followed.
                    refreshDefaultSink {}
                }
            }
        }
    }

    /// Once the recording connections are ready (or failed), so that the streams already
    /// playing are recorded through them: recorded another way, they could not be found in
    /// the mix, and a stream starting over them would lose its first milliseconds.
    private func whenRecordingContextsSettle(_ body: @escaping () -> Void) {
        whenRecordingContextsSettled = body
        recordingContextStateChanged()
    }

    private var recordingContextsAreConnecting: Bool {
        recordingContexts.contains { context in
            let state = pa_context_get_state(context)
            return PA_CONTEXT_IS_GOOD(state) != 0 && state != PA_CONTEXT_READY
        }
    }

    private func recordingContextStateChanged() {
        guard let body = whenRecordingContextsSettled, !recordingContextsAreConnecting else { return }
        whenRecordingContextsSettled = nil
        body()
    }

    // MARK: Following the server

    private func serverChanged(event: pa_subscription_event_type_t, index: UInt32) {
        guard phase == .capturing else { return }
        let facility = event.rawValue & PA_SUBSCRIPTION_EVENT_FACILITY_MASK.rawValue
        let type = event.rawValue & PA_SUBSCRIPTION_EVENT_TYPE_MASK.rawValue
        switch facility {
        case PA_SUBSCRIPTION_EVENT_SINK_INPUT.rawValue:
            if type == PA_SUBSCRIPTION_EVENT_REMOVE.rawValue { return streamEnded(index) }
            // Born on the capture sink (ours is the default): its onset is in the mix from now.
            // The mix's recording is resumed first, before the server can render the stream.
            if type == PA_SUBSCRIPTION_EVENT_NEW.rawValue {
                wake()
                onsets.streamAppeared(index)
            }
            let judge: () -> Void = { [weak self] in
                self?.requests.sinkInput(index) { [weak self] facts in
                    guard let self else { return }
                    if let facts { evaluate(facts) } else { streamEnded(index) }
                }
            }
            // A new stream is judged against the default sink as it is now, not as the last
            // server event left it: right after the server (re)starts, the default is chosen
            // while the first apps already play.
            if type == PA_SUBSCRIPTION_EVENT_NEW.rawValue { refreshDefaultSink(judge) } else { judge() }
        case PA_SUBSCRIPTION_EVENT_SINK.rawValue:
            if type == PA_SUBSCRIPTION_EVENT_REMOVE.rawValue, index == captureSink?.index {
                return fail("the capture sink was removed")
            }
            if type == PA_SUBSCRIPTION_EVENT_CHANGE.rawValue, index == captureSink?.index || index == defaultSink?.index {
                mirrorVolume(ofSink: index)  // and, as for any sink event, the default looked at
            }
            refreshDefaultSink { [weak self] in self?.rescan() }
            if type == PA_SUBSCRIPTION_EVENT_REMOVE.rawValue {
                // Its streams land on the default, ours, a moment later, without an event on
                // PipeWire: look again then, for those to send on to the real sink.
                after(seconds: 0.5) { [weak self] in self?.refreshDefaultSink { [weak self] in self?.rescan() } }
            }
        case PA_SUBSCRIPTION_EVENT_SERVER.rawValue:
            refreshDefaultSink { [weak self] in self?.rescan() }
        default:
            break
        }
    }

    /// Keeps ours the default sink and learns the real one behind it: where the streams we
    /// let go play, and SceneSound's own output (the consumer pins it there). Another sink
    /// becoming the default means the user (or the server, for a device plugged in) chose it:
    /// it is the real one from now on, and ours takes its place again. If the real one goes
    /// away, another takes over. The sweep undoes all this, however this process ends.
    ///
    /// Asked for in bursts (each new stream is judged against the default as it is now):
    /// callers coming while a refresh is on its way share the next one, which starts after
    /// what they saw. PulseAudio answers on the main loop that also accepts new clients, with
    /// five connections waiting at most and the rest refused: 32 apps starting at once had it
    /// answer two requests each for us meanwhile, and some of them could not connect.
    private func refreshDefaultSink(_ then: @escaping () -> Void) {
        if defaultSinkRefresh != nil { return defaultSinkRefresh!.next.append(then) }
        startDefaultSinkRefresh(for: [then])
    }

    private func startDefaultSinkRefresh(for waiting: [() -> Void]) {
        defaultSinkRefresh = (waiting, [])
        askDefaultSink { [weak self] in
            guard let self, let refresh = defaultSinkRefresh else { return }
            if refresh.next.isEmpty { defaultSinkRefresh = nil } else { startDefaultSinkRefresh(for: refresh.next) }
            refresh.waiting.forEach { $0() }
        }
    }

    private func askDefaultSink(_ then: @escaping () -> Void) {
        requests.defaultSinkName { [weak self] name in
            guard let self else { return }
            requests.sinks { [weak self] sinks in
                guard let self, let captureSink, let sinks else { return then() }
                let real = sinks.filter { !CaptureSinkProperties.isCaptureSink($0.properties) }
                let chosen = real.first { $0.name == name } ?? real.first { $0.name == defaultSink?.name } ?? real.first
                if let chosen, chosen.name != defaultSink?.name || chosen.index != defaultSink?.index {
                    defaultSink = (chosen.name, chosen.index)
                    _ = guardLink?.tellRealSink(chosen.name)
                    consumer.captureDidChooseRealSink(chosen.name)
                    volumeMirror.realSinkChanged()
                    mirrorVolume(ofSink: chosen.index)
                }
                guard name != captureSink.name, chosen != nil else { return then() }
                requests.setDefaultSink(captureSink.name) { _ in then() }
            }
        }
    }

    // MARK: Volume

    /// Keeps the capture sink's and the real sink's volume and mute the same (`VolumeMirror`):
    /// the desktop's volume keys act on the default sink, ours, and are heard on the real one.
    private func mirrorVolume(ofSink index: UInt32) {
        requests.sinks { [weak self] sinks in
            guard let self, phase == .capturing || phase == .preparing, let sinks,
                  let ours = sinks.first(where: { $0.index == self.captureSink?.index }),
                  let real = sinks.first(where: { $0.index == self.defaultSink?.index }) else { return }
            captureSinkReported(ours)
            let inOurOrder: ([UInt32], [Int32]) -> [UInt32] = {
                VolumeMirror.remap($0, from: $1, to: ours.channelPositions)
            }
            if index == real.index {
                let reported = VolumeMirror.Setting(
                    channelVolumes: inOurOrder(real.channelVolumes, real.channelPositions), isMuted: real.isMuted)
                apply(volumeMirror.realReported(reported), to: ours, from: ours.channelPositions)
            } else {
                let reported = VolumeMirror.Setting(channelVolumes: ours.channelVolumes, isMuted: ours.isMuted)
                apply(volumeMirror.captureReported(reported), to: real, from: ours.channelPositions)
            }
        }
    }

    private func apply(_ change: (channelVolumes: [UInt32]?, isMuted: Bool?), to sink: SinkFacts, from positions: [Int32]) {
        if let volumes = change.channelVolumes {
            let inItsOrder = VolumeMirror.remap(volumes, from: positions, to: sink.channelPositions)
            requests.setSinkVolume(sink.index, channelVolumes: inItsOrder) { _ in }
        }
        if let isMuted = change.isMuted { requests.setSinkMute(sink.index, isMuted: isMuted) { _ in } }
    }

    /// Our sink's volume scales the mix the onset recovery compares with.
    private func captureSinkReported(_ sink: SinkFacts) {
        let gains = sink.channelVolumes.map { sink.isMuted ? 0 : Float(pa_sw_volume_to_linear($0)) }
        guard gains.count >= 2 else { return onsets.mixGainDidChange(left: gains.first ?? 1, right: gains.first ?? 1) }
        onsets.mixGainDidChange(left: gains[0], right: gains[1])
    }

    private func rescan() {
        guard phase == .capturing else { return }
        requests.sinkInputs { [weak self] inputs in
            guard let self, let inputs else { return }
            inputs.forEach(evaluate)
        }
    }

    /// pipewire-pulse (0.3.65) sends no event when a stream is moved to another sink, and the
    /// recording, linked to the app's node, goes on after it: a stream the user moves by hand
    /// is found here, let go, and from then on plays only where it was put.
    /// Only while awake: at rest nothing plays on our sink, so nothing can be moved off it.
    private func checkRoutesEverySecond() {
        after(seconds: 1) { [weak self] in
            guard let self, phase == .capturing, !isResting else {
                self?.routeChecksRunning = false
                return
            }
            rescan()
            undoStrayLinks()
            redoCrossedRecordings()  // also here: a recording's number may come after its links
            checkRoutesEverySecond()
        }
    }

    /// WirePlumber (0.4.13) may leave a stream we took linked to the sink it played on as well
    /// as to ours, while pipewire-pulse names ours as its sink: the app is then heard dry beside
    /// its capture (seen once in a CI run: every click at the direct path's timing, the capture
    /// reporting it captured). A link from a captured stream to another sink still there at
    /// the next check, a second later, is undone; a link seen once may be a move the user just
    /// made, whose link to ours goes within milliseconds and which is then followed as a move.
    private func undoStrayLinks() {
        guard pipeWire != nil || graph != nil, let captureSink else { return }
        var seen = Set<UInt32>()
        for (index, tracked) in streams where !tracked.isMoving {
            let links = graph?.strayLinks(nodeSerial: UInt64(index), parkSinkSerial: UInt64(captureSink.index))
                ?? pipeWire?.strayLinks(appSerial: index, sinkSerial: captureSink.index) ?? []
            for link in links {
                seen.insert(link)
                guard strayLinksSeen.contains(link) else { continue }
                if let graph { graph.destroyLink(link) } else { pipeWire?.destroyLink(link) }
                onsets.captureDidRepair(
                    "\(tracked.identity.applicationName ?? "?") (stream \(index)) was also linked to another sink (PipeWire link \(link)), heard dry beside its capture: link undone")
            }
        }
        strayLinksSeen = seen
    }

    /// WirePlumber (0.4.13) now and then links a stream taken while it played on another sink
    /// to its recording with left and right crossed (FL to FR and FR to FL, while its links to
    /// our sink are straight): the app is heard mirrored, and OnsetRecovery never finds it in
    /// the mix (seen in about one run of three of ShortSoundTests' music-first case). Such a
    /// recording is made anew, which WirePlumber links straight (a stream is recorded at most
    /// three times, as when its recording fails). Looked at whenever links appear.
    private func redoCrossedRecordings() {
        guard let pipeWire, phase == .capturing else { return }
        for (index, tracked) in streams where !tracked.isMoving {
            guard let recorder = tracked.recorder, let serial = recorder.nodeSerial(on: pipeWire),
                  pipeWire.crossedLinks(from: index, to: serial) > 0 else { continue }
            onsets.captureDidRepair(
                "\(tracked.identity.applicationName ?? "?") (stream \(index)) was linked to its recording with its channels crossed (left to right): recorded anew")
            attachments[index]?.lastFailure = "its recording was linked with its channels crossed"
            recorder.close()
            streams[index]?.recorder = nil
            attach(index)
        }
    }

    private func startRouteChecks() {
        guard pipeWire != nil || graph != nil, !routeChecksRunning else { return }
        routeChecksRunning = true
        checkRoutesEverySecond()
    }

    private var decisionContext: CaptureDecision.Context {
        CaptureDecision.Context(
            ownProcessID: getpid(), defaultSinkIndex: defaultSink?.index, captureSinkIndex: captureSink?.index,
            excludedBinaries: excludedBinaries)
    }

    private func evaluate(_ facts: SinkInputFacts) {
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
        case .leave:
            break  // perhaps for now (not linked yet): forgotten when it ends
        }
    }

    /// A captured stream whose recording ended is looked at again: still ours on our sink, it is
    /// recorded anew as the same stream; linked to no sink, it is waited for (pipewire-pulse
    /// re-links a stream moved onto our 7.1 sink from a sink of another layout, which ends the
    /// recording made at the move, and says nothing when the new link is made): looked at every
    /// 50 ms for at most 2 s, then sent back to the real sink. Anywhere else, it is let go as
    /// any stream the capture no longer records.
    private func reconsiderRecording(_ facts: SinkInputFacts) {
        let index = facts.index
        guard phase == .capturing, let captureSink, let tracked = streams[index], tracked.recorder == nil, !tracked.isMoving else { return }
        if facts.sinkIndex == UInt32.max { return awaitRelink(facts) }
        relinking[index] = nil
        if facts.sinkIndex == captureSink.index, case .take = CaptureDecision.decide(facts, in: decisionContext) { return attach(index) }
        release(index)
        evaluate(facts)
    }

    private func awaitRelink(_ facts: SinkInputFacts) {
        let index = facts.index
        let looks = relinking[index, default: 0]
        guard looks < 40 else {
            release(index)
            leftAlone.insert(index)
            onsets.captureDidLeave(
                CapturedStreamIdentity(facts),
                reason: "linked to no sink for 2 s after its recording ended; sent back to the real sink")
            return returnToDefaultSink(index)
        }
        relinking[index] = looks + 1
        after(seconds: 0.05) { [weak self] in
            guard let self, phase == .capturing, relinking[index] != nil else { return }
            lookAgain(index)
        }
    }

    /// Asks the server where the stream is now; `reconsiderRecording` takes it from there.
    private func lookAgain(_ index: UInt32) {
        requests.sinkInput(index) { [weak self] facts in
            guard let self else { return }
            if let facts { reconsiderRecording(facts) } else { streamEnded(index) }
        }
    }

    /// Moved off the capture sink by the user or a policy: their choice stands until it ends.
    private func movedElsewhere(_ stream: CapturedStreamIdentity, to sink: UInt32) {
        release(stream.streamIndex)
        leftAlone.insert(stream.streamIndex)
        onsets.captureDidLeave(stream, reason: "moved to sink \(sink) by the user or a policy; it plays there until it ends")
    }

    private func attach(_ index: UInt32) {
        guard let captureSink, var tracked = streams[index] else { return }
        var attempts = attachments[index] ?? (0, nil)
        attempts.count += 1
        let recorder = attempts.count <= 3 ? makeRecorder(index, sinkName: captureSink.name, identity: tracked.identity) : nil
        if recorder == nil, attempts.count <= 3 { attempts.lastFailure = "not started: \(pulseErrorText(context: context))" }
        attachments[index] = attempts
        guard let recorder else {
            // Left playing on the real sink rather than silent on ours.
            release(index)
            leftAlone.insert(index)
            let tries = min(attempts.count, 3)
            onsets.captureDidLeave(tracked.identity, reason: """
                its recording failed after \(tries) \(tries == 1 ? "try" : "tries") (\(attempts.lastFailure ?? "?")); \
                sent back to the real sink
                """)
            return returnToDefaultSink(index)
        }
        tracked.recorder = recorder
        let isNew = !tracked.isAnnounced
        tracked.isAnnounced = true
        streams[index] = tracked
        if isNew { onsets.captureDidStart(tracked.identity) } else { onsets.recordingDidRestart(streamIndex: index) }
    }

    private func makeRecorder(_ index: UInt32, sinkName: String, identity: CapturedStreamIdentity) -> (any StreamRecorder)? {
        let name = "SceneSound capture of \(identity.applicationName ?? "stream \(index)")"
        let channels = identity.channels
        // A surround stream is handed on as it is recorded: the onset recovery compares the
        // stereo mix (the sink's FL and FR), in which only a stereo or mono stream is whole.
        let deliver: (UnsafeBufferPointer<Float>) -> Void = channels.isStereo
            ? { [onsets] in onsets.captureDidReceive(streamIndex: index, interleaved: $0) }
            : { [consumer] in consumer.captureDidReceive(streamIndex: index, interleaved: $0) }
        if !channels.isStereo { onsets.forget(index) }
        // Linked into SceneSound's node while a set is free: heard in the cycle it plays, from
        // its first sample (the capture sink is passive: the app starts with our link).
        if let graph, graph.hasFreeSet {
            onsets.forget(index)
            return GraphRecorder(graph: graph, streamIndex: index, channels: channels, delegate: self) { [weak self] in
                self?.after(seconds: $0, $1)
            }
        }
        // On pipewire-pulse a few streams at a time are recorded through libpulse like on
        // PulseAudio, so that OnsetRecovery (confined to this thread) gives them their first
        // milliseconds: an event sound mostly starts while little else plays. Each takes a
        // connection of its own (pipewire-pulse serves one record stream per client and loop
        // pass); the streams beyond those are recorded over PipeWire's own protocol, straight
        // to the consumer from libpipewire's data thread, heard from where their own
        // recording begins.
        if !recordingContexts.isEmpty {
            if let recordingContext = idleRecordingContext() {
                return MonitorRecorder(
                    context: recordingContext, streamIndex: index, monitorSourceName: sinkName + ".monitor",
                    rateHz: configuration.rateHz, fragmentSeconds: recordingFragmentSeconds, streamName: name,
                    channels: channels, isPassive: true, deliver: deliver, delegate: self)
            }
            if let pipeWire {
                onsets.forget(index)
                return PipeWireRecorder(
                    connection: pipeWire, streamIndex: index, rateHz: configuration.rateHz,
                    latencyFrames: configuration.pipeWireQuantumFrames, streamName: name, channels: channels,
                    deliver: { [consumer] in consumer.captureDidReceive(streamIndex: index, interleaved: $0) },
                    delegate: self)
            }
        }
        return MonitorRecorder(
            context: context, streamIndex: index, monitorSourceName: sinkName + ".monitor", rateHz: configuration.rateHz,
            fragmentSeconds: recordingFragmentSeconds, streamName: name, channels: channels,
            inhibitsSuspend: serverIsPipeWire, isPassive: serverIsPipeWire, deliver: deliver, delegate: self)
    }

    /// Stops capturing a stream without touching where it plays.
    private func release(_ index: UInt32) {
        guard let tracked = streams.removeValue(forKey: index) else { return }
        relinking[index] = nil
        tracked.recorder?.close()
        if tracked.isAnnounced { onsets.captureDidEnd(streamIndex: index) }
    }

    private func returnToDefaultSink(_ index: UInt32, attemptsLeft: Int = 5) {
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

    private func streamEnded(_ index: UInt32) {
        if playingInputs.remove(index) != nil { inputsChanged() }
        pauses.forget(index)
        release(index)
        onsets.forget(index)
        leftAlone.remove(index)
        attachments[index] = nil
    }

    func setExcludedBinaries(_ binaries: Set<String>) {
        excludedBinaries = binaries
        rescan()
    }

    // MARK: Ending

    /// The clean stop: undo everything on the server, then disconnect. `done` runs on the
    /// mainloop thread once the server has answered (or at once if it is unreachable).
    func stop(_ done: @escaping (CaptureSweep.Outcome?) -> Void) {
        let wasConnected = phase == .capturing || phase == .preparing
        phase = .finished
        releaseAll()
        guard wasConnected else {
            shutDownLocally()
            return done(nil)
        }
        let token = token
        CaptureSweep.run(on: context, isTarget: { $0[CaptureSinkProperties.sessionKey] == token },
                         realSink: defaultSink?.name) { [weak self] outcome in
            self?.shutDownLocally()
            done(outcome)
        }
    }

    private func fail(_ reason: String) {
        guard phase != .finished else { return }
        phase = .finished
        releaseAll()
        shutDownLocally()
        delegate?.sessionDidFail(self, reason: reason)
    }

    private func releaseAll() {
        for index in streams.keys.sorted() { release(index) }
    }

    /// Silences every callback, disconnects, lets the guard go. Idempotent.
    private func shutDownLocally() {
        phase = .finished
        if let heartbeatTimer {
            mainloop.cancelTimer(heartbeatTimer)
            self.heartbeatTimer = nil
        }
        for tracked in streams.values { tracked.recorder?.close() }
        streams.removeAll()
        pacer?.close()
        pacer = nil
        pipeWire?.close()
        pipeWire = nil
        whenRecordingContextsSettled = nil
        for recordingContext in recordingContexts {
            pa_context_set_state_callback(recordingContext, nil, nil)
            if PA_CONTEXT_IS_GOOD(pa_context_get_state(recordingContext)) != 0 { pa_context_disconnect(recordingContext) }
            pa_context_unref(recordingContext)
        }
        recordingContexts.removeAll()
        pa_context_set_state_callback(context, nil, nil)
        pa_context_set_subscribe_callback(context, nil, nil)
        if PA_CONTEXT_IS_GOOD(pa_context_get_state(context)) != 0 {
            pa_context_disconnect(context)
        }
        if let guardSocketEvent {
            mainloop.api.pointee.io_free(guardSocketEvent)
            self.guardSocketEvent = nil
        }
        // Closed after the server has been told everything: the guard then finds nothing left.
        guardLink?.close()
        guardLink = nil
    }

    // MARK: Heartbeat

    /// Beats from this thread on purpose: if the thread that captures is stuck, the guard
    /// must notice.
    private func scheduleHeartbeat() {
        heartbeatTimer = mainloop.scheduleTimer(
            afterSeconds: configuration.heartbeatSeconds, userdata: Unmanaged.passUnretained(self).toOpaque()
        ) { api, timer, _, userdata in
            let session = CaptureSession.from(userdata)
            api!.pointee.time_free(timer)
            session.heartbeatTimer = nil
            session.beat()
        }
    }

    private func beat() {
        guard phase != .finished, !isResting, let guardLink else { return }
        guard guardLink.beat() else { return fail("the capture guard (pid \(guardLink.pid)) is gone") }
        scheduleHeartbeat()
    }

    /// The guard asks (`p`) whether a resting daemon is alive when an app stream changes on
    /// the server; the answer comes from this thread, as the heartbeat does. Its end of the
    /// socket closing means it is gone, seen at once rather than at the next beat.
    private func watchGuardSocket() {
        guard let guardLink else { return }
        guardSocketEvent = mainloop.api.pointee.io_new(
            mainloop.api, guardLink.descriptor, PA_IO_EVENT_INPUT, { _, _, _, _, userdata in
                CaptureSession.from(userdata).guardSpoke()
            }, Unmanaged.passUnretained(self).toOpaque())
    }

    private func guardSpoke() {
        guard phase != .finished, let guardLink else { return }
        let (asked, gone) = guardLink.readQuestions()
        if gone {
            if let guardSocketEvent {
                mainloop.api.pointee.io_free(guardSocketEvent)
                self.guardSocketEvent = nil
            }
            return fail("the capture guard (pid \(guardLink.pid)) is gone")
        }
        guard asked else { return }
        let answered = isResting ? guardLink.rest() : guardLink.beat()
        if !answered { fail("the capture guard (pid \(guardLink.pid)) is gone") }
    }

    // MARK: Resting


    /// Keeps `playingInputs` up to date from a stream's facts.
    private func notePlaying(_ facts: SinkInputFacts, on captureSinkIndex: UInt32) {
        // A stream being moved to ours, or whose move the server has not caught up with yet
        // (pipewire-pulse reports the old sink for a moment), is ours.
        let tracked = streams[facts.index]
        let arriving = tracked.map { $0.isMoving || $0.isStillArriving(on: facts.sinkIndex) } ?? false
        let playing = (facts.sinkIndex == captureSinkIndex || arriving) && !isPaused(facts)
        let changed = playing ? playingInputs.insert(facts.index).inserted : playingInputs.remove(facts.index) != nil
        if changed { inputsChanged() }
    }

    /// Whether a stream on our sink is paused by its app. On pipewire-pulse `corked` only
    /// says its node is not running (a stream being linked or moved reads corked too): there
    /// it is paused once `PauseConfirmation` has seen it stay corked with no frame recorded.
    private func isPaused(_ facts: SinkInputFacts) -> Bool {
        guard serverIsPipeWire else { return facts.isCorked }
        guard facts.isCorked else {
            pauses.forget(facts.index)
            return false
        }
        if pauses.isPaused(facts.index) { return true }
        if pauses.startLooking(facts.index, framesRecorded: streams[facts.index]?.recorder?.framesRecorded) {
            after(seconds: PauseConfirmation.lookSeconds) { [weak self] in self?.lookForPause(facts.index) }
        }
        return false
    }

    private func lookForPause(_ index: UInt32) {
        guard phase == .capturing else { return }
        requests.sinkInput(index) { [weak self] facts in
            guard let self, phase == .capturing, let captureSink else { return }
            guard let facts else { return pauses.forget(index) }  // ended: its removal is on its way
            pauses.looked(index, stillCorked: facts.isCorked, framesRecorded: streams[index]?.recorder?.framesRecorded)
            notePlaying(facts, on: captureSink.index)
        }
    }

    /// A stream playing wakes the capture at once; the last one stopping lets it rest after
    /// `restAfterSeconds` (a pause between two sounds is not worth a suspend and resume).
    private func inputsChanged() {
        guard phase == .capturing else { return }
        restGeneration += 1
        if !playingInputs.isEmpty { return wake() }
        let generation = restGeneration
        after(seconds: configuration.restAfterSeconds) { [weak self] in
            guard let self, phase == .capturing, generation == restGeneration, playingInputs.isEmpty else { return }
            rest()
        }
    }

    /// Nothing plays on our sink: nothing of ours may keep a sink awake or wake this thread.
    /// The guard is told to expect no heartbeat (it still sees the daemon die: its socket
    /// closes; and it asks when an app starts), the route checks stop, and the recordings
    /// let our sink suspend by the server's own suspend-on-idle, after which they record
    /// nothing. On PulseAudio they never keep it awake (`PA_STREAM_DONT_INHIBIT_AUTO_SUSPEND`):
    /// module-suspend-on-idle resumes a suspended sink, monitor included, as a new stream is
    /// created on it, before the stream is rendered, so the mix has its first sample as when
    /// awake (suspending it by our own hand instead, the sink resumed before its monitor when
    /// we lifted it, and a block of the stream's start, 120 frames, was missing from every
    /// recording in 2 plays of 3). On PipeWire the mix's recording is corked (pipewire-pulse
    /// 0.3.65), and resumes on the stream's first event, before WirePlumber has linked it;
    /// each app's recording is passive (`node.passive`): it never keeps the app's node
    /// running, stays linked while the sink suspends under a paused app, and has the app's
    /// first sample when it resumes, without a wake first. (A passive mix recording, never
    /// corked, cost event sounds on an idle sink their first quantum in ShortSoundTests.)
    private func rest() {
        guard phase == .capturing, !isResting else { return }
        isResting = true
        if let heartbeatTimer {
            mainloop.cancelTimer(heartbeatTimer)
            self.heartbeatTimer = nil
        }
        if let guardLink, !guardLink.rest() { return fail("the capture guard (pid \(guardLink.pid)) is gone") }
        if serverIsPipeWire { pacer?.setCorked(true) }
        consumer.captureDidRest(true)
    }

    /// Something may play: the mix's recording first, then the heartbeat and route checks.
    private func wake() {
        guard isResting, phase == .capturing else { return }
        isResting = false
        if serverIsPipeWire { pacer?.setCorked(false) }
        beat()
        startRouteChecks()
        consumer.captureDidRest(false)
        // Woken by a new stream that may never play on our sink (put on another by the server's
        // stream-restore, or by its app): rest again unless something plays here.
        if playingInputs.isEmpty { inputsChanged() }
    }

    private func after(seconds: Double, _ body: @escaping () -> Void) {
        final class Pending { let body: () -> Void; init(_ b: @escaping () -> Void) { body = b } }
        let userdata = Unmanaged.passRetained(Pending(body)).toOpaque()
        let timer = mainloop.scheduleTimer(afterSeconds: seconds, userdata: userdata) { api, timer, _, userdata in
            api!.pointee.time_free(timer)
            Unmanaged<Pending>.fromOpaque(userdata!).takeRetainedValue().body()
        }
        if timer == nil { Unmanaged<Pending>.fromOpaque(userdata).release() }
    }
}

extension CaptureSession: StreamRecorderDelegate {
    func recorderDidEnd(_ recorder: any StreamRecorder) {
        guard let index = recorder.streamIndex else {
            // The pacer ends only with the sink (a session failure comes with it) or the server.
            return
        }
        // Not inside the recorder's own callback: releasing it frees the stream.
        mainloop.runSoon { [weak self] in self?.recorderEnded(index, recorder) }
    }

    /// A recording over libpulse is known by its number once ready, which may be after its links
    /// appeared: they are looked at again.
    func recorderIsReady(_ recorder: any StreamRecorder) {
        if recorder.streamIndex != nil { checkForCrossedRecordingsSoon() }
    }

    private func recorderEnded(_ index: UInt32, _ recorder: any StreamRecorder) {
        guard phase == .capturing, var tracked = streams[index], tracked.recorder === recorder else { return }
        attachments[index]?.lastFailure = recorder.failure
        // Its input ended, moved or is being re-linked (the server says which), or the monitor
        // broke: look, and record it again if it is still ours.
        recorder.close()
        tracked.recorder = nil
        streams[index] = tracked
        lookAgain(index)
    }
}
