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

    /// The engine slot for a sound about to play at scene `id`, counted as one more stream
    /// there until `EngineStreams` lets go of it. With windows tracked, "no scene" and a name the
    /// program never bound follow the program's own window (`_NET_WM_PID`). nil when every slot
    /// is taken.
    func acquire(_ id: String, peerPID: Int32) -> Int? {
        let sceneID = resolved(id, peerPID: peerPID)
        guard let index = registry.acquire(sceneID) else { return nil }
        if windows != nil { registry.adoptForProcess(sceneID, pid: peerPID) }
        windows?.place(sceneID)
        return index
    }

    /// `acquire` for a client's request: a named scene that cannot have a slot is refused;
    /// "no scene" then plays straight ahead, as it does without windows.
    func acquireForRequest(_ id: String, peerPID: Int32) throws(ProtocolError) -> Int {
        if let index = acquire(id, peerPID: peerPID) { return index }
        if id.isEmpty { return 0 }
        throw slotsExhausted(id)
    }

    private func slotsExhausted(_ id: String) -> ProtocolError {
        ProtocolError(.limitExceeded, "scene '\(id)': \(registry.exhaustedMessage)")
    }

    /// The scene a client means: "no scene" is its program's own, once windows are tracked.
    func resolved(_ id: String, peerPID: Int32) -> String {
        guard windows != nil, peerPID > 0, id.isEmpty else { return id }
        return SceneRegistry.processSceneID(pid: peerPID)
    }

    func place(_ id: String, at position: ScenePosition) throws(ProtocolError) {
        let placed = registry.place(id, at: SphericalPosition(
            azimuthDegrees: Double(position.azimuthDegrees), elevationDegrees: Double(position.elevationDegrees),
            distanceMetres: Double(position.distanceMetres)))
        guard placed else { throw slotsExhausted(id) }
    }

    func bind(_ id: String, window: UInt32) throws(ProtocolError) {
        guard registry.bind(id, window: window) else { throw slotsExhausted(id) }
        windows?.place(id)
    }

    func unbind(_ id: String) -> Bool { registry.unbind(id) }

    /// The window a scene sounds at, if any: its own (`x11:`, `wayland:`), its binding, or its program's.
    func windowID(of sceneID: String) -> UInt32? {
        if let id = SceneID.windowID(sceneID) { return id }
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
