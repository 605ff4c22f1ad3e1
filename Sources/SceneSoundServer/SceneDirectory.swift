import SceneSoundDSP
import SceneSoundProtocol

/// The scenes as sessions and plays use them: the registry, plus the window anchoring once
/// windows are tracked (a scene bound or adopted is placed at its window at once).
/// Event-loop confined.
final class SceneDirectory {
    let registry: SceneRegistry
    /// Installed when window tracking starts.
    var windows: WindowAnchoring?

    init(registry: SceneRegistry) { self.registry = registry }

    /// The engine slot for a scene a client plays to. With windows tracked, "no scene" and a
    /// name the program never bound follow the program's own window (`_NET_WM_PID`).
    func index(for id: String, peerPID: Int32) -> Int {
        guard let windows, peerPID > 0 else { return registry.index(for: id) }
        let sceneID = resolved(id, peerPID: peerPID)
        let index = registry.index(for: sceneID)
        registry.adoptForProcess(sceneID, pid: peerPID)
        windows.place(sceneID)
        return index
    }

    /// The scene a client means: "no scene" is its program's own, once windows are tracked.
    func resolved(_ id: String, peerPID: Int32) -> String {
        guard windows != nil, peerPID > 0, id.isEmpty else { return id }
        return SceneRegistry.processSceneID(pid: peerPID)
    }

    func place(_ id: String, at position: ScenePosition) {
        registry.place(id, at: SphericalPosition(
            azimuthDegrees: Double(position.azimuthDegrees), elevationDegrees: Double(position.elevationDegrees),
            distanceMetres: Double(position.distanceMetres)))
    }

    func bind(_ id: String, window: UInt32) {
        registry.bind(id, window: window)
        windows?.place(id)
    }

    func unbind(_ id: String) -> Bool { registry.unbind(id) }

    /// The window a scene sounds at, if any: its own (`x11:`), its binding, or its program's.
    func windowID(of sceneID: String) -> UInt32? {
        if let id = SceneID.x11WindowID(sceneID) { return id }
        if case .window(let id)? = registry.scenes[sceneID]?.anchor { return id }
        return registry.scenes[sceneID]?.window?.windowID
    }

    /// SCENE_LIST's entries, sorted by id.
    func listEntries() -> [SceneListEntry] {
        registry.sortedScenes.map { scene in
            let p = SphericalPosition(cartesian: scene.position)
            let anchor: SceneAnchor
            var window: UInt32 = 0
            switch scene.anchor {
            case .none: anchor = .none
            case .window(let id): anchor = .window; window = id
            case .position: anchor = .position
            case .process:
                // Following its program's window: a window anchor once the window is known.
                if let found = scene.window?.windowID { anchor = .window; window = found } else { anchor = .none }
            }
            return SceneListEntry(sceneID: scene.id, anchor: anchor, windowID: window,
                                  position: ScenePosition(azimuthDegrees: Float(p.azimuthDegrees),
                                                          elevationDegrees: Float(p.elevationDegrees),
                                                          distanceMetres: Float(p.distanceMetres)))
        }
    }
}
