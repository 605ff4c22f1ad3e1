import CPulse
import Foundation
import SceneSoundPulse

// Setting up a session: once connected, sweep what earlier sessions left, start the guard, learn
// whether the server is PipeWire's, load and find the capture sink, then start capturing.
extension CaptureSession {
    func contextStateChanged() {
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

    func prepare() {
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
        CaptureSweep.run(on: context, mainloop: mainloop.api, isTarget: { properties in
            CaptureSinkProperties.isLeftover(properties, processIsAlive: processIsAlive)
                || (properties[CaptureSinkProperties.ownerPIDKey] == String(ownPID)
                    && properties[CaptureSinkProperties.sessionKey] != token)
        }) { [weak self] _ in
            self?.startGuard()
        }
    }

    func startGuard() {
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
                pipeWireVersion = CaptureSinkProperties.pipeWireVersion(serverName: serverName)
            }
            requests.defaultSinkName { [weak self] name in self?.loadCaptureSink(previousDefault: name) }
        }
    }

    func loadCaptureSink(previousDefault: String?, waitsLeft: Int = 100) {
        guard phase == .preparing else { return }
        // On PipeWire the apps go into SceneSound's node, which may still be connecting (the
        // daemon starting, or the server restarted): waited for, up to 2 s, so that the apps
        // already playing are taken into it rather than left on the real sink for want of a set.
        if let graph, !graph.isConnected, waitsLeft > 0 {
            return after(seconds: 0.02) { [weak self] in self?.loadCaptureSink(previousDefault: previousDefault, waitsLeft: waitsLeft - 1) }
        }
        let marks = CaptureSinkProperties.marks(session: token, ownerPID: getpid(), previousDefaultSink: previousDefault)
        if let graph, graph.makeParkSink(named: CaptureSinkProperties.sinkName, properties: marks) {
            madeParkSink = true
            return findCaptureSink(attemptsLeft: 50)
        }
        let arguments = CaptureSinkProperties.nullSinkArguments(
            session: token, ownerPID: getpid(), previousDefaultSink: previousDefault, rateHz: configuration.rateHz,
            isPassive: graph != nil,
            forcedQuantumFrames: CaptureSinkProperties.passiveSinkHoldsApps(pipeWireVersion: pipeWireVersion) ? nil : graph?.quantumFrames)
        requests.loadModule("module-null-sink", arguments: arguments) { [weak self] module in
            guard let self, phase == .preparing else { return }
            guard module != nil else { return fail("cannot load module-null-sink: \(pulseErrorText(context: context))") }
            findCaptureSink(attemptsLeft: 50)
        }
    }

    /// PipeWire's pulse server may announce the sink a moment after the module loaded.
    func findCaptureSink(attemptsLeft: Int) {
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
            refreshDefaultSink { [weak self] in
                guard let self, phase == .preparing else { return }
                phase = .capturing
                watchGraphDefaultSink()
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
