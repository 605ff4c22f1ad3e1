import SceneSoundWindows
import Synchronization
import SceneSoundPlatform

/// The tracker thread's body: connect (with backoff), scan, then read events, coalesce and
/// publish until the connection dies or `stop` is asked. Everything but `enqueue` and
/// `isConnected` runs on that one thread, which alone touches the X connection.
final class TrackerLoop: Sendable {
    enum Command: Sendable {
        case setDemandsAttention(windowID: UInt32, demands: Bool)
        case refreshMonitors
        case stop
    }

    private let configuration: WindowTracker.Configuration
    private let publisher: SnapshotPublisher
    private let wakePipe = WakePipe()
    private let commands = Mutex<[Command]>([])
    private let connected = Atomic<Bool>(false)
    private let stopping = Atomic<Bool>(false)
    /// Thread-confined state, in a Mutex only to satisfy Sendable; never contended.
    private let state = Mutex<LoopState>(LoopState())

    private struct LoopState {
        var sequence: UInt64 = 0
        var lastSnapshot: WindowSnapshot?
    }

    init(configuration: WindowTracker.Configuration, publisher: SnapshotPublisher) {
        self.configuration = configuration
        self.publisher = publisher
    }

    var isConnected: Bool { connected.load(ordering: .acquiring) }

    func enqueue(_ command: Command) {
        commands.withLock { $0.append(command) }
        if case .stop = command { stopping.store(true, ordering: .releasing) }
        wakePipe.wake()
    }

    private var isStopping: Bool { stopping.load(ordering: .acquiring) }

    func run() {
        var backoff = ReconnectBackoff(initialSeconds: configuration.reconnectInitialDelaySeconds,
                                       maximumSeconds: configuration.reconnectMaximumDelaySeconds)
        while !isStopping {
            if let connection = XConnection(displayName: configuration.displayName) {
                backoff.reset()
                connected.store(true, ordering: .releasing)
                runSession(connection)
                connected.store(false, ordering: .releasing)
                if isStopping { break }
                publishDisconnected()
            }
            if isStopping { break }
            // Commands for a display we do not have are dropped: the window they name may not
            // exist on the next server.
            commands.withLock { pending in pending.removeAll() }
            wakePipe.wait(also: nil, timeoutNanoseconds: UInt64(backoff.nextDelaySeconds() * 1e9))
        }
    }

    private func runSession(_ connection: XConnection) {
        let model = WindowModel(root: connection.root, atoms: connection.atoms)
        model.scan(connection)
        var schedule = PublishSchedule(minimumIntervalNanoseconds: UInt64(configuration.minimumPublishIntervalSeconds * 1e9))
        let monitorPollNanoseconds = UInt64(configuration.monitorPollIntervalSeconds * 1e9)
        var nextMonitorPoll = UInt64(MonotonicClock.nowNanoseconds()) + monitorPollNanoseconds
        var newestEvent: UInt64 = 0

        while !isStopping {
            var readEvent = false
            while let event = connection.pollEvent() {
                let newTopLevels = model.apply(event)
                if !newTopLevels.isEmpty { model.watch(newTopLevels, connection) }
                readEvent = true
            }
            if readEvent { newestEvent = UInt64(MonotonicClock.nowNanoseconds()) }
            if connection.hasFailed { return }
            // A command's round trip may have queued events in XCB that poll() cannot see.
            if runCommands(connection, model) { continue }

            var now = UInt64(MonotonicClock.nowNanoseconds())
            if now >= nextMonitorPoll {
                // RandR sends no event when a monitor is defined or removed (only on CRTC and
                // output changes), so the monitor list is also re-read now and then.
                model.monitorsNeedRefresh = true
                model.hasChanges = true
                nextMonitorPoll = now + monitorPollNanoseconds
            }
            var timeout = nextMonitorPoll - now
            if model.hasChanges {
                let wait = schedule.nanosecondsUntilAllowed(now: now)
                if wait == 0 {
                    model.refresh(connection)
                    if connection.hasFailed { return }
                    model.hasChanges = false
                    now = UInt64(MonotonicClock.nowNanoseconds())
                    if publishIfChanged(model, newestEvent: newestEvent, now: now) { schedule.didPublish(now: now) }
                    continue  // replies may have brought events into XCB's queue
                }
                timeout = min(timeout, wait)
            }
            connection.flush()
            wakePipe.wait(also: connection.fileDescriptor, timeoutNanoseconds: timeout)
        }
    }

    /// True when it ran any.
    private func runCommands(_ connection: XConnection, _ model: WindowModel) -> Bool {
        let pending = commands.withLock { pending in
            defer { pending.removeAll() }
            return pending
        }
        for command in pending {
            switch command {
            case let .setDemandsAttention(windowID, demands):
                let client = model.frame(of: windowID).flatMap { model.topLevels[$0]?.clientID } ?? windowID
                connection.setDemandsAttention(window: client, demands: demands,
                                               viaWindowManager: model.hasEWMHWindowManager)
            case .refreshMonitors:
                model.monitorsNeedRefresh = true
                model.hasChanges = true
            case .stop:
                return true
            }
        }
        return !pending.isEmpty
    }

    /// Publishes unless nothing a consumer sees has changed (a monitor poll, a property
    /// rewritten with the same value, a configure that moved nothing).
    private func publishIfChanged(_ model: WindowModel, newestEvent: UInt64, now: UInt64) -> Bool {
        state.withLock { state in
            let windows = model.trackedWindows()
            if let last = state.lastSnapshot, last.isDisplayConnected, last.windows == windows,
               last.monitors == model.monitors, last.activeWindowID == model.activeClient,
               last.currentDesktop == model.currentDesktop, last.hasEWMHWindowManager == model.hasEWMHWindowManager {
                return false
            }
            state.sequence += 1
            let snapshot = WindowSnapshot(
                sequence: state.sequence, publishedMonotonicNanoseconds: now,
                newestEventMonotonicNanoseconds: newestEvent, isDisplayConnected: true, windows: windows,
                monitors: model.monitors, activeWindowID: model.activeClient,
                currentDesktop: model.currentDesktop, hasEWMHWindowManager: model.hasEWMHWindowManager)
            state.lastSnapshot = snapshot
            publisher.publish(snapshot)
            return true
        }
    }

    /// The last windows and monitors stay, marked disconnected, so sounds keep their places.
    private func publishDisconnected() {
        state.withLock { state in
            guard var snapshot = state.lastSnapshot else { return }
            state.sequence += 1
            snapshot.sequence = state.sequence
            snapshot.publishedMonotonicNanoseconds = UInt64(MonotonicClock.nowNanoseconds())
            snapshot.isDisplayConnected = false
            state.lastSnapshot = snapshot
            publisher.publish(snapshot)
        }
    }
}
