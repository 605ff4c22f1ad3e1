import SceneSoundDSP
import SceneSoundEngine
import SceneSoundProtocol

/// The server-wide scenes: names → engine scene slots and what anchors them. Event-loop
/// confined. Slot 0 is the default (straight ahead) used by unknown and unbound scenes.
final class SceneRegistry {
    enum Anchor: Equatable {
        case none
        case window(UInt32)
        case position(SphericalPosition)
    }

    struct Scene {
        var id: String
        var index: Int
        var anchor: Anchor
        /// Where the scene is now, relative to the neutral head.
        var position: Vector3
    }

    private(set) var scenes: [String: Scene] = [:]
    private var freeIndices: [Int]
    let defaultPosition: Vector3
    private let engine: Engine

    init(engine: Engine) {
        self.engine = engine
        defaultPosition = engine.defaultScenePosition
        freeIndices = Array((1..<engine.maximumScenes).reversed())
    }

    /// The engine slot for a scene id, creating the scene on first use ("" → the default).
    /// nil when every slot is taken: the stream then plays at the default position.
    func index(for id: String) -> Int {
        if id.isEmpty { return 0 }
        if let scene = scenes[id] { return scene.index }
        guard let index = freeIndices.popLast() else { return 0 }
        let anchor: Anchor = SceneID.x11WindowID(id).map { .window($0) } ?? .none
        scenes[id] = Scene(id: id, index: index, anchor: anchor, position: defaultPosition)
        engine.commands.push(.placeScene(index: index, position: defaultPosition, widthMetres: 0))
        return index
    }

    func place(_ id: String, at spherical: SphericalPosition) {
        let index = index(for: id)
        let position = spherical.cartesian
        scenes[id]?.anchor = .position(spherical)
        scenes[id]?.position = position
        engine.commands.push(.placeScene(index: index, position: position, widthMetres: 0))
    }

    func bind(_ id: String, window: UInt32) {
        _ = index(for: id)
        scenes[id]?.anchor = .window(window)
    }

    /// False when the scene has no binding to remove.
    func unbind(_ id: String) -> Bool {
        guard let scene = scenes[id], scene.anchor != .none else { return false }
        scenes[id]?.anchor = .none
        scenes[id]?.position = defaultPosition
        engine.commands.push(.placeScene(index: scene.index, position: defaultPosition, widthMetres: 0))
        return true
    }

    var sortedScenes: [Scene] { scenes.values.sorted { $0.id < $1.id } }
}
