import Foundation
import NIOCore
import Synchronization
import SceneSoundDSP
import SceneSoundEngine
import SceneSoundProtocol

/// The streams of apps that do not speak SceneSound's protocol, taken over from the sound
/// server by the daemon's app capture: each becomes an engine stream anchored to the app's
/// window. The seam between the capture (which knows libpulse) and the server (which knows
/// the engine and the windows): the capture calls `begin`, `update` and `end` and writes audio
/// into each stream's `Feed` from its own thread; the rest happens on the server's event loop.
public final class CapturedAppStreams: @unchecked Sendable {
    /// What the sound server says about the app behind a stream.
    public struct App: Sendable, Equatable {
        /// The capture's key for the stream (unique while it lasts).
        public var key: UInt64
        public var applicationName: String?
        public var binary: String?
        public var processID: Int32?
        public var windowID: UInt32?
        public var mediaRole: String?
        public var eventID: String?
        /// Its captured channels: stereo for a mono or stereo app, a surround app's own
        /// (played as virtual speakers around its window).
        public var layout: ChannelLayout
        /// How much later its recording hands audio on than the direct path's sink step.
        public var recordingStepSeconds: Double

        public init(key: UInt64, applicationName: String?, binary: String?, processID: Int32?, windowID: UInt32?,
                    mediaRole: String?, eventID: String?, layout: ChannelLayout = .stereo, recordingStepSeconds: Double = 0) {
            self.recordingStepSeconds = recordingStepSeconds
            self.key = key
            self.applicationName = applicationName
            self.binary = binary
            self.processID = processID
            self.windowID = windowID
            self.mediaRole = mediaRole
            self.eventID = eventID
            self.layout = layout
        }

        /// What the server makes of it, as for protocol streams.
        public enum Kind: String, Sendable {
            case playback
            /// libcanberra's event sounds: clicks, bells, notifications.
            case system
            /// Warnings and errors: they duck playback and are never degraded.
            case alert
        }

        public var kind: Kind {
            if let eventID, eventID.hasPrefix("dialog-warning") || eventID.hasPrefix("dialog-error") { return .alert }
            return mediaRole == "event" || eventID != nil ? .system : .playback
        }
    }

    /// Which rule found a stream's window (status: `window_found_by`).
    enum WindowRule: String, Sendable {
        /// The stream names its window (`window.x11.xid`).
        case xid
        /// `_NET_WM_PID` of its process or of the nearest parent process that has a window.
        case pid
        /// Its app's most recently active window (binary or `WM_CLASS`), found by neither.
        case recentlyActive = "recently_active"
        /// No window found: straight ahead (its process's window is taken when one appears).
        case none
    }

    /// Where a stream plays: the scene, the process whose window it follows when it names
    /// none, and why.
    struct Placement: Equatable {
        var sceneID: String
        var anchorPID: Int32?
        var rule: WindowRule
    }

    /// A captured stream on the event loop's side.
    struct Entry {
        var app: App
        var streamID: StreamID
        var feed: Feed
        var placement: Placement
        var spatialMode: SceneSoundProtocol.SpatialMode
    }

    private let eventLoop: EventLoop
    private let core: ServerCore
    private var entries: [UInt64: Entry] = [:]
    public private(set) var startedCount = 0
    public private(set) var endedCount = 0
    /// For status: the apps left alone, and what the capture is doing.
    private(set) var excluded: [String] = []
    /// The spatial mode the user chose per app (binary or application name; `scenesound apps
    /// spatial`); an app not named plays anchored.
    private var spatialModeByName: [String: SceneSoundProtocol.SpatialMode] = [:]
    private(set) var captureState = "starting"

    private let rest: OutputRest

    public init(server: SoundServer) {
        eventLoop = server.eventLoop
        core = server.core
        rest = server.rest
        // Windows appear, close and take turns being active after an app's first sound: the
        // core calls `windowsChanged` whenever they do.
        try? eventLoop.submit { [unowned self] in core.capturedApps = self }.wait()
    }

    /// From the capture's thread: a new stream. Its feed takes audio at once; the engine
    /// starts reading it a moment later, on the event loop.
    public func begin(_ app: App) -> Feed {
        let rate = core.engine.configuration.sampleRateHz
        let feed = Feed(capacityFrames: Int(0.5 * rate), marginFrames: Int(0.004 * rate), maximumMarginFrames: Int(0.050 * rate),
                        windowFrames: Int(0.5 * rate),
                        maximumQueuedFrames: Int(0.5 * rate), channelCount: app.layout.channelCount, wake: { [rest] in rest.wakeFromAnyThread() })
        eventLoop.execute { [self] in add(app, feed: feed) }
        return feed
    }

    public func update(_ app: App) {
        eventLoop.execute { [self] in
            guard var entry = entries[app.key] else { return }
            entry.app = app
            entries[app.key] = entry
            reanchor(app.key)
        }
    }

    public func end(key: UInt64) {
        eventLoop.execute { [self] in
            guard let entry = entries.removeValue(forKey: key) else { return }
            // What is still queued is the end of the app's sound (a short event sound may be
            // nearly all of it): played out before the stream goes.
            entry.feed.input.setIdle(true)
            drainThenRemove(entry, deadline: .now() + .seconds(1))
        }
    }

    private func drainThenRemove(_ entry: Entry, deadline: NIODeadline) {
        guard entry.feed.ring.availableFrames == 0 || NIODeadline.now() >= deadline else {
            eventLoop.scheduleTask(in: .milliseconds(10)) { [self] in drainThenRemove(entry, deadline: deadline) }
            return
        }
        // The engine lets go of it through its event queue; freed there, off the render thread.
        core.engineStreams.remove(entry.streamID)
        endedCount += 1
        core.logger.info("captured stream of \(entry.app.applicationName ?? "?") ended: \(entry.feed.receivedFrameCount) frames received, \(entry.feed.input.starvedFrameCount) short, \(entry.feed.droppedFrameCount) dropped")
    }

    /// Event-loop confined.
    var currentEntries: [Entry] { entries.values.sorted { $0.app.key < $1.app.key } }

    private func add(_ app: App, feed: Feed) {
        let placement = placement(for: app)
        let kind: StreamKind = switch app.kind {
        case .playback: .playback
        case .system: .system
        case .alert: .alert
        }
        let stream = core.engineStreams.make(
            .play, input: feed.input, channelCount: app.layout.channelCount,
            layout: app.layout == .stereo ? nil : app.layout, kind: kind, spatialMode: spatialMode(for: app), volumeDecibels: 0,
            sceneIndex: sceneIndex(placement))
        core.engineStreams.add(stream)
        entries[app.key] = Entry(app: app, streamID: stream.id, feed: feed, placement: placement, spatialMode: spatialMode(for: app))
        startedCount += 1
        if app.kind == .alert {
            // The rule protocol alerts follow (the app cannot ask for it: only the server's setting
            // or a missing output flags the window).
            core.samples.requestAttention(for: core.scenes.resolved(placement.sceneID, peerPID: placement.anchorPID ?? 0),
                                          demanded: false)
        }
    }

    private func placement(for app: App) -> Placement {
        let windows = core.scenes.windows
        return Self.placement(for: app, ancestry: { ProcessAncestry.chain(from: $0) }, hasWindow: hasWindow) {
            guard let windows, let snapshot = windows.snapshot else { return nil }
            return windows.history.mostRecentlyActiveWindow(of: identity(of: app), in: snapshot)?.sceneID
        }
    }

    /// Where a stream plays: its window id if it names one; else the window of its process or
    /// of the nearest parent process that has one (browsers play from child processes); else
    /// its app's most recently active window (a sandboxed or helper process owns none); else
    /// straight ahead.
    static func placement(for app: App, ancestry: (Int32) -> [Int32], hasWindow: (Int32) -> Bool,
                          recentlyActiveWindow: () -> String?) -> Placement {
        if let window = app.windowID { return Placement(sceneID: SceneID.forX11Window(window), anchorPID: nil, rule: .xid) }
        let pid = app.processID.flatMap { $0 > 0 ? $0 : nil }
        // "" + pid: the server's process scene, which follows that pid's window.
        if let pid, let owner = ancestry(pid).first(where: hasWindow) {
            return Placement(sceneID: "", anchorPID: owner, rule: .pid)
        }
        if let windowScene = recentlyActiveWindow() {
            return Placement(sceneID: windowScene, anchorPID: nil, rule: .recentlyActive)
        }
        return Placement(sceneID: "", anchorPID: pid, rule: .none)
    }

    /// The app as the window history knows apps: the binary the sound server names, else the
    /// stream's process's own.
    private func identity(of app: App) -> AppWindowHistory.App {
        AppWindowHistory.App(binary: app.binary ?? app.processID.flatMap { $0 > 0 ? ProcessBinary.name($0) : nil },
                             name: app.applicationName)
    }

    private func hasWindow(_ pid: Int32) -> Bool {
        guard let snapshot = core.scenes.windows?.snapshot else { return false }
        return !snapshot.windows(pid: pid).isEmpty
    }

    /// Windows came or went or another became active (event-loop confined).
    func windowsChanged() {
        for key in entries.keys { reanchor(key) }
    }

    private func reanchor(_ key: UInt64) {
        guard var entry = entries[key] else { return }
        let placement = placement(for: entry.app)
        guard placement != entry.placement else { return }
        let moves = placement.sceneID != entry.placement.sceneID || placement.anchorPID != entry.placement.anchorPID
        entry.placement = placement
        entries[key] = entry
        if moves { core.engineStreams.setScene(entry.streamID, sceneIndex: sceneIndex(placement)) }
    }

    /// The scene's engine slot (placed at its window at once), held by the stream. With every
    /// slot taken the app plays straight ahead (status: `scene_slots.refused`).
    private func sceneIndex(_ placement: Placement) -> Int {
        if let index = core.scenes.acquire(placement.sceneID, peerPID: placement.anchorPID ?? 0) { return index }
        core.logger.warning("captured stream plays straight ahead: \(core.scenes.registry.exhaustedMessage)")
        return 0
    }

    public func setExcluded(_ names: [String]) {
        eventLoop.execute { [self] in excluded = names }
    }

    /// The apps' spatial modes by name (`anchored`, `head-locked`, `off`; others ignored): new
    /// streams start in theirs, playing ones switch now.
    public func setSpatialModes(_ modeByName: [String: String]) {
        let modes = modeByName.compactMapValues(Self.spatialMode(named:))
        eventLoop.execute { [self] in
            spatialModeByName = modes
            for (key, entry) in entries where spatialMode(for: entry.app) != entry.spatialMode {
                switchSpatialMode(key, to: spatialMode(for: entry.app))
            }
        }
    }

    private func spatialMode(for app: App) -> SceneSoundProtocol.SpatialMode {
        app.binary.flatMap { spatialModeByName[$0] } ?? app.applicationName.flatMap { spatialModeByName[$0] } ?? .anchored
    }

    static func spatialMode(named name: String) -> SceneSoundProtocol.SpatialMode? {
        switch name {
        case "anchored": .anchored
        case "head-locked": .headLocked
        case "off": .off
        default: nil
        }
    }

    /// Switched under a fade: out over one block, the mode, back in over the next, so that
    /// neither the jump from the binaural to the plain path nor the voices' cut tails click.
    private func switchSpatialMode(_ key: UInt64, to mode: SceneSoundProtocol.SpatialMode) {
        guard var entry = entries[key] else { return }
        entry.spatialMode = mode
        entries[key] = entry
        let id = entry.streamID
        core.engineStreams.setGain(id, linear: 0)
        let blockSeconds = Double(core.engine.configuration.blockFrames) / core.engine.configuration.sampleRateHz
        eventLoop.scheduleTask(in: .nanoseconds(Int64(2 * blockSeconds * 1e9) + 2_000_000)) { [self] in
            // Still the same stream, and still meant to play this way.
            guard let now = entries[key], now.streamID == id, now.spatialMode == mode else { return }
            core.engineStreams.setMode(id, mode)
            core.engineStreams.setGain(id, linear: 1)
        }
        core.logger.info("captured stream of \(entry.app.applicationName ?? entry.app.binary ?? "?") plays \(EngineStreams.engineMode(mode).rawValue) now")
    }

    /// "capturing", "connecting", "interrupted: why", "stopped".
    public func setCaptureState(_ state: String) {
        eventLoop.execute { [self] in captureState = state }
    }

    /// Stops following windows; the streams end with the capture.
    public func stop() {
        try? eventLoop.submit { [self] in
            for key in entries.keys.sorted() { end(key: key) }
        }.wait()
    }
}

/// A process and its parents, nearest first, from /proc/PID/stat (stops at init).
enum ProcessAncestry {
    static func chain(from pid: Int32, maximumDepth: Int = 16) -> [Int32] {
        var chain: [Int32] = []
        var current = pid
        while current > 1, chain.count < maximumDepth {
            chain.append(current)
            guard let parent = parent(of: current) else { break }
            current = parent
        }
        return chain
    }

    /// The fourth field of /proc/PID/stat; the command name in parentheses may hold spaces,
    /// so fields are counted after its closing parenthesis.
    static func parent(of pid: Int32) -> Int32? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 1 ? Int32(fields[1]) : nil
    }
}

extension CapturedAppStreams {
    /// The `apps` section of the status document (`scenesound apps`). Event-loop confined.
    var status: StatusDocument.Apps {
        let rate = core.engine.configuration.sampleRateHz
        let output = core.outputStatus()
        let blockSeconds = Double(core.engine.configuration.blockFrames) / rate
        let outputLatencySeconds = output.queueTargetSeconds.map { max(0, $0 - blockSeconds / 2) } ?? output.latencySeconds ?? 0
        let streams = currentEntries.map { entry -> StatusDocument.AppStream in
            let sceneID = core.scenes.resolved(entry.placement.sceneID, peerPID: entry.placement.anchorPID ?? 0)
            let scene = core.scenes.registry.scenes[sceneID]
            let position = SphericalPosition(cartesian: scene?.position ?? core.scenes.registry.defaultPosition)
            let window = scene?.window?.windowID ?? entry.app.windowID
            return StatusDocument.AppStream(
                application: entry.app.applicationName, binary: entry.app.binary, pid: entry.app.processID.map(Int.init),
                kind: entry.app.kind.rawValue, eventID: entry.app.eventID,
                window: window.map { "0x" + String($0, radix: 16) }, windowFoundBy: entry.placement.rule.rawValue,
                title: scene?.window?.title, scene: sceneID,
                azimuthDegrees: position.azimuthDegrees,
                addedLatencySeconds: Self.addedLatencySeconds(
                    queuedSeconds: Double(entry.feed.ring.availableFrames) / rate, outputLatencySeconds: outputLatencySeconds)
                    + entry.app.recordingStepSeconds,
                starvedSeconds: Double(entry.feed.input.starvedFrameCount) / rate,
                droppedSeconds: Double(entry.feed.droppedFrameCount) / rate,
                slippedSeconds: Double(entry.feed.slippedFrameCount) / rate,
                stretchedSeconds: Double(entry.feed.input.stretchedFrameCount) / rate,
                recentDrySpells: entry.feed.input.recentDrySpells.map {
                    .init(startedMonotonicSeconds: $0.startedMonotonicSeconds, seconds: Double($0.frames) / rate)
                },
                levelDecibels: max(StatusReport.silenceDecibels, entry.feed.input.recentLevelDecibels),
                spatial: EngineStreams.engineMode(entry.spatialMode).rawValue)
        }
        return StatusDocument.Apps(state: captureState, started: startedCount, ended: endedCount, excluded: excluded,
                                   streams: streams)
    }

    /// How much later an app is heard through the capture than straight from its sink: what
    /// waits in its queue, then what the output keeps queued in the sound server (its target
    /// less half a block on average: it is topped up a block at a time). The capture
    /// sink's render step and the recording's fragment take the place of the real sink's own
    /// step on the direct path and add nothing beyond it. Measured end to end
    /// (CaptureLatencyTests) this is within a few ms of the difference on PulseAudio and on
    /// PipeWire; counting the fragment read 5 ms high, leaving out the output 15-20 ms low, and
    /// pipewire-pulse's reported output latency instead of the queue up to 15 ms high.
    static func addedLatencySeconds(queuedSeconds: Double, outputLatencySeconds: Double) -> Double {
        queuedSeconds + outputLatencySeconds
    }
}
