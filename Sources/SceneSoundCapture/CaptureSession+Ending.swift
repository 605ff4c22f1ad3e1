import CPulse
import Foundation
import SceneSoundPulse

/// How a session ends: the clean stop with its sweep, a failure, and the local shutdown both
/// come to.
extension CaptureSession {
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
        CaptureSweep.run(on: context, mainloop: mainloop.api, isTarget: { $0[CaptureSinkProperties.sessionKey] == token },
                         realSink: defaultSink?.name) { [weak self] outcome in
            self?.shutDownLocally()
            done(outcome)
        }
    }

    func fail(_ reason: String) {
        guard phase != .finished else { return }
        phase = .finished
        releaseAll()
        shutDownLocally()
        delegate?.sessionDidFail(self, reason: reason)
    }

    func releaseAll() {
        for index in streams.keys.sorted() { release(index) }
        onsets.endUnheardNow()
    }

    /// Silences every callback, disconnects, lets the guard go. Idempotent.
    func shutDownLocally() {
        phase = .finished
        if let heartbeatTimer {
            mainloop.cancelTimer(heartbeatTimer)
            self.heartbeatTimer = nil
        }
        for tracked in streams.values { tracked.recorder?.close() }
        streams.removeAll()
        onsets.endUnheardNow()
        pacer?.close()
        pacer = nil
        // After the sweep has moved its apps on (a failure: WirePlumber moves them to the default).
        graph?.watchDefaultSink(nil)
        if madeParkSink { graph?.destroyParkSink() }
        madeParkSink = false
        pa_context_set_state_callback(context, nil, nil)
        pa_context_set_subscribe_callback(context, nil, nil)
        pulseDisconnect(context)
        if let guardSocketEvent {
            mainloop.api.pointee.io_free(guardSocketEvent)
            self.guardSocketEvent = nil
        }
        // Closed after the server has been told everything: the guard then finds nothing left.
        guardLink?.close()
        guardLink = nil
    }
}
