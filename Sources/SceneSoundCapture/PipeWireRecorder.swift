import CPipeWireCapture
import CPulse
import Foundation
import SceneSoundPulse

/// A connection to PipeWire itself, next to the pulse connection of a session whose server is
/// pipewire-pulse, run on the same mainloop thread: libpipewire's loop is dispatched whenever
/// its fd is readable, so every callback comes on the capture's thread, as over libpulse.
final class PipeWireConnection {
    let handle: OpaquePointer
    private let api: UnsafeMutablePointer<pa_mainloop_api>
    private var ioEvent: OpaquePointer?

    /// nil if PipeWire's socket does not answer.
    init?(socketPath: String, applicationName: String, mainloop: PulseMainloop) {
        guard let handle = ss_pw_connection_new(socketPath, applicationName) else { return nil }
        self.handle = handle
        api = mainloop.api
        ioEvent = api.pointee.io_new(api, ss_pw_connection_fd(handle), PA_IO_EVENT_INPUT, { _, _, _, _, userdata in
            Unmanaged<PipeWireConnection>.fromOpaque(userdata!).takeUnretainedValue().dispatch()
        }, Unmanaged.passUnretained(self).toOpaque())
        // Every property is set by now, so returning nil runs deinit, whose close() frees the
        // connection: freeing it here too freed it twice.
        if ioEvent == nil { return nil }
        ss_pw_connection_set_links_changed(handle, { userdata in
            Unmanaged<PipeWireConnection>.fromOpaque(userdata!).takeUnretainedValue().onLinkAppeared?()
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Called on the capture's thread, from within a dispatch, when a link appeared in the graph.
    var onLinkAppeared: (() -> Void)?

    deinit { close() }

    private var isClosed = false

    /// Its recorders must be closed first. Idempotent.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        if let ioEvent { api.pointee.io_free(ioEvent) }
        ioEvent = nil
        ss_pw_connection_free(handle)
    }

    /// Links that take the node of a sink input (`appSerial`, its index on pipewire-pulse) to
    /// an audio sink other than `sinkSerial`, as PipeWire's registry last told.
    func strayLinks(appSerial: UInt32, sinkSerial: UInt32) -> [UInt32] {
        var ids = [UInt32](repeating: 0, count: 16)
        let count = ss_pw_connection_stray_links(handle, appSerial, sinkSerial, &ids, Int32(ids.count))
        return Array(ids.prefix(Int(count)))
    }

    /// How many links from the node of `outputSerial` to that of `inputSerial` join two
    /// different channel positions (left to right).
    func crossedLinks(from outputSerial: UInt32, to inputSerial: UInt32) -> Int {
        Int(ss_pw_connection_crossed_links(handle, outputSerial, inputSerial))
    }

    /// Asks PipeWire to destroy a link.
    func destroyLink(_ id: UInt32) { ss_pw_connection_destroy_object(handle, id) }

    private func dispatch() {
        // A broken connection stays quiet: the pulse connection to the same server fails too,
        // and the session starts over.
        if ss_pw_connection_dispatch(handle) < 0, let ioEvent {
            api.pointee.io_free(ioEvent)
            self.ioEvent = nil
        }
    }

    /// PipeWire's own socket, when the pulse server is pipewire-pulse in the usual place: both
    /// live in the server's runtime directory (`DIR/pulse/native` beside `DIR/pipewire-0`).
    /// nil when the pulse server is elsewhere (the recordings then go over libpulse).
    static func socketPath(pulseServerAddress: String?, environment: [String: String]) -> String? {
        let address = pulseServerAddress ?? environment["PULSE_SERVER"]
            ?? environment["XDG_RUNTIME_DIR"].map { "unix:\($0)/pulse/native" }
        guard let address, address.hasPrefix("unix:"), address.hasSuffix("/pulse/native") else { return nil }
        let directory = URL(fileURLWithPath: String(address.dropFirst("unix:".count)))
            .deletingLastPathComponent().deletingLastPathComponent()
        let socket = directory.appendingPathComponent("pipewire-0").path
        return FileManager.default.fileExists(atPath: socket) ? socket : nil
    }
}

/// Records one sink input (a node to PipeWire) on its own over PipeWire's protocol, linked to
/// the app's node itself; for pipewire-pulse servers. There, direct-monitor recordings over
/// libpulse starve each other: pipewire-pulse 0.3 sends a record stream's data only when
/// nothing else waits to be sent to its client, so of many such streams on one connection
/// only the first ready one is served each cycle and the others run dry for seconds, then
/// arrive in bursts. One connection per stream would run into the server's 64 clients.
final class PipeWireRecorder: StreamRecorder {
    let streamIndex: UInt32?
    /// Where the audio goes (on libpipewire's data thread).
    private let deliver: (UnsafeBufferPointer<Float>) -> Void
    private let picker: ChannelPicker
    /// FL and FR alone (not remixed) for a stereo or mono stream, else the sink's eight.
    private let recordedChannels: Int
    private weak var delegate: StreamRecorderDelegate?
    private var capture: OpaquePointer?
    private(set) var failure: String?

    /// `latencyFrames`: the quantum asked of the graph, which is how often audio arrives.
    /// A stereo or mono stream is recorded as FL and FR, not remixed; a surround one in the
    /// capture sink's eight channels, the layout the app's node plays into it (so PipeWire
    /// remaps nothing), of which `channels` are handed on.
    init?(connection: PipeWireConnection, streamIndex: UInt32, rateHz: Int, latencyFrames: Int, streamName: String,
          channels: CaptureChannels, deliver: @escaping (UnsafeBufferPointer<Float>) -> Void, delegate: StreamRecorderDelegate) {
        self.streamIndex = streamIndex
        self.deliver = deliver
        picker = ChannelPicker(channels)
        recordedChannels = channels.isStereo ? 2 : CaptureChannels.sinkChannelCount
        self.delegate = delegate
        // pipewire-pulse's sink-input index is the node's object.serial, which target.object names.
        capture = ss_pw_capture_new(
            connection.handle, streamName, streamIndex, UInt32(rateHz), UInt32(latencyFrames), UInt32(recordedChannels),
            { userdata, samples, frames in
                let recorder = Unmanaged<PipeWireRecorder>.fromOpaque(userdata!).takeUnretainedValue()
                let recorded = UnsafeBufferPointer(start: samples, count: Int(frames) * recorder.recordedChannels)
                if recorder.recordedChannels == 2 { recorder.deliver(recorded) } else { recorder.picker.pick(recorded, deliver: recorder.deliver) }
            },
            { userdata in
                let recorder = Unmanaged<PipeWireRecorder>.fromOpaque(userdata!).takeUnretainedValue()
                recorder.failure = "its PipeWire link ended"
                recorder.delegate?.recorderDidEnd(recorder)
            },
            Unmanaged.passUnretained(self).toOpaque())
        if capture == nil { return nil }
    }

    deinit { close() }

    /// Counted on libpipewire's data thread, read here atomically.
    var framesRecorded: Int { capture.map { Int(ss_pw_capture_frames($0)) } ?? 0 }

    func nodeSerial(on pipeWire: PipeWireConnection) -> UInt32? {
        guard let capture else { return nil }
        let serial = ss_pw_connection_node_serial(pipeWire.handle, ss_pw_capture_node_id(capture))
        return serial == UInt32.max ? nil : serial
    }

    func close() {
        guard let capture else { return }
        self.capture = nil
        ss_pw_capture_free(capture)
    }
}
