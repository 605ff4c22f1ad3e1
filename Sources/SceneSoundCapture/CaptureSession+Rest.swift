import CPulse
import Foundation

/// The heartbeat to the guard, and resting while nothing plays on the capture sink.
extension CaptureSession {
    /// Beats from this thread on purpose: if the thread that captures is stuck, the guard
    /// must notice.
    func scheduleHeartbeat() {
        heartbeatTimer = mainloop.scheduleTimer(
            afterSeconds: configuration.heartbeatSeconds, userdata: Unmanaged.passUnretained(self).toOpaque()
        ) { api, timer, _, userdata in
            let session = CaptureSession.from(userdata)
            api!.pointee.time_free(timer)
            session.heartbeatTimer = nil
            session.beat()
        }
    }

    func beat() {
        guard phase != .finished, !isResting, let guardLink else { return }
        guard guardLink.beat() else { return fail("the capture guard (pid \(guardLink.pid)) is gone") }
        scheduleHeartbeat()
    }

    /// The guard asks (`p`) whether a resting daemon is alive when an app stream changes on
    /// the server; the answer comes from this thread, as the heartbeat does. Its end of the
    /// socket closing means it is gone, seen at once rather than at the next beat.
    func watchGuardSocket() {
        guard let guardLink else { return }
        guardSocketEvent = mainloop.api.pointee.io_new(
            mainloop.api, guardLink.descriptor, PA_IO_EVENT_INPUT, { _, _, _, _, userdata in
                CaptureSession.from(userdata).guardSpoke()
            }, Unmanaged.passUnretained(self).toOpaque())
    }

    func guardSpoke() {
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

    /// Keeps `playingInputs` up to date from a stream's facts.
    func notePlaying(_ facts: SinkInputFacts, on captureSinkIndex: UInt32) {
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
    func isPaused(_ facts: SinkInputFacts) -> Bool {
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

    func lookForPause(_ index: UInt32) {
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
    func inputsChanged() {
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
    func rest() {
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
    func wake() {
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
}
