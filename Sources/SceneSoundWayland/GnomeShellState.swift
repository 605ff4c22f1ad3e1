import Foundation
import SceneSoundProtocol
import SceneSoundWindows

/// The JSON of SceneSound's GNOME Shell extension (`org.scenesound.Windows1.GetState`, described
/// in docs/GNOME-EXTENSION.md) turned into the window model. Rectangles are Mutter's stage
/// pixels, logical or physical as `layoutPixels` says; a native window's scene id is
/// `wayland:<Mutter's window id>`, an XWayland window keeps its X11 id (so its `x11:` scene works,
/// with the Shell's geometry). Desktop and dock windows are not windows a sound belongs to.
enum GnomeShellState {
    static func state(json: [UInt8]) throws(CompositorError) -> CompositorState {
        guard let root = SwayTree.object(json) as? [String: Any] else { throw .malformed("GetState: not a JSON object") }
        guard let monitorList = root["monitors"] as? [[String: Any]], let windowList = root["windows"] as? [[String: Any]] else {
            throw .malformed("GetState: no monitors or windows array")
        }
        let logical = (root["layoutPixels"] as? String) == "logical"

        var monitors: [Monitor] = []
        for entry in monitorList {
            guard let index = entry["index"] as? Int, let rect = rect(entry) else {
                throw .malformed("GetState: a monitor without index, xPixels, yPixels, widthPixels or heightPixels")
            }
            guard rect.widthPixels > 0, rect.heightPixels > 0 else { continue }
            let scale = max((entry["scale"] as? Double) ?? 1, 0.1)
            // 96 dpi of device pixels: in a logical layout each pixel here is `scale` of them.
            let devicePixelsPerPixel = logical ? scale : 1
            monitors.append(Monitor(name: "monitor-\(index)", rectPixels: rect,
                                    widthMillimetres: MonitorLayout.assumedMillimetres(logicalPixels: rect.widthPixels, scale: devicePixelsPerPixel),
                                    heightMillimetres: MonitorLayout.assumedMillimetres(logicalPixels: rect.heightPixels, scale: devicePixelsPerPixel),
                                    isPrimary: (entry["primary"] as? Bool) ?? false, physicalSizeSource: .assumed96DPI))
        }
        if monitors.filter(\.isPrimary).count != 1 { CompositorState.markPrimary(&monitors) }

        var windows: [TrackedWindow] = []
        var idsByShellID: [Int: UInt32] = [:]
        for entry in windowList {
            guard let shellID = entry["id"] as? Int, let rect = rect(entry) else {
                throw .malformed("GetState: a window without id, xPixels, yPixels, widthPixels or heightPixels")
            }
            let type = entry["windowType"] as? String
            if type == "desktop" || type == "dock" { continue }
            let x11ID = (entry["clientType"] as? String) == "x11" ? (entry["x11WindowId"] as? Int).flatMap(UInt32.init(exactly:)) : nil
            let nativeID: String? = x11ID == nil ? String(shellID) : nil
            let id = x11ID ?? SceneID.nativeWindowHandle(String(shellID))
            let minimized = (entry["minimized"] as? Bool) ?? false
            let onActiveWorkspace = (entry["onActiveWorkspace"] as? Bool) ?? true
            let workspace = entry["workspace"] as? Int
            idsByShellID[shellID] = id
            windows.append(TrackedWindow(
                id: id, frameID: id, rectPixels: rect, isViewable: onActiveWorkspace && !minimized, isMinimized: minimized,
                isFullscreen: (entry["fullscreen"] as? Bool) ?? false, demandsAttention: false,
                desktop: workspace.map { $0 < 0 ? TrackedWindow.allDesktops : UInt32(clamping: $0) },
                isOnCurrentDesktop: onActiveWorkspace, pid: (entry["pid"] as? Int).flatMap { $0 > 0 ? Int32(exactly: $0) : nil },
                stackingIndex: windows.count, title: entry["title"] as? String,
                applicationName: entry["appId"] as? String, nativeID: nativeID))
        }
        let active = (root["focusedWindowId"] as? Int).flatMap { idsByShellID[$0] }
        return CompositorState(windows: windows, monitors: monitors, activeWindowID: active)
    }

    private static func rect(_ entry: [String: Any]) -> PixelRect? {
        guard let x = entry["xPixels"] as? Int, let y = entry["yPixels"] as? Int,
              let width = entry["widthPixels"] as? Int, let height = entry["heightPixels"] as? Int else { return nil }
        return PixelRect(xPixels: x, yPixels: y, widthPixels: width, heightPixels: height)
    }
}
