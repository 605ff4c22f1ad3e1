import SceneSoundDSP
import SceneSoundEngine
import SceneSoundProtocol
import SceneSoundX11

/// The server-wide scenes: names → engine scene slots and what anchors them. Event-loop
/// confined. Slot 0 is the default (straight ahead) used by unknown and unbound scenes.
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
    }

    private(set) var scenes: [String: Scene] = [:]
    private var freeIndices: [Int]
    let defaultPosition: Vector3
    private let commands: EngineCommandQueue

    init(commands: EngineCommandQueue, defaultPosition: Vector3, maximumScenes: Int) {
        self.commands = commands
        self.defaultPosition = defaultPosition
        freeIndices = Array((1..<maximumScenes).reversed())
    }

    /// The engine slot for a scene id, creating the scene on first use ("" → the default).
    /// nil when every slot is taken: the stream then plays at the default position.
    func index(for id: String) -> Int {
        if id.isEmpty { return 0 }
        if let scene = scenes[id] { return scene.index }
        guard let index = freeIndices.popLast() else { return 0 }
        let anchor: Anchor = SceneID.x11WindowID(id).map { .window($0) } ?? .none
        scenes[id] = Scene(id: id, index: index, anchor: anchor, position: defaultPosition)
        commands.push(.placeScene(index: index, position: defaultPosition, widthMetres: 0))
        return index
    }

    func place(_ id: String, at spherical: SphericalPosition) {
        let index = index(for: id)
        let position = spherical.cartesian
        scenes[id]?.anchor = .position(spherical)
        scenes[id]?.position = position
        commands.push(.placeScene(index: index, position: position, widthMetres: 0))
    }

    func bind(_ id: String, window: UInt32) {
        _ = index(for: id)
        scenes[id]?.anchor = .window(window)
        scenes[id]?.lastVisiblePosition = nil
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

    /// False when the scene has no binding to remove.
    func unbind(_ id: String) -> Bool {
        guard let scene = scenes[id], scene.anchor != .none else { return false }
        scenes[id]?.anchor = .none
        scenes[id]?.position = defaultPosition
        commands.push(.placeScene(index: scene.index, position: defaultPosition, widthMetres: 0))
        return true
    }

    var sortedScenes: [Scene] { scenes.values.sorted { $0.id < $1.id } }
}
