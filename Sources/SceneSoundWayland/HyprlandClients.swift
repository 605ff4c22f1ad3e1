import Foundation
import SceneSoundProtocol
import SceneSoundWindows

/// Hyprland's `j/clients`, `j/monitors` and `j/activewindow` replies turned into the window
/// model: `at` and `size` are global logical pixels; a monitor's `width` and `height` are its
/// mode's pixels, `scale` of them to a logical pixel. A window on a workspace no monitor shows
/// is on another desktop; one on a special workspace (Hyprland's scratchpad, id < 0) that is not
/// shown is minimized.
enum HyprlandClients {
    static func state(clients clientsJSON: [UInt8], monitors monitorsJSON: [UInt8],
                      activeWindow activeJSON: [UInt8]) throws(CompositorError) -> CompositorState {
        guard let clients = SwayTree.object(clientsJSON) as? [[String: Any]] else { throw .malformed("j/clients is not a JSON array") }
        guard let monitorList = SwayTree.object(monitorsJSON) as? [[String: Any]] else { throw .malformed("j/monitors is not a JSON array") }
        guard let active = SwayTree.object(activeJSON) as? [String: Any] else { throw .malformed("j/activewindow is not a JSON object") }

        var monitors: [Monitor] = []
        var shownWorkspaces: Set<Int> = []
        for monitor in monitorList where !((monitor["disabled"] as? Bool) ?? false) {
            guard let name = monitor["name"] as? String, let x = monitor["x"] as? Int, let y = monitor["y"] as? Int,
                  let width = monitor["width"] as? Int, let height = monitor["height"] as? Int else {
                throw .malformed("j/monitors: a monitor without name, x, y, width or height")
            }
            let scale = max((monitor["scale"] as? Double) ?? 1, 0.1)
            // Transforms 1, 3, 5 and 7 turn the output a quarter: its logical width is the mode's height.
            let turned = ((monitor["transform"] as? Int) ?? 0) % 2 == 1
            let logicalWidth = Int((Double(turned ? height : width) / scale).rounded())
            let logicalHeight = Int((Double(turned ? width : height) / scale).rounded())
            guard logicalWidth > 0, logicalHeight > 0 else { continue }
            monitors.append(Monitor(name: name, rectPixels: PixelRect(xPixels: x, yPixels: y, widthPixels: logicalWidth, heightPixels: logicalHeight),
                                    widthMillimetres: MonitorLayout.assumedMillimetres(logicalPixels: logicalWidth, scale: scale),
                                    heightMillimetres: MonitorLayout.assumedMillimetres(logicalPixels: logicalHeight, scale: scale),
                                    isPrimary: false, physicalSizeSource: .assumed96DPI))
            for key in ["activeWorkspace", "specialWorkspace"] {
                if let id = (monitor[key] as? [String: Any])?["id"] as? Int, id != 0 { shownWorkspaces.insert(id) }
            }
        }
        CompositorState.markPrimary(&monitors)

        struct Found { var window: TrackedWindow; var floating: Bool; var focusHistory: Int }
        var found: [Found] = []
        for client in clients where (client["mapped"] as? Bool) ?? true {
            guard let address = client["address"] as? String, SceneID.nativeWindowID(SceneID.forNativeWindow(address)) != nil,
                  let at = client["at"] as? [Int], at.count == 2, let size = client["size"] as? [Int], size.count == 2 else {
                throw .malformed("j/clients: a window without address, at or size")
            }
            let workspace = ((client["workspace"] as? [String: Any])?["id"] as? Int) ?? 0
            let shown = shownWorkspaces.contains(workspace)
            let special = workspace < 0
            let fullscreen = (client["fullscreen"] as? Int).map { $0 != 0 } ?? ((client["fullscreen"] as? Bool) ?? false)
            let handle = SceneID.nativeWindowHandle(address)
            let window = TrackedWindow(
                id: handle, frameID: handle,
                rectPixels: PixelRect(xPixels: at[0], yPixels: at[1], widthPixels: size[0], heightPixels: size[1]),
                isViewable: shown && !((client["hidden"] as? Bool) ?? false),
                isMinimized: special && !shown, isFullscreen: fullscreen, demandsAttention: false, desktop: nil,
                isOnCurrentDesktop: shown || special, pid: (client["pid"] as? Int).flatMap { $0 > 0 ? Int32(exactly: $0) : nil },
                stackingIndex: 0, title: client["title"] as? String,
                applicationName: (client["class"] as? String).flatMap { $0.isEmpty ? nil : $0 } ?? (client["initialClass"] as? String),
                nativeID: address)
            found.append(Found(window: window, floating: (client["floating"] as? Bool) ?? false,
                               focusHistory: (client["focusHistoryID"] as? Int) ?? Int.max))
        }
        // Tiled beneath floating; within each, the most recently focused on top.
        found.sort { ($0.floating ? 1 : 0, -$0.focusHistory) < ($1.floating ? 1 : 0, -$1.focusHistory) }
        let windows = found.enumerated().map { index, entry in
            var window = entry.window
            window.stackingIndex = index
            return window
        }
        let activeID = (active["address"] as? String).map(SceneID.nativeWindowHandle).flatMap { id in
            windows.contains { $0.id == id } ? id : nil
        }
        return CompositorState(windows: windows, monitors: monitors, activeWindowID: activeID)
    }
}
