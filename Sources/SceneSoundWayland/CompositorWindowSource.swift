import Synchronization
import SceneSoundPlatform
import SceneSoundWindows

/// The thread every compositor backend runs on: connect (with backoff), query, then re-query
/// on each event and, only while something plays, on a timer (compositors send no event for
/// some changes: sway's and Hyprland's floating moves, relayouts); publish what changed.
/// The compositor going away re-publishes the last snapshot marked disconnected, so sounds
/// keep their places until it is back.
public final class CompositorWindowSource: WindowSource {
    public struct Configuration: Sendable {
        /// While something plays, the compositor is re-read at least this often; nil: never (a
        /// compositor that sends an event for every change).
        public var pollWhilePlayingSeconds: Double?
        /// Coalescing: snapshots at most this often.
        public var minimumPublishIntervalSeconds: Double
        public var reconnectInitialDelaySeconds: Double
        public var reconnectMaximumDelaySeconds: Double
        /// The compositor's Wayland display (`WAYLAND_DISPLAY`), read once per connection for the
        /// outputs' millimetres (`WaylandOutputs`); nil: 96 dpi.
        public var waylandDisplay: String?

        public init(pollWhilePlayingSeconds: Double? = 0.05, minimumPublishIntervalSeconds: Double = 0.010,
                    reconnectInitialDelaySeconds: Double = 0.1, reconnectMaximumDelaySeconds: Double = 2.0) {
            self.pollWhilePlayingSeconds = pollWhilePlayingSeconds
            self.minimumPublishIntervalSeconds = minimumPublishIntervalSeconds
            self.reconnectInitialDelaySeconds = reconnectInitialDelaySeconds
            self.reconnectMaximumDelaySeconds = reconnectMaximumDelaySeconds
        }
    }

    public let sourceDescription: String
    private let configuration: Configuration
    private let connect: @Sendable () throws(CompositorError) -> CompositorSession
    private let log: @Sendable (String) -> Void
    private let publisher: SnapshotPublisher
    private let wakePipe = WakePipe()
    private let connected = Atomic<Bool>(false)
    private let stopping = Atomic<Bool>(false)
    private let playing = Atomic<Bool>(false)
    private let attentionRequests = Mutex<[(UInt32, Bool)]>([])
    private let thread = Mutex<PlatformThread?>(nil)
    /// Thread-confined, in a Mutex only to satisfy Sendable; never contended.
    private let state = Mutex<LoopState>(LoopState())

    private struct LoopState {
        var sequence: UInt64 = 0
        var lastSnapshot: WindowSnapshot?
        var lastLoggedProblem: String?
    }

    init(description: String, configuration: Configuration, log: @escaping @Sendable (String) -> Void,
         onSnapshot: (@Sendable (WindowSnapshot) -> Void)?,
         connect: @escaping @Sendable () throws(CompositorError) -> CompositorSession) {
        sourceDescription = description
        self.configuration = configuration
        self.log = log
        self.connect = connect
        publisher = SnapshotPublisher(onSnapshot: onSnapshot)
    }

    deinit { stop() }

    public func start() {
        thread.withLock { thread in
            guard thread == nil else { return }
            do {
                thread = try PlatformThread { [self] in run() }
            } catch {
                preconditionFailure("the window source: \(error)")
            }
        }
    }

    public func stop() {
        thread.withLock { thread in
            guard let handle = thread else { return }
            stopping.store(true, ordering: .releasing)
            wakePipe.wake()
            handle.join()
            thread = nil
        }
    }

    public var latestSnapshot: WindowSnapshot? { publisher.snapshot }
    public var isConnected: Bool { connected.load(ordering: .acquiring) }

    public func setDemandsAttention(windowID: UInt32, _ demands: Bool) {
        attentionRequests.withLock { $0.append((windowID, demands)) }
        wakePipe.wake()
    }

    public func setSoundsPlaying(_ playing: Bool) {
        self.playing.store(playing, ordering: .releasing)
        wakePipe.wake()
    }

    private var isStopping: Bool { stopping.load(ordering: .acquiring) }

    private func run() {
        var backoff = ReconnectBackoff(initialSeconds: configuration.reconnectInitialDelaySeconds,
                                       maximumSeconds: configuration.reconnectMaximumDelaySeconds)
        while !isStopping {
            do {
                let session = try connect()
                backoff.reset()
                connected.store(true, ordering: .releasing)
                report(nil)
                let reason = runSession(session)
                session.close()
                connected.store(false, ordering: .releasing)
                if isStopping { break }
                publishDisconnected()
                report("\(sourceDescription): \(reason); reconnecting")
            } catch {
                report("\(sourceDescription): \(error); retrying")
            }
            if isStopping { break }
            attentionRequests.withLock { $0.removeAll() }  // the windows they name may not come back
            wakePipe.wait(also: nil, timeoutNanoseconds: UInt64(backoff.nextDelaySeconds() * 1e9))
        }
    }

    /// Returns why the session ended (unless stopping).
    private func runSession(_ session: CompositorSession) -> CompositorError {
        let display = configuration.waylandDisplay
        var outputs = WaylandOutputsCache { display.flatMap { WaylandOutputs.read(display: $0) } }
        var schedule = PublishSchedule(minimumIntervalNanoseconds: UInt64(configuration.minimumPublishIntervalSeconds * 1e9))
        let pollNanoseconds = UInt64((configuration.pollWhilePlayingSeconds ?? 0) * 1e9)
        var dirty = true
        var lastQuery: UInt64 = 0
        var newestEvent: UInt64 = 0
        while !isStopping {
            do {
                if try session.readEvents() {
                    dirty = true
                    newestEvent = UInt64(MonotonicClock.nowNanoseconds())
                }
                for (windowID, demands) in attentionRequests.withLock({ pending in defer { pending.removeAll() }; return pending }) {
                    try session.setDemandsAttention(windowID: windowID, demands)
                }
            } catch {
                return error
            }
            var now = UInt64(MonotonicClock.nowNanoseconds())
            let isPlaying = configuration.pollWhilePlayingSeconds != nil && playing.load(ordering: .acquiring)
            if isPlaying && now >= lastQuery + pollNanoseconds { dirty = true }
            var timeout: UInt64? = isPlaying ? lastQuery + pollNanoseconds - min(now, lastQuery + pollNanoseconds) : nil
            if dirty {
                let wait = schedule.nanosecondsUntilAllowed(now: now)
                if wait == 0 {
                    do {
                        var compositorState = try session.query()
                        outputs.applyPhysicalSizes(to: &compositorState.monitors)
                        report(nil)
                        now = UInt64(MonotonicClock.nowNanoseconds())
                        if publishIfChanged(compositorState, newestEvent: newestEvent, now: now) { schedule.didPublish(now: now) }
                    } catch .disconnected(let reason) {
                        return .disconnected(reason)
                    } catch .unavailable(let reason) {
                        if !reason.isEmpty { report("\(sourceDescription): \(reason)") }
                        publishDisconnected()
                    } catch {
                        report("\(sourceDescription): \(error); keeping the last windows")
                    }
                    dirty = false
                    lastQuery = UInt64(MonotonicClock.nowNanoseconds())
                    continue
                }
                timeout = min(timeout ?? wait, wait)
            }
            wakePipe.wait(also: session.eventDescriptor, timeoutNanoseconds: timeout)
        }
        return .disconnected("stopped")
    }

    /// Logs a problem once (not again while it repeats); nil marks things well again.
    private func report(_ problem: String?) {
        let shouldLog = state.withLock { state in
            defer { state.lastLoggedProblem = problem }
            return problem != nil && problem != state.lastLoggedProblem
        }
        if shouldLog, let problem { log(problem) }
    }

    private func publishIfChanged(_ compositor: CompositorState, newestEvent: UInt64, now: UInt64) -> Bool {
        state.withLock { state in
            if let last = state.lastSnapshot, last.isDisplayConnected, last.windows == compositor.windows,
               last.monitors == compositor.monitors, last.activeWindowID == compositor.activeWindowID {
                return false
            }
            state.sequence += 1
            let snapshot = WindowSnapshot(
                sequence: state.sequence, publishedMonotonicNanoseconds: now, newestEventMonotonicNanoseconds: newestEvent,
                isDisplayConnected: true, windows: compositor.windows, monitors: compositor.monitors,
                activeWindowID: compositor.activeWindowID, currentDesktop: nil, hasEWMHWindowManager: true)
            state.lastSnapshot = snapshot
            publisher.publish(snapshot)
            return true
        }
    }

    private func publishDisconnected() {
        state.withLock { state in
            guard var snapshot = state.lastSnapshot, snapshot.isDisplayConnected else { return }
            state.sequence += 1
            snapshot.sequence = state.sequence
            snapshot.publishedMonotonicNanoseconds = UInt64(MonotonicClock.nowNanoseconds())
            snapshot.isDisplayConnected = false
            state.lastSnapshot = snapshot
            publisher.publish(snapshot)
        }
    }
}
