import Logging
import SceneSoundCapture
import SceneSoundServer

/// Hands what the app capture takes to the server's captured streams: identities on start
/// and change, audio into each stream's feed. Runs on the capture's thread; the feeds are
/// only ever touched there.
final class AppCaptureBridge: AppCaptureConsumer, @unchecked Sendable {
    private let streams: CapturedAppStreams
    private let logger: Logger
    /// Pins the daemon's own output to the real sink (nil: unpinned), which the capture sink
    /// stands in front of as the default.
    private let pinOutput: (String?) -> Void
    private var feeds: [UInt32: CapturedAppStreams.Feed] = [:]

    init(streams: CapturedAppStreams, logger: Logger, pinOutput: @escaping (String?) -> Void) {
        self.streams = streams
        self.logger = logger
        self.pinOutput = pinOutput
    }

    func captureDidChooseRealSink(_ sinkName: String) {
        logger.info("app capture: new streams start on the capture sink; the real sink is \(sinkName)")
        pinOutput(sinkName)
    }

    static func app(_ stream: CapturedStreamIdentity) -> CapturedAppStreams.App {
        CapturedAppStreams.App(
            key: UInt64(stream.streamIndex), applicationName: stream.applicationName, binary: stream.binary,
            processID: stream.processID, windowID: stream.windowID, mediaRole: stream.mediaRole, eventID: stream.eventID)
    }

    func captureDidStart(_ stream: CapturedStreamIdentity) {
        let app = Self.app(stream)
        let window = stream.windowID.map { " window 0x\(String($0, radix: 16))" } ?? ""
        logger.info("capturing \(stream.applicationName ?? "?") (\(stream.binary ?? "?"), pid \(stream.processID.map(String.init) ?? "?")\(window)) as \(app.kind.rawValue)\(stream.eventID.map { " \($0)" } ?? "")")
        feeds[stream.streamIndex] = streams.begin(app)
    }

    func captureDidUpdate(_ stream: CapturedStreamIdentity) {
        streams.update(Self.app(stream))
    }

    func captureDidReceive(streamIndex: UInt32, interleavedStereo samples: UnsafeBufferPointer<Float>) {
        feeds[streamIndex]?.write(interleavedStereo: samples)
    }

    func captureDidEnd(streamIndex: UInt32) {
        guard feeds.removeValue(forKey: streamIndex) != nil else { return }
        streams.end(key: UInt64(streamIndex))
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
