import CPulse
import SceneSoundPulse

/// One captured stream's recording, by whichever route the server serves best.
protocol StreamRecorder: AnyObject {
    /// nil for the pacer (MonitorRecorder).
    var streamIndex: UInt32? { get }
    /// Why it ended, as the server put it (nil while it runs).
    var failure: String? { get }
    /// Frames recorded so far (read on the capture's thread): whether a stream's audio still
    /// flows (`PauseConfirmation`).
    var framesRecorded: Int { get }
    /// After this no callback comes. Idempotent.
    func close()
}

protocol StreamRecorderDelegate: AnyObject {
    /// The recording ended: its sink input ended or moved (PulseAudio kills a stream's
    /// direct monitor when it moves), or the server refused it.
    func recorderDidEnd(_ recorder: any StreamRecorder)
}

/// Records one sink input on its own (`pa_stream_set_monitor_stream`) from the capture sink's
/// monitor, in the sink's eight channels (so the server remaps nothing), and hands the
/// stream's own channels (`CaptureChannels`) of each fragment to the consumer, interleaved. The
/// capture happens after the input's own volume and mute, so the app's slider keeps working.
final class MonitorRecorder: StreamRecorder {
    /// nil for the pacer: a recording of the whole capture sink, kept open so that the sink
    /// always renders in small steps (an idle null sink renders far ahead, up to 2 s on
    /// PulseAudio, so the first stream moved onto it arrived as one burst), and handed to
    /// `OnsetRecovery`, which finds the first milliseconds of new streams in it.
    let streamIndex: UInt32?
    /// The connection it records over.
    let context: OpaquePointer
    private let stream: OpaquePointer
    /// Where the audio goes: the stream's consumer, or the mix's handler for the pacer.
    private let deliver: (UnsafeBufferPointer<Float>) -> Void
    private let picker: ChannelPicker
    private let recordedChannels: Int
    private weak var delegate: StreamRecorderDelegate?
    private var isClosed = false
    private(set) var failure: String?
    private(set) var framesRecorded = 0
    /// Zeros handed out for a hole in the recording (the server skipped data), allocated once.
    private let silence: UnsafeMutableBufferPointer<Float>

    init?(
        context: OpaquePointer, streamIndex: UInt32?, monitorSourceName: String, rateHz: Int,
        fragmentSeconds: Double, streamName: String, channels kept: CaptureChannels, inhibitsSuspend: Bool = true,
        isPassive: Bool = false, deliver: @escaping (UnsafeBufferPointer<Float>) -> Void, delegate: StreamRecorderDelegate
    ) {
        // Stereo: FL and FR alone, not remixed (both servers then copy those two channels and
        // drop the rest); surround: the sink's eight, of which the picker keeps the stream's.
        let recordedChannels = kept.isStereo ? 2 : CaptureChannels.sinkChannelCount
        var spec = pa_sample_spec(format: PA_SAMPLE_FLOAT32LE, rate: UInt32(rateHz), channels: UInt8(recordedChannels))
        var channels = CaptureChannels.sinkChannelMap()
        if kept.isStereo { pa_channel_map_init_stereo(&channels) }
        // Passive (pipewire-pulse hands the property to the node, and WirePlumber makes its
        // link passive): the recording never keeps the app's node or our sink running, so an
        // app that pauses lets the sink suspend, and it stays linked, with the app's first
        // sample when it resumes.
        let properties = pa_proplist_new()
        defer { pa_proplist_free(properties) }
        if isPassive { pa_proplist_sets(properties, "node.passive", "true") }
        // The app's stream or nothing (pipewire-pulse hands this on too; PulseAudio ignores it):
        // pipewire-pulse makes a direct monitor a node with the stream as its target.object and
        // node.dont-reconnect, and WirePlumber 0.5, unlike 0.4, links such a node whose target
        // is not (or no longer) there to the default source instead of destroying it. A short
        // stream gone before its recording was linked then left a recording of the default
        // sink's monitor (or of our capture sink's whole mix) that never ended: with
        // PipeWire 1.4 / WirePlumber 0.5, a hundred short streams left some forty behind, the
        // daemon's heap growing by tens of MB a hundred, and an event sound over music was
        // "recorded" as the mix. With it the node is destroyed, and the recording ends.
        if streamIndex != nil { pa_proplist_sets(properties, "node.dont-fallback", "true") }
        guard let stream = pa_stream_new_with_proplist(context, streamName, &spec, &channels, properties) else { return nil }
        if let streamIndex, pa_stream_set_monitor_stream(stream, streamIndex) != 0 {
            pa_stream_unref(stream)
            return nil
        }
        self.stream = stream
        self.context = context
        self.streamIndex = streamIndex
        self.deliver = deliver
        picker = ChannelPicker(kept)
        self.recordedChannels = recordedChannels
        self.delegate = delegate
        silence = .allocate(capacity: 4096)
        silence.initialize(repeating: 0)

        let userdata = Unmanaged.passUnretained(self).toOpaque()
        pa_stream_set_state_callback(stream, { _, userdata in
            MonitorRecorder.from(userdata).stateChanged()
        }, userdata)
        pa_stream_set_read_callback(stream, { _, _, userdata in
            MonitorRecorder.from(userdata).readable()
        }, userdata)

        // A small fragment: the capture sink renders as often as its smallest requested
        // latency, and that is what the app's sound waits for before it reaches the engine.
        let bytesPerSecond = Double(rateHz * recordedChannels * MemoryLayout<Float>.size)
        var attributes = pa_buffer_attr(
            maxlength: UInt32.max, tlength: UInt32.max, prebuf: UInt32.max, minreq: UInt32.max,
            fragsize: UInt32(max(64, (fragmentSeconds * bytesPerSecond).rounded())))
        // Not inhibiting: the sink may suspend by the server's suspend-on-idle with this
        // recording open (it then records nothing), and resumes, monitor included, before a
        // new stream on it is rendered.
        let flags = pa_stream_flags_t(PA_STREAM_ADJUST_LATENCY.rawValue | PA_STREAM_DONT_MOVE.rawValue
            | (kept.isStereo ? PA_STREAM_NO_REMIX_CHANNELS.rawValue : 0)
            | (inhibitsSuspend ? 0 : PA_STREAM_DONT_INHIBIT_AUTO_SUSPEND.rawValue))
        let connected = monitorSourceName.withCString { pa_stream_connect_record(stream, $0, &attributes, flags) }
        guard connected == 0 else {
            close()
            return nil
        }
    }

    deinit {
        close()
        pa_stream_unref(stream)
        silence.deallocate()
    }

    private static func from(_ userdata: UnsafeMutableRawPointer?) -> MonitorRecorder {
        Unmanaged<MonitorRecorder>.fromOpaque(userdata!).takeUnretainedValue()
    }

    /// After this no callback comes. Idempotent.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        pa_stream_set_state_callback(stream, nil, nil)
        pa_stream_set_read_callback(stream, nil, nil)
        if PA_STREAM_IS_GOOD(pa_stream_get_state(stream)) != 0 {
            pa_stream_disconnect(stream)
        }
    }

    /// Pauses the recording (a corked record stream does not keep its source running, so the
    /// sink can suspend) or resumes it.
    func setCorked(_ corked: Bool) {
        guard !isClosed, PA_STREAM_IS_GOOD(pa_stream_get_state(stream)) != 0 else { return }
        if let operation = pa_stream_cork(stream, corked ? 1 : 0, nil, nil) { pa_operation_unref(operation) }
    }

    private func stateChanged() {
        let state = pa_stream_get_state(stream)
        if state == PA_STREAM_FAILED || state == PA_STREAM_TERMINATED {
            // A killed direct monitor (its input moved or ended) reads "Entity killed".
            failure = state == PA_STREAM_FAILED ? pulseErrorText(context: context) : "ended by the server"
            delegate?.recorderDidEnd(self)
        }
    }

    /// Drains every readable fragment.
    private func readable() {
        while !isClosed, pa_stream_readable_size(stream) > 0 {
            var data: UnsafeRawPointer?
            var byteCount = 0
            guard pa_stream_peek(stream, &data, &byteCount) == 0, byteCount > 0 else { return }
            let sampleCount = byteCount / MemoryLayout<Float>.size
            framesRecorded += sampleCount / recordedChannels
            if let data {
                let recorded = UnsafeBufferPointer(start: data.assumingMemoryBound(to: Float.self), count: sampleCount)
                if recordedChannels == 2 { deliver(recorded) } else { picker.pick(recorded, deliver: deliver) }
            } else {  // a hole: the server had nothing for this span; the consumer hears silence
                var remaining = sampleCount
                while remaining > 0 {
                    let chunk = min(remaining, silence.count / recordedChannels * recordedChannels)
                    let zeros = UnsafeBufferPointer(rebasing: silence[0 ..< chunk])
                    if recordedChannels == 2 { deliver(zeros) } else { picker.pick(zeros, deliver: deliver) }
                    remaining -= chunk
                }
            }
            pa_stream_drop(stream)
        }
    }
}
