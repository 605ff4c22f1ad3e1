import SceneSoundDSP
import SceneSoundEngine
import SceneSoundPlatform
import SceneSoundProtocol
import SceneSoundWindows

/// The server-wide scenes: names → engine scene slots and what anchors them. Event-loop
/// confined. Slot 0 is the default (straight ahead) used by unknown and unbound scenes.
///
/// Scenes are freed, their slot returned, when nothing needs them any more: no engine stream
/// renders at them (protocol streams, plays, captured apps' streams — counted until the render
/// thread hands each stream back, see `EngineStreams`) and nothing keeps them (`KeepReason`).
final class SceneRegistry {
    enum Anchor: Equatable {
        case none
        case window(UInt32)
        case position(SphericalPosition)
        /// Never bound by its program: follows that program's window (`_NET_WM_PID`).
        case process(Int32)
    }

    /// What the window tracker last said about a window-anchored scene (for status and map).
    struct WindowView: Equatable {
        var windowID: UInt32
        var rectPixels: PixelRect
        var state: String
        var widthMetres: Double
        var title: String?
        var application: String?
    }

    /// Why a scene that nothing plays at stays (status: `kept`).
    enum KeepReason: String {
        /// Placed by hand (`SCENE_PLACE`): until unbound.
        case placed
        /// Bound to a window by a client: until unbound, or until its window is seen to close.
        case bound
        /// Its window (an `x11:` or `wayland:` scene's, or its program's) is open: until the window closes.
        case window
        /// Its window closed less than `closedWindowKeepSeconds` ago: a sound that comes late
        /// still plays where the window was.
        case closedWindow = "closed_window"
    }

    /// How long a scene whose window closed keeps its last place with nothing playing.
    static let closedWindowKeepSeconds = 60.0

    struct Scene {
        var id: String
        var index: Int
        var anchor: Anchor
        /// Where the scene is now, relative to the neutral head.
        var position: Vector3
        var window: WindowView?
        /// The last position seen while the window was visible: where a minimized, hidden or
        /// destroyed window keeps sounding from.
        var lastVisiblePosition: Vector3?
        var widthMetres = 0.0
        /// The muffling last sent to the engine (cutoff Hz, linear gain), to send only changes.
        var muffling: (cutoffHz: Double, gain: Float) = (.infinity, 1)
        /// Engine streams rendering at the scene now.
        var streams = 0
        /// When its window, once seen, was found gone (monotonic seconds).
        var windowClosedAtSeconds: Double?

        static let openMuffling: (cutoffHz: Double, gain: Float) = (.infinity, 1)

        func keepReason(nowSeconds: Double) -> KeepReason? {
            if let closed = windowClosedAtSeconds {
                return nowSeconds - closed < SceneRegistry.closedWindowKeepSeconds ? .closedWindow : nil
            }
            switch anchor {
            case .position: return .placed
            // A binding outlives its streams until its window, once seen, is gone.
            case .window where !SceneID.isWindowScene(id): return .bound
            case .window, .process, .none: return window == nil ? nil : .window
            }
        }
    }

    private(set) var scenes: [String: Scene] = [:]
    private var freeIndices: [Int]
    /// Which scene holds each slot (nil: free, and slot 0).
    private var sceneIDBySlot: [String?]
    let defaultPosition: Vector3
    private let commands: EngineCommandQueue
    /// The slots scenes can have (all but the default's).
    let capacity: Int
    /// Since start: scenes made and freed, and scenes wanted when every slot was taken.
    private(set) var createdCount = 0
    private(set) var freedCount = 0
    private(set) var refusedCount = 0
    /// Monotonic seconds (tests set their own clock).
    var nowSeconds: () -> Double = { Double(MonotonicClock.nowNanoseconds()) * 1e-9 }
    /// When the next scene kept for its closed window may be freed.
    private var nextClosedWindowExpirySeconds = Double.infinity

    init(commands: EngineCommandQueue, defaultPosition: Vector3, maximumScenes: Int) {
        self.commands = commands
        self.defaultPosition = defaultPosition
        capacity = maximumScenes - 1
        freeIndices = Array((1..<maximumScenes).reversed())
        sceneIDBySlot = Array(repeating: nil, count: maximumScenes)
    }

    /// What a client is told when no slot is free.
    var exhaustedMessage: String {
        "every scene slot is in use (\(capacity) scenes); unbind placed scenes or stop sounds playing at other scenes"
    }

    /// The scene's engine slot, creating the scene on first use ("" → the default, 0). nil when
    /// every slot is taken (counted). A new scene that nothing keeps must be acquired at once
    /// or it is freed at the next sweep.
    func slot(for id: String) -> Int? {
        if id.isEmpty { return 0 }
        if let scene = scenes[id] { return scene.index }
        guard let index = freeIndices.popLast() else {
            refusedCount += 1
            return nil
        }
        let anchor: Anchor = SceneID.windowID(id).map { .window($0) } ?? .none
        // A slot starts (and is reset when freed) straight ahead and unmuffled in the engine.
        scenes[id] = Scene(id: id, index: index, anchor: anchor, position: defaultPosition)
        sceneIDBySlot[index] = id
        createdCount += 1
        return index
    }

    /// One more engine stream renders at the scene (created if need be); nil when no slot is free.
    func acquire(_ id: String) -> Int? {
        guard let index = slot(for: id) else { return nil }
        scenes[id]?.streams += 1
        return index
    }

    /// An engine stream no longer renders at slot `index`: the render thread handed it back, or
    /// it was moved to another scene (a command queued before anything that reuses the slot).
    func release(index: Int) {
        guard index > 0, index < sceneIDBySlot.count, let id = sceneIDBySlot[index] else { return }
        scenes[id]?.streams -= 1
        freeIfUnused(id)
    }

    /// False when no slot is free.
    func place(_ id: String, at spherical: SphericalPosition) -> Bool {
        guard let index = slot(for: id) else { return false }
        let position = spherical.cartesian
        update(id) {
            $0.anchor = .position(spherical)
            $0.position = position
            $0.widthMetres = 0
            $0.window = nil
            $0.windowClosedAtSeconds = nil
            $0.lastVisiblePosition = nil
        }
        commands.push(.placeScene(index: index, position: position, widthMetres: 0))
        unmuffle(id)
        return true
    }

    /// False when no slot is free.
    func bind(_ id: String, window: UInt32) -> Bool {
        guard slot(for: id) != nil else { return false }
        update(id) {
            if $0.anchor != .window(window) {
                $0.window = nil
                $0.windowClosedAtSeconds = nil
            }
            $0.anchor = .window(window)
            $0.lastVisiblePosition = nil
        }
        return true
    }

    /// A program plays to a scene it never bound (or to none): the scene follows the program's
    /// own window, found through `_NET_WM_PID` = the socket peer's pid.
    func adoptForProcess(_ id: String, pid: Int32) {
        guard pid > 0, let scene = scenes[id], scene.anchor == .none else { return }
        scenes[id]?.anchor = .process(pid)
    }

    /// The scene id for "no scene" from a process: its windows, once the tracker finds one.
    static func processSceneID(pid: Int32) -> String { "pid:\(pid)" }

    func update(_ id: String, _ change: (inout Scene) -> Void) {
        guard var scene = scenes[id] else { return }
        change(&scene)
        scenes[id] = scene
    }

    /// False when the scene has no binding to remove. The scene then plays straight ahead, and
    /// is freed if nothing plays at it.
    func unbind(_ id: String) -> Bool {
        guard let scene = scenes[id], scene.anchor != .none else { return false }
        update(id) {
            $0.anchor = .none
            $0.position = defaultPosition
            $0.widthMetres = 0
            $0.window = nil
            $0.windowClosedAtSeconds = nil
            $0.lastVisiblePosition = nil
        }
        commands.push(.placeScene(index: scene.index, position: defaultPosition, widthMetres: 0))
        unmuffle(id)
        freeIfUnused(id)
        return true
    }

    func keepReason(of scene: Scene) -> KeepReason? { scene.keepReason(nowSeconds: nowSeconds()) }

    /// The window tracker saw a scene's window (`open`) or found it gone.
    func windowSeen(_ id: String, open: Bool) {
        guard let scene = scenes[id] else { return }
        if open {
            scenes[id]?.windowClosedAtSeconds = nil
        } else if scene.window != nil, scene.windowClosedAtSeconds == nil {
            let now = nowSeconds()
            scenes[id]?.window?.state = "gone"
            scenes[id]?.windowClosedAtSeconds = now
            nextClosedWindowExpirySeconds = min(nextClosedWindowExpirySeconds, now + Self.closedWindowKeepSeconds)
        }
    }

    /// Frees every scene nothing needs any more.
    private func freeUnused() {
        for id in scenes.keys.sorted() { freeIfUnused(id) }
        let now = nowSeconds()
        nextClosedWindowExpirySeconds = scenes.values.compactMap { $0.windowClosedAtSeconds }
            .map { $0 + Self.closedWindowKeepSeconds }.filter { $0 > now }.min() ?? .infinity
    }

    /// Called every tick: frees the scenes whose closed window's keep has run out (cheap until one has).
    /// Seconds until `freeExpired` has a closed window's scene to free; nil: none is waiting.
    var secondsUntilNextExpiry: Double? {
        nextClosedWindowExpirySeconds.isFinite ? max(0, nextClosedWindowExpirySeconds - nowSeconds()) : nil
    }

    func freeExpired() {
        guard nowSeconds() >= nextClosedWindowExpirySeconds else { return }
        freeUnused()
    }

    private func freeIfUnused(_ id: String) {
        guard let scene = scenes[id], scene.streams <= 0, keepReason(of: scene) == nil else { return }
        scenes[id] = nil
        sceneIDBySlot[scene.index] = nil
        // Queued behind every command that moved or removed the streams that rendered here,
        // so the render thread resets the slot only once nothing renders at it.
        commands.push(.resetScene(index: scene.index))
        freeIndices.append(scene.index)
        freedCount += 1
    }

    private func unmuffle(_ id: String) {
        guard let scene = scenes[id], scene.muffling != Scene.openMuffling else { return }
        commands.push(.setSceneLowpass(index: scene.index, cutoffHz: .infinity, gain: 1))
        scenes[id]?.muffling = Scene.openMuffling
    }

    var sortedScenes: [Scene] { scenes.values.sorted { $0.id < $1.id } }
}
