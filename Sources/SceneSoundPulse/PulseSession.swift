import CPulse

/// What a session tells the supervisor. Each session reports at most one failure.
protocol PulseSessionDelegate: AnyObject {
    func sessionDidStartPlaying(_ session: PulseSession, sinkName: String)
    func sessionDidFail(_ session: PulseSession, failure: PulseSession.Failure)
}

/// One attempt at playing through a PulseAudio server: a context, and once it is ready, the
/// playback stream. When the server goes away the whole session is thrown away and the
/// supervisor starts a new one. Runs on the mainloop thread (or under its lock).
final class PulseSession {
    enum Failure: Equatable {
        /// Connection refused, server killed, stream killed: worth retrying.
        case connectionLost(reason: String)
        /// The configured sink does not exist; `availableSinks` lists those that do.
        case sinkNotFound(sinkName: String, availableSinks: [String])
    }

    private let context: OpaquePointer
    private let api: UnsafeMutablePointer<pa_mainloop_api>
    private let configuration: PulseOutput.Configuration
    private let renderer: BlockRenderer
    private let statistics: OutputStatistics
    private let events: @Sendable (PulseOutput.Event) -> Void
    private weak var delegate: PulseSessionDelegate?
    private var stream: PlaybackStream?
    private var isFinished = false
    /// Sink names collected while answering a "sink not found", and the query collecting them
    /// (cancelled by `close`, so that its callback cannot outlive the session).
    private var availableSinks: [String] = []
    private var sinkListQuery: OpaquePointer?

    init?(
        api: UnsafeMutablePointer<pa_mainloop_api>,
        configuration: PulseOutput.Configuration,
        renderer: BlockRenderer,
        statistics: OutputStatistics,
        events: @escaping @Sendable (PulseOutput.Event) -> Void,
        delegate: PulseSessionDelegate
    ) {
        guard let context = pa_context_new(api, configuration.applicationName) else { return nil }
        self.context = context
        self.api = api
        self.configuration = configuration
        self.renderer = renderer
        self.statistics = statistics
        self.events = events
        self.delegate = delegate
        pa_context_set_state_callback(context, { _, userdata in
            PulseSession.from(userdata).contextStateChanged()
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit {
        close()
        pa_context_unref(context)
    }

    private static func from(_ userdata: UnsafeMutableRawPointer?) -> PulseSession {
        Unmanaged<PulseSession>.fromOpaque(userdata!).takeUnretainedValue()
    }

    /// Corked (see `PlaybackStream.setCorked`); a stream opened later starts so.
    private(set) var isCorked = false
    func setCorked(_ corked: Bool) {
        isCorked = corked
        stream?.setCorked(corked)
    }

    /// Starts connecting. A failure, now or later, arrives through the delegate.
    func connect() {
        if pulseConnect(context, serverAddress: configuration.serverAddress) < 0 { fail(.connectionLost(reason: pulseErrorText(context: context))) }
    }

    /// Silences all callbacks and disconnects. After this the session never calls back.
    func close() {
        isFinished = true
        if let sinkListQuery {
            pa_operation_cancel(sinkListQuery)
            pa_operation_unref(sinkListQuery)
            self.sinkListQuery = nil
        }
        stream?.close()
        stream = nil
        pa_context_set_state_callback(context, nil, nil)
        pulseDisconnect(context)
    }

    private func fail(_ failure: Failure) {
        guard !isFinished else { return }
        isFinished = true
        delegate?.sessionDidFail(self, failure: failure)
    }

    private func contextStateChanged() {
        let state = pa_context_get_state(context)
        if state == PA_CONTEXT_READY {
            openStream()
        } else if state == PA_CONTEXT_FAILED || state == PA_CONTEXT_TERMINATED {
            fail(.connectionLost(reason: pulseErrorText(context: context)))
        }
    }

    private func openStream() {
        guard let stream = PlaybackStream(
            context: context, api: api, configuration: configuration, renderer: renderer,
            statistics: statistics, events: events, delegate: self)
        else {
            return fail(.connectionLost(reason: "cannot create a stream: \(pulseErrorText(context: context))"))
        }
        self.stream = stream
        let connected = stream.connect(
            sinkName: configuration.sinkName, staysOnSink: configuration.staysOnSink, corked: isCorked, rateHz: configuration.rateHz,
            blockFrames: configuration.blockFrames, targetLatencySeconds: configuration.targetLatencySeconds)
        if !connected { playbackStreamDidFail(errorCode: pa_context_errno(context)) }
    }

    /// Asks the server for its sinks, to say which ones exist; reports when the list is complete.
    private func reportSinkNotFound() {
        availableSinks = []
        sinkListQuery = pa_context_get_sink_info_list(context, { _, info, _, userdata in
            let session = PulseSession.from(userdata)
            if let info, let name = info.pointee.name {
                session.availableSinks.append(String(cString: name))
            } else {  // end of list, or the query failed: report what we have
                session.sinkListDidEnd()
            }
        }, Unmanaged.passUnretained(self).toOpaque())
        if sinkListQuery == nil { sinkListDidEnd() }
    }

    private func sinkListDidEnd() {
        if let sinkListQuery {
            pa_operation_unref(sinkListQuery)
            self.sinkListQuery = nil
        }
        fail(.sinkNotFound(sinkName: configuration.sinkName ?? "", availableSinks: availableSinks))
    }
}

extension PulseSession: PlaybackStreamDelegate {
    func playbackStreamDidStart(sinkName: String) {
        guard !isFinished else { return }
        delegate?.sessionDidStartPlaying(self, sinkName: sinkName)
    }

    func playbackStreamDidFail(errorCode: Int32) {
        guard !isFinished else { return }
        stream?.close()
        if errorCode == Int32(PA_ERR_NOENTITY.rawValue), configuration.sinkName != nil,
           pa_context_get_state(context) == PA_CONTEXT_READY {
            reportSinkNotFound()
        } else {
            fail(.connectionLost(reason: "playback stream failed: \(pulseErrorText(errorCode))"))
        }
    }
}
