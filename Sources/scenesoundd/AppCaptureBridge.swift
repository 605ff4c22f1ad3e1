import Logging
import Synchronization
import SceneSoundCapture
import SceneSoundCaptureGraph
import SceneSoundEngine
import SceneSoundServer

/// Hands what the app capture takes to the server's captured streams: identities on start
/// and change, audio into each stream's feed. Runs on the capture's thread, and for audio on
/// PipeWire on libpipewire's data thread: the table of feeds is locked for a lookup, each
/// feed written by one thread at a time.
final class AppCaptureBridge: AppCaptureConsumer, @unchecked Sendable {
    private let streams: CapturedAppStreams
    private let logger: Logger
    /// Pins the daemon's own output to the real sink (nil: unpinned), which the capture sink
    /// stands in front of as the default.
    private let pinOutput: (String?) -> Void
    /// Locked for a lookup: on PipeWire the audio comes on libpipewire's data thread. A mono
    /// app's stereo recording is folded back to its one channel on the way in.
    private let feeds = Mutex<[UInt32: (feed: CapturedAppStreams.Feed, mono: StereoToMono?)]>([:])

    /// On PipeWire: the apps linked into a node of the graph get their feeds from here, and it
    /// hands them their audio itself, lock-free on the node's data thread (the lookup below
    /// serves the apps recorded over libpulse, on PulseAudio).
    private let graph: GraphCapture?

    init(streams: CapturedAppStreams, logger: Logger, graph: GraphCapture? = nil, pinOutput: @escaping (String?) -> Void) {
        self.streams = streams
        self.logger = logger
        self.graph = graph
        self.pinOutput = pinOutput
    }

    func captureDidChooseRealSink(_ sinkName: String) {
        logger.info("app capture: new streams start on the capture sink; the real sink is \(sinkName)")
        pinOutput(sinkName)
    }

    static func app(_ stream: CapturedStreamIdentity) -> CapturedAppStreams.App {
        CapturedAppStreams.App(
            key: UInt64(stream.streamIndex), applicationName: stream.applicationName, binary: stream.binary,
            processID: stream.processID, windowID: stream.windowID, mediaRole: stream.mediaRole, eventID: stream.eventID,
            layout: layout(of: stream), recordingStepSeconds: stream.recordingStepSeconds)
    }

    /// The stream's channels as the engine places them; a map the engine does not know keeps
    /// the count (the standard layout of that many), so the frames are still counted right.
    static func layout(of stream: CapturedStreamIdentity) -> ChannelLayout {
        if stream.isMono { return .mono }
        if let layout = try? ChannelLayout.parse(stream.channels.channelNames) { return layout }
        return ChannelLayout.standard(channelCount: stream.channels.channelCount) ?? .stereo
    }

    /// Streams were taken since the capture last rested: their memory is freed by then.
    private let tookStreamsSinceRest = Atomic<Bool>(false)

    func captureDidRest(_ isResting: Bool) {
        guard isResting else { return logger.info("app capture: awake") }
        // Once per rest that follows captured streams, on the capture's thread; a rest after a
        // wake that took nothing (a stream left alone, the guard asking) trims nothing.
        guard tookStreamsSinceRest.exchange(false, ordering: .relaxed) else {
            return logger.info("app capture: nothing plays on the capture sink: resting")
        }
        let trim = HeapTrim.giveBack()
        logger.info("app capture: nothing plays on the capture sink: resting; free heap given back: own memory \(trim.beforeKilobytes) → \(trim.afterKilobytes) kB in \((trim.seconds * 10_000).rounded() / 10) ms")
    }

    func captureDidStart(_ stream: CapturedStreamIdentity) {
        let app = Self.app(stream)
        let window = stream.windowID.map { " window 0x\(String($0, radix: 16))" } ?? ""
        logger.info("capturing \(stream.applicationName ?? "?") (\(stream.binary ?? "?"), pid \(stream.processID.map(String.init) ?? "?")\(window)) as \(app.kind.rawValue)\(stream.eventID.map { " \($0)" } ?? ""), \(app.layout.channelCount) channels \(app.layout)")
        tookStreamsSinceRest.store(true, ordering: .relaxed)
        let feed = streams.begin(app)
        let mono = stream.isMono ? StereoToMono() : nil
        feeds.withLock { $0[stream.streamIndex] = (feed, mono) }
        graph?.feedDidStart(streamIndex: stream.streamIndex, feed: feed, isMono: stream.isMono)
    }

    func captureDidUpdate(_ stream: CapturedStreamIdentity) {
        streams.update(Self.app(stream))
    }

    func captureDidReceive(streamIndex: UInt32, interleaved samples: UnsafeBufferPointer<Float>) {
        guard let entry = feeds.withLock({ $0[streamIndex] }) else { return }
        if let mono = entry.mono {
            mono.fold(samples) { entry.feed.write(interleaved: $0) }
        } else {
            entry.feed.write(interleaved: samples)
        }
    }

    func captureDidEnd(streamIndex: UInt32) {
        graph?.feedDidEnd(streamIndex: streamIndex)
        guard feeds.withLock({ $0.removeValue(forKey: streamIndex) }) != nil else { return }
        streams.end(key: UInt64(streamIndex))
    }

    func captureDidLeave(_ stream: CapturedStreamIdentity, reason: String) {
        logger.warning("not capturing \(stream.applicationName ?? "?") (\(stream.binary ?? "?"), pid \(stream.processID.map(String.init) ?? "?"), stream \(stream.streamIndex)): \(reason)")
    }

    func captureDidRepair(_ message: String) {
        logger.warning("app capture: \(message)")
    }

    func captureStateDidChange(_ state: AppCapture.State) {
        switch state {
        case .connecting:
            logger.debug("app capture: connecting")
            streams.setCaptureState("connecting")
        case .capturing(let sink):
            logger.info("app capture: taking other apps' streams (through \(sink))")
            streams.setCaptureState("capturing")
        case .interrupted(let reason):
            logger.warning("app capture: \(reason); starting over")
            streams.setCaptureState("interrupted: \(reason)")
        case .stopped:
            logger.info("app capture: stopped, every app back on its sink")
            streams.setCaptureState("stopped")
            pinOutput(nil)
        }
    }
}

/// A mono app's recording (its channel in both of a stereo pair) back to one channel, through a
/// buffer allocated once: it runs on libpipewire's real-time data thread too.
final class StereoToMono: @unchecked Sendable {
    private let scratch = UnsafeMutableBufferPointer<Float>.allocate(capacity: 1024)

    deinit { scratch.deallocate() }

    func fold(_ stereo: UnsafeBufferPointer<Float>, deliver: (UnsafeBufferPointer<Float>) -> Void) {
        let frames = stereo.count / 2
        var done = 0
        while done < frames {
            let part = min(scratch.count, frames - done)
            for frame in 0 ..< part { scratch[frame] = 0.5 * (stereo[2 * (done + frame)] + stereo[2 * (done + frame) + 1]) }
            deliver(UnsafeBufferPointer(rebasing: scratch[0 ..< part]))
            done += part
        }
    }
}

/// The graph's node writes a linked app's audio straight into its feed (`GraphCapture`).
extension CapturedAppStreams.Feed: CapturedAudioWriter {}
