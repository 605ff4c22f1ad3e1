import SceneSoundWindows
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import SceneSoundPlatform

/// Follows every top-level window of an X display on its own thread and its own XCB
/// connection, and publishes `WindowSnapshot`s: through `onSnapshot` (called on the tracker
/// thread; hand the value off, do not block there) and through `latestSnapshot` (any thread).
///
/// Survives the X server going away: the last snapshot is re-published with
/// `isDisplayConnected == false` and kept; the tracker reconnects with backoff and rescans.
public final class WindowTracker: WindowSource {
    public struct Configuration: Sendable {
        /// An X display name such as ":0"; nil means $DISPLAY.
        public var displayName: String?
        /// Coalescing: snapshots are at most this often, and the newest state is never held
        /// back longer than this.
        public var minimumPublishIntervalSeconds: Double
        /// RandR announces no monitor definitions, so the monitor list is re-read this often.
        public var monitorPollIntervalSeconds: Double
        public var reconnectInitialDelaySeconds: Double
        public var reconnectMaximumDelaySeconds: Double

        public init(displayName: String? = nil, minimumPublishIntervalSeconds: Double = 0.010,
                    monitorPollIntervalSeconds: Double = 1.0, reconnectInitialDelaySeconds: Double = 0.1,
                    reconnectMaximumDelaySeconds: Double = 2.0) {
            self.displayName = displayName
            self.minimumPublishIntervalSeconds = minimumPublishIntervalSeconds
            self.monitorPollIntervalSeconds = monitorPollIntervalSeconds
            self.reconnectInitialDelaySeconds = reconnectInitialDelaySeconds
            self.reconnectMaximumDelaySeconds = reconnectMaximumDelaySeconds
        }
    }

    public let configuration: Configuration
    private let publisher: SnapshotPublisher
    private let loop: TrackerLoop
    private let thread = Mutex<PlatformThread?>(nil)

    public init(configuration: Configuration = Configuration(),
                onSnapshot: (@Sendable (WindowSnapshot) -> Void)? = nil) {
        self.configuration = configuration
        publisher = SnapshotPublisher(onSnapshot: onSnapshot)
        loop = TrackerLoop(configuration: configuration, publisher: publisher)
    }

    deinit { stop() }

    /// Starts the tracker thread and returns at once; connecting happens on that thread.
    /// Calling it again does nothing.
    public func start() {
        thread.withLock { thread in
            guard thread == nil else { return }
            let loop = loop
            do {
                thread = try PlatformThread { loop.run() }
            } catch {
                preconditionFailure("the window tracker: \(error)")
            }
        }
    }

    /// Stops the thread and waits for it (a poll interval at most); for shutdown only.
    public func stop() {
        thread.withLock { thread in
            guard let handle = thread else { return }
            loop.enqueue(.stop)
            handle.join()
            thread = nil
        }
    }

    public var sourceDescription: String { "X display \(configuration.displayName ?? "$DISPLAY")" }

    /// The newest snapshot, nil until the first connection succeeded. Never waits on X.
    public var latestSnapshot: WindowSnapshot? { publisher.snapshot }

    public var isConnected: Bool { loop.isConnected }

    /// `--window active`: `_NET_ACTIVE_WINDOW`, or the focused client without an EWMH manager.
    public func activeWindow() -> TrackedWindow? { latestSnapshot?.activeWindow }

    /// Sets (or clears) `_NET_WM_STATE_DEMANDS_ATTENTION` on a window (client or frame id).
    /// Queued to the tracker thread; returns at once. The change shows in a later snapshot.
    public func setDemandsAttention(windowID: UInt32, _ demands: Bool = true) {
        loop.enqueue(.setDemandsAttention(windowID: windowID, demands: demands))
    }

    /// Re-reads the monitor list now instead of at the next poll.
    public func refreshMonitors() {
        loop.enqueue(.refreshMonitors)
    }
}
