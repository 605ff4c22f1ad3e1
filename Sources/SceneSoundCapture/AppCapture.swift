import CPulse
import Foundation
import SceneSoundPlatform
import SceneSoundPulse

/// Takes over other clients' playback streams on the default sink of a PulseAudio server (or
/// PipeWire's pulse server): each stream is moved to a sink of ours, so it is no longer heard
/// directly, and recorded on its own for the consumer, which plays it from its window — on
/// PipeWire not recorded but linked into SceneSound's node (`CaptureGraph`).
///
/// Crash-safe by construction: a guard process undoes everything when this process dies or
/// hangs, and every start sweeps what an earlier process left. Reconnects when the server
/// restarts.
public final class AppCapture: @unchecked Sendable {
    public struct Configuration: Sendable {
        /// A libpulse server string; nil = libpulse's default lookup.
        public var serverAddress: String?
        public var rateHz: Int = 48_000
        /// The record streams' fragment: how often captured audio arrives.
        public var fragmentSeconds: Double = 0.005
        /// The same on pipewire-pulse, for every recording (its graph runs at the smallest
        /// quantum asked). pipewire-pulse 0.3 fills its apps' buffers on its main thread, one
        /// cycle ahead: at 5.3 ms a busy machine made it miss whole cycles of every app at
        /// once (nothing delivered, so nothing to record: up to 1.5 s a stream in 15 s); at
        /// 0.020 (21 ms) it mostly kept up, but captured audio came 15 ms later and 100 short
        /// streams took longer to play out (DaemonCaptureTests, red twice in three runs), so
        /// the default stays (docs/MEASUREMENTS.md, "Captured streams on PipeWire under load").
        public var pipeWireFragmentSeconds: Double = 0.005
        /// `application.process.binary` (or `application.name`) values left alone.
        public var excludedBinaries: Set<String> = []
        /// The `scenesound-capture-guard` executable; nil runs without a guard (tests of the
        /// sweep at start, which is what covers a crash then).
        public var guardExecutable: String?
        /// No heartbeat for this long and the guard undoes the capture.
        public var hangSeconds: Double = 2.0
        public var heartbeatSeconds: Double = 0.5
        /// With no stream playing on our sink for this long the capture rests: the mix's
        /// recording paused (so the sinks can suspend), no heartbeat, no route checks.
        public var restAfterSeconds: Double = 3.0
        public var applicationName = "SceneSound app capture"
        /// On PipeWire, SceneSound's own node of the graph (its output): apps are linked into it
        /// and reach the engine in the same cycle, the capture sink only parks them. nil (or on
        /// PulseAudio): each app is recorded from the capture sink.
        public var graph: (any CaptureGraph)?

        public init(serverAddress: String? = nil, excludedBinaries: Set<String> = [], guardExecutable: String? = nil) {
            self.serverAddress = serverAddress
            self.excludedBinaries = excludedBinaries
            self.guardExecutable = guardExecutable
        }

        /// The guard of the daemon at `executable`, if it is installed: next to it (a build
        /// tree), else in `../libexec/scenesound/` (an installed prefix, the packages' place).
        public static func guardExecutable(forDaemonAt executable: String) -> String? {
            let directory = URL(fileURLWithPath: executable).deletingLastPathComponent()
            return [directory, directory.deletingLastPathComponent().appendingPathComponent("libexec/scenesound")]
                .map { $0.appendingPathComponent("scenesound-capture-guard").path }
                .first { FileManager.default.isExecutableFile(atPath: $0) }
        }
    }

    public enum State: Equatable, Sendable {
        case connecting
        case capturing(sinkName: String)
        /// Lost the server (or the sink, or the guard); retrying.
        case interrupted(reason: String)
        case stopped
    }

    private let configuration: Configuration
    private let consumer: AppCaptureConsumer
    private var mainloop: PulseMainloop?
    private var session: CaptureSession?
    private var retryTimer: OpaquePointer?
    private var backoff = ReconnectBackoff(initialSeconds: 0.1, maximumSeconds: 2.0)
    private var sessionCount = 0
    private var isStopped = false
    private var excludedBinaries: Set<String>

    public init(configuration: Configuration, consumer: AppCaptureConsumer) {
        self.configuration = configuration
        self.consumer = consumer
        excludedBinaries = configuration.excludedBinaries
    }

    deinit { _ = stop() }

    public func start() throws {
        guard mainloop == nil else { return }
        let mainloop = try PulseMainloop(threadName: "scenesound-capture")
        self.mainloop = mainloop
        try mainloop.start()
        mainloop.withLock { startSession() }
    }

    /// Undoes the capture on the server (every app back on its sink, our sink unloaded) and
    /// stops. Returns false if the server did not confirm within `timeoutSeconds` (the guard
    /// then does it). Idempotent.
    @discardableResult
    public func stop(timeoutSeconds: Double = 3.0) -> Bool {
        guard let mainloop, !isStopped else { return true }
        let finished = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var undone = false
        mainloop.withLock {
            isStopped = true
            if let retryTimer {
                mainloop.cancelTimer(retryTimer)
                self.retryTimer = nil
            }
            guard let session else {
                finished.signal()
                return
            }
            session.stop { outcome in
                undone = outcome.map { $0.failures.isEmpty } ?? true
                _ = finished.signal()
            }
        }
        let answered = finished.wait(timeout: .now() + timeoutSeconds) == .success
        mainloop.stopAndJoin()
        session = nil
        consumer.captureStateDidChange(.stopped)
        return answered && undone
    }

    /// Changes which apps are left alone; streams of newly excluded apps go back to the real sink.
    public func setExcludedBinaries(_ binaries: Set<String>) {
        guard let mainloop else { return excludedBinaries = binaries }
        mainloop.withLock {
            excludedBinaries = binaries
            session?.setExcludedBinaries(binaries)
        }
    }

    /// The streams being captured right now.
    public var capturedStreams: [CapturedStreamIdentity] {
        mainloop?.withLock { session?.capturedStreams ?? [] } ?? []
    }

    private func startSession() {
        guard !isStopped, let mainloop else { return }
        sessionCount += 1
        let token = "\(getpid())-\(sessionCount)-\(String(UInt32.random(in: 0 ... .max), radix: 16))"
        var sessionConfiguration = configuration
        sessionConfiguration.excludedBinaries = excludedBinaries
        guard let session = CaptureSession(
            mainloop: mainloop, configuration: sessionConfiguration, token: token, consumer: consumer, delegate: self)
        else {
            return scheduleRetry(reason: "cannot create a PulseAudio context")
        }
        self.session = session
        consumer.captureStateDidChange(.connecting)
        session.connect()
    }

    private func scheduleRetry(reason: String) {
        guard !isStopped, retryTimer == nil, let mainloop else { return }
        consumer.captureStateDidChange(.interrupted(reason: reason))
        retryTimer = mainloop.scheduleTimer(
            afterSeconds: backoff.nextDelaySeconds(), userdata: Unmanaged.passUnretained(self).toOpaque()
        ) { api, timer, _, userdata in
            let capture = Unmanaged<AppCapture>.fromOpaque(userdata!).takeUnretainedValue()
            api!.pointee.time_free(timer)
            capture.retryTimer = nil
            capture.startSession()
        }
    }
}

extension AppCapture: CaptureSessionDelegate {
    func sessionDidStartCapturing(_ session: CaptureSession, sinkName: String) {
        guard session === self.session else { return }
        backoff.reset()
        consumer.captureStateDidChange(.capturing(sinkName: sinkName))
    }

    func sessionDidFail(_ session: CaptureSession, reason: String) {
        guard session === self.session else { return }
        // Dropped on the next iteration, not inside its own context's callback.
        mainloop?.runSoon { [session] in _ = session }
        self.session = nil
        scheduleRetry(reason: reason)
    }
}
