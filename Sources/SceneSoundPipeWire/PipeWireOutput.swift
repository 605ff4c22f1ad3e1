import CPipeWireOutput
import SceneSoundPlatform
import Synchronization

/// Plays through PipeWire itself: one stream node (`Stream/Output/Audio`) asking the graph for
/// a quantum of one block (`node.latency`), rendered in the node's process callback on
/// libpipewire's data thread. Follows the default sink unless pinned; reconnects by itself when
/// PipeWire goes away, with growing delays, forever; whatever feeds `render` goes on.
public final class PipeWireOutput: @unchecked Sendable {
    public struct Configuration: Sendable {
        /// PipeWire's core socket (absolute path); nil = libpipewire's lookup.
        public var remote: String?
        /// A sink's `node.name` (or `object.serial`); nil = the default sink, followed.
        public var target: String?
        public var rateHz: Int
        /// Frames per `render` call, and the quantum asked of the graph.
        public var blockFrames: Int
        public var applicationName: String
        public var iconName: String
        public var nodeName: String
        public var description: String
        /// `media.role`: what a mixer and the session manager's policies see.
        public var mediaRole: String

        public init(remote: String? = nil, target: String? = nil, rateHz: Int = 48_000, blockFrames: Int = 256,
                    applicationName: String = "SceneSound", iconName: String = "audio-headphones",
                    nodeName: String = "scenesound", description: String = "SceneSound spatial mix",
                    mediaRole: String = "Production") {
            self.remote = remote
            self.target = target
            self.rateHz = rateHz
            self.blockFrames = blockFrames
            self.applicationName = applicationName
            self.iconName = iconName
            self.nodeName = nodeName
            self.description = description
            self.mediaRole = mediaRole
        }
    }

    /// Delivered on the output's loop thread: quick, never blocking, never stopping the output.
    public enum Event: Sendable, Equatable {
        /// The stream is linked (first connection, after a reconnect, or a new pin); the sink's
        /// name when already known, else "".
        case connected(sinkName: String)
        /// PipeWire went away or could not be reached; retries follow until `stop()`. Once per outage.
        case disconnected(reason: String)
        case reconnecting(attempt: Int)
        /// Something a retry alone will not fix (an unknown sink); retries go on. Once per outage.
        case failed(String)
    }

    public let configuration: Configuration
    private let callbacks: Callbacks
    private var handle: OpaquePointer?
    private let lifecycle = Mutex<Bool>(false)  // started

    /// What the C side calls back: the render closure (data thread) and events (loop thread).
    private final class Callbacks {
        let events: @Sendable (Event) -> Void
        var render: (UnsafeMutablePointer<Float>, _ frames: Int, _ channels: Int) -> Void = { buffer, frames, channels in
            buffer.update(repeating: 0, count: frames * channels)
        }
        init(events: @escaping @Sendable (Event) -> Void) { self.events = events }
    }

    public init(configuration: Configuration, events: @escaping @Sendable (Event) -> Void = { _ in }) {
        self.configuration = configuration
        callbacks = Callbacks(events: events)
    }

    deinit {
        if let handle { ss_pw_output_free(handle) }
    }

    /// Connects and keeps connecting; throws only for what cannot work at all (a second start,
    /// libpipewire unable to make its loop). `render` fills `blockFrames` interleaved stereo
    /// Float32 frames on PipeWire's data thread, under the real-time rules.
    public func start(render: @escaping (UnsafeMutablePointer<Float>, Int) -> Void) throws(PipeWireOutputError) {
        try start(renderChannels: { buffer, frames, _ in render(buffer, frames) })
    }

    /// As `start(render:)`, with the stream's channel count passed to `render` (2 until
    /// `useChannels` changes it): it fills `frames` interleaved frames of that many channels.
    public func start(renderChannels render: @escaping (UnsafeMutablePointer<Float>, _ frames: Int, _ channels: Int) -> Void)
        throws(PipeWireOutputError) {
        guard configuration.rateHz > 0, configuration.blockFrames > 0, configuration.blockFrames <= configuration.rateHz else {
            throw .invalidConfiguration("rate \(configuration.rateHz) Hz and block \(configuration.blockFrames) frames")
        }
        if let target = configuration.target, target.isEmpty { throw .invalidConfiguration("target is empty (use nil for the default sink)") }
        try lifecycle.withLock { started throws(PipeWireOutputError) in
            guard !started else { throw .alreadyStarted }
            callbacks.render = render
            let userdata = Unmanaged.passUnretained(callbacks).toOpaque()
            let made: OpaquePointer? = withOptionalCString(configuration.remote) { remote in
                configuration.applicationName.withCString { application in
                    configuration.iconName.withCString { icon in
                        configuration.nodeName.withCString { node in
                            configuration.description.withCString { description in
                                configuration.mediaRole.withCString { role in
                                    var config = ss_pw_output_config(
                                        remote: remote, application_name: application, icon_name: icon, node_name: node,
                                        description: description, media_role: role, rate_hz: UInt32(configuration.rateHz),
                                        block_frames: UInt32(configuration.blockFrames),
                                        retry_initial_seconds: 0.050, retry_maximum_seconds: 1.0)
                                    return ss_pw_output_new(&config, { userdata, buffer, frames, channels in
                                        let callbacks = Unmanaged<Callbacks>.fromOpaque(userdata!).takeUnretainedValue()
                                        callbacks.render(buffer!, Int(frames), Int(channels))
                                    }, { userdata, event, detail in
                                        let callbacks = Unmanaged<Callbacks>.fromOpaque(userdata!).takeUnretainedValue()
                                        let text = detail.map { String(cString: $0) } ?? ""
                                        switch Int(event) {
                                        case Int(SS_PW_OUTPUT_CONNECTED.rawValue): callbacks.events(.connected(sinkName: text))
                                        case Int(SS_PW_OUTPUT_DISCONNECTED.rawValue): callbacks.events(.disconnected(reason: text))
                                        case Int(SS_PW_OUTPUT_RECONNECTING.rawValue): callbacks.events(.reconnecting(attempt: Int(text) ?? 0))
                                        default: callbacks.events(.failed(text))
                                        }
                                    }, userdata)
                                }
                            }
                        }
                    }
                }
            }
            guard let made else { throw .unavailable("libpipewire could not make its loop and context") }
            if let target = configuration.target { target.withCString { ss_pw_output_set_target(made, $0, 0) } }
            let result = ss_pw_output_start(made)
            guard result == 0 else {
                ss_pw_output_free(made)
                throw .unavailable("cannot start the PipeWire loop thread (error \(-result))")
            }
            handle = made
            started = true
        }
    }

    /// Disconnects and joins the loop thread; `render` is not called afterwards. Idempotent;
    /// not from an event handler.
    public func stop() {
        lifecycle.withLock { started in
            guard started, let handle else { return }
            ss_pw_output_stop(handle)
            started = false
        }
    }

    /// Plays on `sinkName` and stays there (`node.dont-reconnect`), whatever becomes the
    /// default sink; nil goes back to the configured target (or to following the default). For
    /// the app capture, which makes its own sink the default. Reopens the stream when it changes.
    public func pin(toSink sinkName: String?) {
        guard let handle = lifecycle.withLock({ $0 ? handle : nil }) else { return }
        let target = sinkName ?? configuration.target
        let stays: Int32 = sinkName != nil ? 1 : 0
        withOptionalCString(target) { ss_pw_output_set_target(handle, $0, stays) }
    }

    /// Plays these loudspeakers (numbered in the WAVE / SMPTE order: 0 FL, 1 FR, 2 FC, 3 LFE,
    /// 4 RL, 5 RR, 6 SL, 7 SR), in the order `render` fills them, from now on: reopens the
    /// stream if they changed (a gap of a few milliseconds); kept across reconnections and pins.
    public func useChannels(speakerNumbers: [Int]) throws(PipeWireOutputError) {
        guard (1...Int(SS_PW_OUTPUT_MAX_CHANNELS)).contains(speakerNumbers.count),
              speakerNumbers.allSatisfy({ (0..<Int(SS_PW_OUTPUT_MAX_CHANNELS)).contains($0) }) else {
            throw .invalidConfiguration("channels \(speakerNumbers): 1 to \(SS_PW_OUTPUT_MAX_CHANNELS) speakers numbered 0 to 7")
        }
        guard let handle = lifecycle.withLock({ $0 ? handle : nil }) else { return }
        let numbers = speakerNumbers.map { UInt32($0) }
        _ = numbers.withUnsafeBufferPointer { ss_pw_output_set_channels(handle, UInt32($0.count), $0.baseAddress) }
    }

    /// Inactive: the node is no longer scheduled (`render` is not called) and the sink may
    /// suspend; active again, it is scheduled from the next cycle.
    public func setActive(_ active: Bool) {
        guard let handle = lifecycle.withLock({ $0 ? handle : nil }) else { return }
        ss_pw_output_set_active(handle, active ? 1 : 0)
    }

    /// Delay to the device plus what is queued and buffered on the way, from the last cycle
    /// (`pw_stream_get_time_n`); nil while the stream is not running.
    public var measuredLatencySeconds: Double? {
        guard let handle else { return nil }
        let seconds = ss_pw_output_latency_seconds(handle)
        return seconds >= 0 ? seconds : nil
    }
    public var underrunCount: Int { handle.map { Int(ss_pw_output_underruns($0)) } ?? 0 }
    public var reconnectCount: Int { handle.map { Int(ss_pw_output_reconnects($0)) } ?? 0 }
    public var isConnected: Bool { handle.map { ss_pw_output_is_connected($0) != 0 } ?? false }
    public var isStreaming: Bool { handle.map { ss_pw_output_is_streaming($0) != 0 } ?? false }
    /// The graph's quantum at the last cycle, in frames.
    public var quantumFrames: Int? { handle.map { Int(ss_pw_output_quantum_frames($0)) }.flatMap { $0 > 0 ? $0 : nil } }
    /// The sink the stream is linked to, as the registry shows it.
    public var sinkName: String? {
        guard let handle, lifecycle.withLock({ $0 }) else { return nil }
        var buffer = [CChar](repeating: 0, count: 256)
        ss_pw_output_sink_name(handle, &buffer, UInt32(buffer.count))
        let name = String(cString: buffer)
        return name.isEmpty ? nil : name
    }
}

public enum PipeWireOutputError: Error, Equatable, CustomStringConvertible {
    case invalidConfiguration(String)
    case alreadyStarted
    case unavailable(String)

    public var description: String {
        switch self {
        case .invalidConfiguration(let why): "invalid PipeWire output configuration: \(why)"
        case .alreadyStarted: "the PipeWire output is already started; call stop() first"
        case .unavailable(let why): "PipeWire output: \(why)"
        }
    }
}

func withOptionalCString<R>(_ text: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
    guard let text else { return body(nil) }
    return text.withCString { body($0) }
}
