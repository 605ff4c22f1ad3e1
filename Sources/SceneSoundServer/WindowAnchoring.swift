import Foundation
import SceneSoundDSP
import SceneSoundEngine
import SceneSoundProtocol
import SceneSoundWindows

/// How scenes sound when their window is out of sight (configurable).
public struct WindowAnchoringSettings: Sendable {
    public var listenerDistanceMetres = ScreenSpace.defaultListenerDistanceMetres
    /// Minimized, on another desktop or unmapped: far in the background.
    public var hiddenCutoffHz = 800.0
    public var hiddenGainDecibels = -12.0
    /// Covered by other windows over more than half its area: a little duller.
    public var coveredCutoffHz = 3000.0
    public var coveredGainDecibels = -3.0
    public init() {}
}

/// Keeps window-anchored scenes where their windows are: takes the tracker's snapshots (on
/// the server's event loop), maps each scene's window to a position in space, and muffles
/// scenes whose windows the user cannot see. Event-loop confined.
final class WindowAnchoring {
    typealias Settings = WindowAnchoringSettings

    private let scenes: SceneRegistry
    private let commands: EngineCommandQueue
    let settings: Settings
    private(set) var snapshot: WindowSnapshot?
    private(set) var space: ScreenSpace
    /// Which windows were active, for sounds that name no window and whose process has none.
    private(set) var history = AppWindowHistory()

    init(scenes: SceneRegistry, commands: EngineCommandQueue, settings: Settings) {
        self.scenes = scenes
        self.commands = commands
        self.settings = settings
        space = ScreenSpace(monitors: [], listenerDistanceMetres: settings.listenerDistanceMetres)
    }

    /// True when windows appeared, closed or changed hands, or another one became active.
    @discardableResult
    func apply(_ snapshot: WindowSnapshot) -> Bool {
        self.snapshot = snapshot
        let changed = history.record(snapshot)
        if snapshot.monitors != space.monitors {
            space = ScreenSpace(monitors: snapshot.monitors, listenerDistanceMetres: settings.listenerDistanceMetres)
        }
        // A scene whose window closed is freed a minute later (`SceneRegistry.freeExpired`).
        for scene in scenes.sortedScenes { place(scene.id) }
        return changed
    }

    /// Re-places one scene from the latest snapshot (also when a scene is bound or adopted).
    func place(_ id: String) {
        guard let snapshot, let scene = scenes.scenes[id] else { return }
        let window: TrackedWindow?
        switch scene.anchor {
        case .window(let windowID): window = snapshot.window(id: windowID)
        case .process(let pid): window = Self.window(ofProcess: pid, in: snapshot)
        case .none, .position: return
        }
        guard let window else {
            // Destroyed (or not yet seen): the scene stays where it was.
            scenes.windowSeen(id, open: false)
            return
        }
        scenes.windowSeen(id, open: true)
        let visible = window.visibility == .visible && snapshot.isDisplayConnected
        var position = scene.lastVisiblePosition ?? space.position(of: window.rectPixels)
        var width = scene.widthMetres
        let muffling: (cutoffHz: Double, gain: Float)
        if visible {
            position = space.position(of: window.rectPixels)
            width = space.widthMetres(of: window.rectPixels)
            muffling = Self.coveredFraction(window, in: snapshot) > 0.5
                ? (settings.coveredCutoffHz, Decibels.linearGain(settings.coveredGainDecibels)) : (.infinity, 1)
        } else {
            // Ignore geometry while hidden: a minimize animation flies off-screen first.
            muffling = (settings.hiddenCutoffHz, Decibels.linearGain(settings.hiddenGainDecibels))
        }
        if position != scene.position || width != scene.widthMetres || scene.window == nil {
            commands.push(.placeScene(index: scene.index, position: position, widthMetres: width))
        }
        if muffling != scene.muffling {
            commands.push(.setSceneLowpass(index: scene.index, cutoffHz: muffling.cutoffHz, gain: muffling.gain))
        }
        scenes.update(id) {
            $0.position = position
            $0.widthMetres = width
            $0.muffling = muffling
            if visible { $0.lastVisiblePosition = position }
            $0.window = SceneRegistry.WindowView(windowID: window.id, rectPixels: window.rectPixels,
                                                  state: window.visibility.rawValue, widthMetres: width,
                                                  title: window.title, application: window.applicationName)
        }
    }

    /// A process's window: the active one if it is theirs, else their top-most visible one.
    static func window(ofProcess pid: Int32, in snapshot: WindowSnapshot) -> TrackedWindow? {
        let theirs = snapshot.windows(pid: pid)  // topmost first
        if let active = snapshot.activeWindowID, let window = theirs.first(where: { $0.id == active }) { return window }
        return theirs.first { $0.visibility == .visible } ?? theirs.first
    }

    /// How much of a window is hidden under visible windows stacked above it (0…1), sampled
    /// on a grid: exact enough to tell "mostly covered" from "peeking out".
    static func coveredFraction(_ window: TrackedWindow, in snapshot: WindowSnapshot) -> Double {
        let above = snapshot.windows.filter { $0.stackingIndex > window.stackingIndex && $0.visibility == .visible }
        guard !above.isEmpty else { return 0 }
        let r = window.rectPixels
        let steps = 16
        var covered = 0
        for i in 0..<steps {
            for j in 0..<steps {
                let x = Double(r.xPixels) + (Double(i) + 0.5) * Double(r.widthPixels) / Double(steps)
                let y = Double(r.yPixels) + (Double(j) + 0.5) * Double(r.heightPixels) / Double(steps)
                if above.contains(where: { $0.rectPixels.contains(xPixels: x, yPixels: y) }) { covered += 1 }
            }
        }
        return Double(covered) / Double(steps * steps)
    }

    // MARK: Status

    var displayStatus: StatusDocument.Display {
        guard let snapshot else { return .init(connected: false) }
        return .init(connected: snapshot.isDisplayConnected, windows: snapshot.windows.count,
                     activeWindow: snapshot.activeWindowID.map { "0x" + String($0, radix: 16) },
                     windowManager: snapshot.hasEWMHWindowManager, activeWindowScene: snapshot.activeWindow?.sceneID)
    }

    var monitorsStatus: [StatusDocument.Monitor] {
        space.monitors.map { monitor in
            let r = monitor.rectPixels
            let topLeft = space.position(xPixels: Double(r.xPixels), yPixels: Double(r.yPixels))
            let bottomRight = space.position(xPixels: Double(r.xPixels + r.widthPixels), yPixels: Double(r.yPixels + r.heightPixels))
            return .init(name: monitor.name, rectPixels: [r.xPixels, r.yPixels, r.widthPixels, r.heightPixels],
                         widthMillimetres: monitor.widthMillimetres, heightMillimetres: monitor.heightMillimetres,
                         primary: monitor.isPrimary, leftMetres: topLeft.x, rightMetres: bottomRight.x,
                         topMetres: topLeft.y, bottomMetres: bottomRight.y, zMetres: topLeft.z)
        }
    }
}
