import CPulse
import Foundation
import SceneSoundPulse

/// Each stream's recorder (a link into SceneSound's graph node, or a recording) and, on PipeWire,
/// the routes checked: a stream moved by the user let go, a stray link to another sink undone.
extension CaptureSession {
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
        guard let graph, let captureSink else { return }
        var seen = Set<UInt32>()
        for (index, tracked) in streams where !tracked.isMoving {
            for link in graph.strayLinks(nodeSerial: UInt64(index), parkSinkSerial: UInt64(captureSink.index)) {
                seen.insert(link)
                guard strayLinksSeen.contains(link) else { continue }
                graph.destroyLink(link)
                onsets.captureDidRepair(
                    "\(tracked.identity.applicationName ?? "?") (stream \(index)) was also linked to another sink (PipeWire link \(link)), heard dry beside its capture: link undone")
            }
        }
        strayLinksSeen = seen
    }

    func startRouteChecks() {
        guard serverIsPipeWire, !routeChecksRunning else { return }
        routeChecksRunning = true
        checkRoutesEverySecond()
    }

    /// On PipeWire a link into one of SceneSound's node's input sets (`attach` has made sure one
    /// is free); elsewhere a recording of the capture sink's monitor over libpulse (nil when it
    /// could not start).
    func makeRecorder(_ index: UInt32, sinkName: String, identity: CapturedStreamIdentity) -> (any StreamRecorder)? {
        let channels = identity.channels
        // Linked into SceneSound's node: heard in the cycle it plays, from its first sample
        // (the park sink never runs: the app starts with our link). No mix to recover from.
        if let graph {
            onsets.forget(index)
            return GraphRecorder(graph: graph, streamIndex: index, channels: channels, delegate: self) { [weak self] in
                self?.after(seconds: $0, $1)
            }
        }
        // A surround stream is handed on as it is recorded: the onset recovery compares the
        // stereo mix (the sink's FL and FR), in which only a stereo or mono stream is whole.
        let deliver: (UnsafeBufferPointer<Float>) -> Void = channels.isStereo
            ? { [onsets] in onsets.captureDidReceive(streamIndex: index, interleaved: $0) }
            : { [consumer] in consumer.captureDidReceive(streamIndex: index, interleaved: $0) }
        if !channels.isStereo { onsets.forget(index) }
        return MonitorRecorder(
            context: context, streamIndex: index, monitorSourceName: sinkName + ".monitor", rateHz: configuration.rateHz,
            fragmentSeconds: recordingFragmentSeconds, streamName: "SceneSound capture of \(identity.applicationName ?? "stream \(index)")",
            channels: channels, inhibitsSuspend: serverIsPipeWire, isPassive: serverIsPipeWire, deliver: deliver, delegate: self)
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
