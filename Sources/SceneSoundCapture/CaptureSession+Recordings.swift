import CPulse
import Foundation
import SceneSoundPulse

/// Each stream's recorder (a link into SceneSound's graph node, or a recording) and, on PipeWire,
/// the links around them put right.
extension CaptureSession {
    /// Without PipeWire's own socket the streams are recorded over libpulse, as on PulseAudio.
    func connectPipeWire() {
        guard let socket = PipeWireConnection.socketPath(
            pulseServerAddress: configuration.serverAddress, environment: ProcessInfo.processInfo.environment) else { return }
        pipeWire = PipeWireConnection(socketPath: socket, applicationName: configuration.applicationName, mainloop: mainloop)
        pipeWire?.onLinkAppeared = { [weak self] in self?.checkForCrossedRecordingsSoon() }
    }

    /// Once per burst (a stream's links come together), outside libpipewire's dispatch.
    func checkForCrossedRecordingsSoon() {
        guard pipeWire != nil, !crossedRecordingsCheckIsDue else { return }
        crossedRecordingsCheckIsDue = true
        mainloop.runSoon { [weak self] in
            self?.crossedRecordingsCheckIsDue = false
            self?.redoCrossedRecordings()
        }
    }

    /// Connected now, so that they are ready when the first streams are: a connection made
    /// for a stream would only start its recording later, losing more of its start.
    func connectRecordingContexts() {
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
    func idleRecordingContext() -> OpaquePointer? {
        recordingContexts.first { context in
            pa_context_get_state(context) == PA_CONTEXT_READY
                && !streams.values.contains { ($0.recorder as? MonitorRecorder)?.context == context }
        }
    }

    /// Once the recording connections are ready (or failed), so that the streams already
    /// playing are recorded through them: recorded another way, they could not be found in
    /// the mix, and a stream starting over them would lose its first milliseconds.
    func whenRecordingContextsSettle(_ body: @escaping () -> Void) {
        whenRecordingContextsSettled = body
        recordingContextStateChanged()
    }

    var recordingContextsAreConnecting: Bool {
        recordingContexts.contains { context in
            let state = pa_context_get_state(context)
            return PA_CONTEXT_IS_GOOD(state) != 0 && state != PA_CONTEXT_READY
        }
    }

    func recordingContextStateChanged() {
        guard let body = whenRecordingContextsSettled, !recordingContextsAreConnecting else { return }
        whenRecordingContextsSettled = nil
        body()
    }

    /// pipewire-pulse (0.3.65) sends no event when a stream is moved to another sink, and the
    /// recording, linked to the app's node, goes on after it: a stream the user moves by hand
    /// is found here, let go, and from then on plays only where it was put.
    /// Only while awake: at rest nothing plays on our sink, so nothing can be moved off it.
    func checkRoutesEverySecond() {
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
    func undoStrayLinks() {
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
    func redoCrossedRecordings() {
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

    func startRouteChecks() {
        guard pipeWire != nil || graph != nil, !routeChecksRunning else { return }
        routeChecksRunning = true
        checkRoutesEverySecond()
    }

    func makeRecorder(_ index: UInt32, sinkName: String, identity: CapturedStreamIdentity) -> (any StreamRecorder)? {
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
        if let graph {
            onsets.forget(index)
            if graph.hasFreeSet {
                return GraphRecorder(graph: graph, streamIndex: index, channels: channels, delegate: self) { [weak self] in
                    self?.after(seconds: $0, $1)
                }
            }
            // Every set taken: recorded from the sink's monitor, straight to the consumer (no
            // mix is recorded on this path to recover its start from), and not passive, since
            // the sink is (a passive recording too still started the app in the test beside
            // one app linked into the node; alone, not tried).
            return MonitorRecorder(
                context: context, streamIndex: index, monitorSourceName: sinkName + ".monitor", rateHz: configuration.rateHz,
                fragmentSeconds: recordingFragmentSeconds, streamName: name, channels: channels,
                deliver: { [consumer] in consumer.captureDidReceive(streamIndex: index, interleaved: $0) }, delegate: self)
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

    func recorderEnded(_ index: UInt32, _ recorder: any StreamRecorder) {
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
