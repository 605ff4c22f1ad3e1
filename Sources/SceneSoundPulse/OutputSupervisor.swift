import CPulse
import SceneSoundPlatform

/// Keeps a session playing from `begin()` until `shutDown()`: when a session fails it reports
/// the loss once, then starts fresh sessions with growing delays, forever. The renderer is
/// shared by every session, so whatever feeds it goes on across servers.
///
/// Confined to the mainloop thread: every method runs in a libpulse callback or under the
/// mainloop lock.
final class OutputSupervisor: @unchecked Sendable {
    private let mainloop: PulseMainloop
    private let configured: PulseOutput.Configuration
    /// The configuration sessions start with: the configured one, or pinned to a sink.
    private var configuration: PulseOutput.Configuration
    private let renderer: BlockRenderer
    private let statistics: OutputStatistics
    private let events: @Sendable (PulseOutput.Event) -> Void

    private var session: PulseSession?
    private var retryTimer: OpaquePointer?
    private var backoff = ReconnectBackoff(initialSeconds: 0.050, maximumSeconds: 1.0)
    private var isShutDown = false

    /// A stream is playing right now.
    private var isPlaying = false
    /// A stream was playing and went away; the next start is a reconnection.
    private var lostPlayback = false
    /// Retries since the last time a stream played (or since `begin`).
    private var attemptsSinceLoss = 0
    /// Each outage is reported once, not once per failed retry.
    private var outageReported = false

    init(
        mainloop: PulseMainloop,
        configuration: PulseOutput.Configuration,
        renderer: BlockRenderer,
        statistics: OutputStatistics,
        events: @escaping @Sendable (PulseOutput.Event) -> Void
    ) {
        self.mainloop = mainloop
        configured = configuration
        self.configuration = configuration
        self.renderer = renderer
        self.statistics = statistics
        self.events = events
    }

    func begin() {
        startSession()
    }

    /// Corked: the stream stops running (see `PulseOutput.setCorked`); kept for later sessions.
    private var isCorked = false
    func setCorked(_ corked: Bool) {
        guard corked != isCorked else { return }
        isCorked = corked
        session?.setCorked(corked)
    }

    /// Starts over on the sink (see `PulseOutput.pin(toSink:)`), at once if it changed.
    func pin(toSink sinkName: String?) {
        var pinned = configured
        pinned.channelPositions = configuration.channelPositions
        if let sinkName {
            pinned.sinkName = sinkName
            pinned.staysOnSink = true
        }
        guard !isShutDown, pinned.sinkName != configuration.sinkName || pinned.staysOnSink != configuration.staysOnSink else { return }
        configuration = pinned
        restart()
    }

    /// Starts over with these channels (see `PulseOutput.useChannels`), at once if they changed.
    func useChannels(_ positions: [String]) {
        guard !isShutDown, positions != configuration.channelPositions else { return }
        configuration.channelPositions = positions
        restart()
    }

    /// A new session at once: not a loss (no event, no reconnection counted).
    private func restart() {
        session?.close()
        session = nil
        isPlaying = false
        if let retryTimer {
            mainloop.cancelTimer(retryTimer)
            self.retryTimer = nil
        }
        backoff.reset()
        startSession()
    }

    /// From now on, ignore what sessions report and start no retry; `shutDown` tears down.
    func stopReacting() {
        isShutDown = true
    }

    /// Idempotent. Afterwards no callback, timer or event fires any more. Must not run inside
    /// a callback of the current session (see `PulseMainloop.runSoon`).
    func shutDown() {
        isShutDown = true
        if let retryTimer {
            mainloop.cancelTimer(retryTimer)
            self.retryTimer = nil
        }
        session?.close()
        session = nil
        isPlaying = false
    }

    private func startSession() {
        guard !isShutDown else { return }
        guard let session = PulseSession(
            api: mainloop.api, configuration: configuration, renderer: renderer,
            statistics: statistics, events: events, delegate: self)
        else {
            report(.connectionLost(reason: "cannot create a PulseAudio context"))
            return scheduleRetry()
        }
        self.session = session
        session.setCorked(isCorked)
        session.connect()  // a failure may come back right here, through the delegate
    }

    private func scheduleRetry() {
        guard !isShutDown, retryTimer == nil else { return }
        let delaySeconds = backoff.nextDelaySeconds()
        retryTimer = mainloop.scheduleTimer(
            afterSeconds: delaySeconds, userdata: Unmanaged.passUnretained(self).toOpaque()
        ) { api, timer, _, userdata in
            let supervisor = Unmanaged<OutputSupervisor>.fromOpaque(userdata!).takeUnretainedValue()
            api!.pointee.time_free(timer)  // one-shot: freeing it here is what libpulse expects
            supervisor.retryTimer = nil
            supervisor.retry()
        }
        if retryTimer == nil {
            events(.failed("cannot schedule a reconnection to PulseAudio; the output stays silent"))
        }
    }

    private func retry() {
        guard !isShutDown else { return }
        attemptsSinceLoss += 1
        events(.reconnecting(attempt: attemptsSinceLoss))
        startSession()
    }

    private func report(_ failure: PulseSession.Failure) {
        guard !outageReported else { return }
        outageReported = true
        switch failure {
        case .connectionLost(let reason):
            events(.disconnected(reason: reason))
        case .sinkNotFound(let sinkName, let availableSinks):
            let available = availableSinks.isEmpty ? "none" : availableSinks.joined(separator: ", ")
            events(.failed("PulseAudio sink \"\(sinkName)\" not found; available sinks: \(available)"))
        }
    }
}

extension OutputSupervisor: PulseSessionDelegate {
    func sessionDidStartPlaying(_ session: PulseSession, sinkName: String) {
        guard session === self.session, !isShutDown else { return }
        if lostPlayback { statistics.recordReconnect() }
        isPlaying = true
        lostPlayback = false
        outageReported = false
        attemptsSinceLoss = 0
        backoff.reset()
        events(.connected(sinkName: sinkName))
    }

    func sessionDidFail(_ session: PulseSession, failure: PulseSession.Failure) {
        guard session === self.session, !isShutDown else { return }
        session.close()
        self.session = nil
        if isPlaying { lostPlayback = true }
        isPlaying = false
        report(failure)
        scheduleRetry()
    }
}
