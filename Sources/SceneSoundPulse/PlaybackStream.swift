import CPulse
import SceneSoundPlatform

/// What a playback stream tells its session.
protocol PlaybackStreamDelegate: AnyObject {
    func playbackStreamDidStart(sinkName: String)
    /// The stream failed; `errorCode` is the context's PA_ERR_* code.
    func playbackStreamDidFail(errorCode: Int32)
}

/// One pa_stream playing the render's output. Its callbacks run on the mainloop thread;
/// the write callback is the real-time path: it renders into libpulse's own buffer
/// (pa_stream_begin_write) and neither allocates nor locks.
final class PlaybackStream {
    private let stream: OpaquePointer
    private let renderer: BlockRenderer
    private let statistics: OutputStatistics
    private let events: @Sendable (PulseOutput.Event) -> Void
    private weak var delegate: PlaybackStreamDelegate?
    private var isClosed = false
    private let api: UnsafeMutablePointer<pa_mainloop_api>
    /// Asks for timing info while the stream plays (see `restartTimingUpdates`); made once,
    /// re-armed in place, so ticking allocates nothing of ours.
    private var timingTimer: OpaquePointer?
    private var timingIntervalSeconds = PlaybackStream.firstTimingIntervalSeconds
    /// The buffer asked of the server: the configured target, grown after underflows.
    private var buffer = AdaptiveBuffer(configuredSeconds: 0.020)
    private var bufferFormat = (rateHz: 48_000, blockFrames: 256)

    /// nil when libpulse refuses the stream (the context's errno says why).
    init?(
        context: OpaquePointer,
        api: UnsafeMutablePointer<pa_mainloop_api>,
        configuration: PulseOutput.Configuration,
        renderer: BlockRenderer,
        statistics: OutputStatistics,
        events: @escaping @Sendable (PulseOutput.Event) -> Void,
        delegate: PlaybackStreamDelegate
    ) {
        var spec = PlaybackBufferAttributes.sampleSpec(rateHz: configuration.rateHz,
                                                       channelCount: configuration.channelPositions.count)
        var channels = PlaybackBufferAttributes.channelMap(configuration.channelPositions)
        renderer.useChannels(configuration.channelPositions.count)
        guard let stream = pa_stream_new(context, configuration.streamName, &spec, &channels) else { return nil }
        self.stream = stream
        self.api = api
        self.renderer = renderer
        self.statistics = statistics
        self.events = events
        self.delegate = delegate

        let userdata = Unmanaged.passUnretained(self).toOpaque()
        pa_stream_set_state_callback(stream, { stream, userdata in
            PlaybackStream.from(userdata).stateChanged()
        }, userdata)
        pa_stream_set_write_callback(stream, { _, byteCount, userdata in
            PlaybackStream.from(userdata).writeRequested(byteCount: byteCount)
        }, userdata)
        pa_stream_set_underflow_callback(stream, { _, userdata in
            PlaybackStream.from(userdata).underflowed()
        }, userdata)
        // Disarmed until the stream is ready (a nil time).
        timingTimer = api.pointee.time_new(api, nil, { _, _, _, userdata in
            PlaybackStream.from(userdata).timingTick()
        }, userdata)
    }

    deinit {
        close()
        pa_stream_unref(stream)
    }

    private static func from(_ userdata: UnsafeMutableRawPointer?) -> PlaybackStream {
        Unmanaged<PlaybackStream>.fromOpaque(userdata!).takeUnretainedValue()
    }

    /// Starts playback on `sinkName` (nil = default sink). false = refused at once.
    func connect(
        sinkName: String?, staysOnSink: Bool = false, corked: Bool = false, rateHz: Int, blockFrames: Int,
        targetLatencySeconds: Double
    ) -> Bool {
        self.buffer = AdaptiveBuffer(configuredSeconds: targetLatencySeconds)
        bufferFormat = (rateHz, blockFrames)
        statistics.recordTargetLatency(seconds: targetLatencySeconds)
        var buffer = PlaybackBufferAttributes.bufferAttributes(
            rateHz: rateHz, blockFrames: blockFrames, targetLatencySeconds: targetLatencySeconds,
            bytesPerFrame: renderer.bytesPerFrame)
        var flags = staysOnSink
            ? pa_stream_flags_t(PlaybackBufferAttributes.streamFlags.rawValue | PA_STREAM_DONT_MOVE.rawValue)
            : PlaybackBufferAttributes.streamFlags
        if corked { flags = pa_stream_flags_t(flags.rawValue | PA_STREAM_START_CORKED.rawValue) }
        isCorked = corked
        let result: Int32
        if let sinkName {
            result = sinkName.withCString { pa_stream_connect_playback(stream, $0, &buffer, flags, nil, nil) }
        } else {
            result = pa_stream_connect_playback(stream, nil, &buffer, flags, nil, nil)
        }
        return result == 0
    }

    /// While corked, what the server still asks for (its buffer topped up) is silence: the
    /// engine is not run for a stream that does not play.
    private var isCorked = false

    /// Corked, the stream does not run: the server asks for no audio and the sink may suspend
    /// (module-suspend-on-idle counts corked streams as idle). Uncorked, it plays on from what
    /// the server holds (the silence before the cork, up to the target latency). Not flushed
    /// there: with pa_stream_flush before the uncork, a click sent after rest came out 4-7 ms
    /// later but with most of its start lost in some runs (peaks 0.025-0.19 of 0.657).
    func setCorked(_ corked: Bool) {
        guard !isClosed else { return }
        isCorked = corked
        if let operation = pa_stream_cork(stream, corked ? 1 : 0, nil, nil) { pa_operation_unref(operation) }
        restartTimingUpdates()
    }

    /// Silences every callback and disconnects. After this the stream never calls back.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        pa_stream_set_state_callback(stream, nil, nil)
        pa_stream_set_write_callback(stream, nil, nil)
        pa_stream_set_underflow_callback(stream, nil, nil)
        if let timingTimer {
            api.pointee.time_free(timingTimer)
            self.timingTimer = nil
        }
        if let timingOperation {
            pa_operation_cancel(timingOperation)
            pa_operation_unref(timingOperation)
            self.timingOperation = nil
        }
        if PA_STREAM_IS_GOOD(pa_stream_get_state(stream)) != 0 {
            pa_stream_disconnect(stream)
        }
        statistics.recordLatency(seconds: nil)
        statistics.recordTargetLatency(seconds: nil)
    }

    private func stateChanged() {
        let state = pa_stream_get_state(stream)
        if state == PA_STREAM_READY {
            let sinkName = pa_stream_get_device_name(stream).map { String(cString: $0) } ?? "unknown sink"
            restartTimingUpdates()
            delegate?.playbackStreamDidStart(sinkName: sinkName)
        } else if state == PA_STREAM_FAILED || state == PA_STREAM_TERMINATED {
            let context = pa_stream_get_context(stream)!
            delegate?.playbackStreamDidFail(errorCode: pa_context_errno(context))
        }
    }

    /// The real-time path. Pulse wants `byteCount` more bytes: render whole frames into
    /// buffers from libpulse's own memory pool (pa_stream_begin_write), so nothing here
    /// allocates, and no lock is taken besides the mainloop's, which we already hold.
    private func writeRequested(byteCount: Int) {
        let bytesPerFrame = renderer.bytesPerFrame
        if !isCorked { recordLatency(ofWriteFrames: byteCount / bytesPerFrame) }
        var remainingBytes = byteCount - byteCount % bytesPerFrame
        while remainingBytes > 0 {
            var buffer: UnsafeMutableRawPointer?
            var bufferBytes = remainingBytes
            guard pa_stream_begin_write(stream, &buffer, &bufferBytes) == 0, let buffer else { return }
            let frames = min(bufferBytes, remainingBytes) / bytesPerFrame
            guard frames > 0 else {
                pa_stream_cancel_write(stream)
                return
            }
            if isCorked {
                buffer.initializeMemory(as: UInt8.self, repeating: 0, count: frames * bytesPerFrame)
            } else {
                renderer.fill(buffer, frameCount: frames)
            }
            guard pa_stream_write(stream, buffer, frames * bytesPerFrame, nil, 0, PA_SEEK_RELATIVE) == 0 else { return }
            remainingBytes -= frames * bytesPerFrame
        }
        // Fresh timing info while playing, at most every `writeTimingIntervalSeconds`: on the
        // timer alone, 1.5 s apart, the interpolated latency ran out (status read 0.0 ms); one
        // request per write (190 a second) loaded the server enough for 32 captured apps to
        // run dry for 70-100 ms (CaptureScaleTests).
        if !isCorked { requestTimingUpdateAfterWrite() }
    }

    private func underflowed() {
        let now = MonotonicClock.nowNanoseconds()
        statistics.recordUnderrun(atMonotonicNanoseconds: now)
        events(.underrun)
        let before = buffer.seconds
        guard let seconds = buffer.afterUnderflow(nowNanoseconds: now) else { return }
        askForBuffer(seconds)
        renderer.bufferGrew(Int(((seconds - before) * Double(bufferFormat.rateHz)).rounded()))
    }

    /// A new tlength for the stream (the server asks for the difference at once when it grew).
    private func askForBuffer(_ seconds: Double) {
        guard !isClosed else { return }
        var attributes = PlaybackBufferAttributes.bufferAttributes(
            rateHz: bufferFormat.rateHz, blockFrames: bufferFormat.blockFrames, targetLatencySeconds: seconds,
            bytesPerFrame: renderer.bytesPerFrame)
        if let operation = pa_stream_set_buffer_attr(stream, &attributes, nil, nil) { pa_operation_unref(operation) }
        statistics.recordTargetLatency(seconds: seconds)
    }

    // MARK: Timing info

    /// libpulse's own cadence for AUTO_TIMING_UPDATE: 10 ms after a start, doubling to 1.5 s.
    static let firstTimingIntervalSeconds = 0.01
    static let longestTimingIntervalSeconds = 1.5

    /// Timing info is asked for here while the stream plays, and not at all while it is
    /// corked. With PA_STREAM_AUTO_TIMING_UPDATE libpulse asks every 1.5 s, corked or not,
    /// unless the server reports the sink suspended, which pipewire-pulse (0.3.65) does not:
    /// the resting output woke about twice a second there.
    private func restartTimingUpdates() {
        guard let timingTimer, !isClosed else { return }
        guard !isCorked, pa_stream_get_state(stream) == PA_STREAM_READY else {
            api.pointee.time_restart(timingTimer, nil)
            return
        }
        timingIntervalSeconds = Self.firstTimingIntervalSeconds
        arm(timingTimer)
    }

    private func arm(_ timer: OpaquePointer) {
        var due = timeval()
        pa_gettimeofday(&due)
        pa_timeval_add(&due, pa_usec_t(timingIntervalSeconds * 1_000_000))
        api.pointee.time_restart(timer, &due)
    }

    private func timingTick() {
        guard let timingTimer, !isClosed else { return }
        guard !isCorked else { return api.pointee.time_restart(timingTimer, nil) }
        requestTimingUpdate()
        if let seconds = buffer.afterQuiet(nowNanoseconds: MonotonicClock.nowNanoseconds()) { askForBuffer(seconds) }
        timingIntervalSeconds = min(Self.longestTimingIntervalSeconds, timingIntervalSeconds * 2)
        arm(timingTimer)
    }

    static let writeTimingIntervalSeconds = 0.1
    private var lastTimingRequestNanoseconds = 0

    private func requestTimingUpdateAfterWrite() {
        let nanoseconds = MonotonicClock.nowNanoseconds()
        guard nanoseconds - lastTimingRequestNanoseconds >= Int(Self.writeTimingIntervalSeconds * 1e9) else { return }
        lastTimingRequestNanoseconds = nanoseconds
        requestTimingUpdate()
    }

    /// The timing request on its way, one at a time; cancelled by `close` (its callback
    /// points at this stream).
    private var timingOperation: OpaquePointer?

    private func requestTimingUpdate() {
        guard timingOperation == nil, !isClosed else { return }
        timingOperation = pa_stream_update_timing_info(stream, { _, _, userdata in
            let playback = PlaybackStream.from(userdata)
            if let operation = playback.timingOperation {
                pa_operation_unref(operation)
                playback.timingOperation = nil
            }
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// The output's delay, averaged over a write's frames: the stream's latency as the write
    /// begins (interpolated from the last timing update: arithmetic and the clock, no
    /// allocation) is the delay of its first frame; its last waits `frames` less. A client's
    /// write meets that average: it waits for the next request (half of one, as the server
    /// asks a write's worth at a time) and then plays after the write's first frame. Read
    /// once a write has joined the queue (as a timing update after it sees it), the delay was
    /// its last frame's, a write high: 4 ms above what a client's write measured at the sink;
    /// the first frame's alone, 1–6 ms below (EndToEndLatencyTests).
    private func recordLatency(ofWriteFrames frames: Int) {
        var microseconds: pa_usec_t = 0
        var isNegative: Int32 = 0
        guard pa_stream_get_latency(stream, &microseconds, &isNegative) == 0 else { return }
        let firstFrameSeconds = isNegative != 0 ? 0 : Double(microseconds) / 1_000_000
        statistics.recordLatency(seconds: firstFrameSeconds + Double(frames) / Double(2 * bufferFormat.rateHz))
    }
}

/// The playback buffer asked of PulseAudio. PulseAudio's main thread (nice −11, not
/// real-time) relays every write request between the sink and the stream; on a busy machine
/// it is late now and then by more than the 20 ms target, and the sink then plays silence
/// where our mix should be (two busy loops on a 2-core machine: 27–38 underflows in 30 s). So
/// an underflow doubles the buffer, at most once a second, up to 160 ms, and after a minute
/// without one it halves again, down to the configured target: the latency stays low on an
/// idle machine and grows only while the machine is too busy for it. (`pacat` itself, four
/// busy loops, 20 s: 48 underflows at 20 ms, 2–3 at 40 and 80 ms, none at 160 ms; audio late
/// by up to 185 ms is still acceptable beside a picture, ITU-R BT.1359.)
struct AdaptiveBuffer {
    let configuredSeconds: Double
    private(set) var seconds: Double
    static let maximumSeconds = 0.160
    static let growthIntervalNanoseconds = 1_000_000_000
    static let quietNanoseconds = 60_000_000_000
    private var lastUnderflowNanoseconds: Int?
    private var lastChangeNanoseconds = 0

    init(configuredSeconds: Double) {
        self.configuredSeconds = configuredSeconds
        seconds = configuredSeconds
    }

    /// The new buffer after an underflow, or nil to keep it.
    mutating func afterUnderflow(nowNanoseconds now: Int) -> Double? {
        lastUnderflowNanoseconds = now
        guard seconds < max(Self.maximumSeconds, configuredSeconds),
              now - lastChangeNanoseconds >= Self.growthIntervalNanoseconds else { return nil }
        lastChangeNanoseconds = now
        seconds = min(max(Self.maximumSeconds, configuredSeconds), seconds * 2)
        return seconds
    }

    /// The new buffer after a quiet minute, or nil to keep it.
    mutating func afterQuiet(nowNanoseconds now: Int) -> Double? {
        guard seconds > configuredSeconds, let last = lastUnderflowNanoseconds,
              now - max(last, lastChangeNanoseconds) >= Self.quietNanoseconds else { return nil }
        lastChangeNanoseconds = now
        seconds = max(configuredSeconds, seconds / 2)
        return seconds
    }
}
