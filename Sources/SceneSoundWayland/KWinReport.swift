import Foundation
import SceneSoundProtocol
import SceneSoundWindows

/// The JSON document SceneSound's KWin script (share/kwin/scenesound.js) sends on every change,
/// turned into the window model: windows in KWin's logical pixels with pid, app id, caption,
/// minimized and desktop/activity; outputs with their geometry (and scale, from Plasma 6); the
/// active window. A native window is named by KWin's `internalId` (a UUID, braces dropped:
/// `wayland:e0b9fe21-…`); an XWayland window by its X11 id, so its `x11:` scene still works.
enum KWinReport {
    static func state(json: String) throws(CompositorError) -> CompositorState {
        guard let document = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] else {
            throw .malformed("KWin's report is not a JSON object")
        }
        guard (document["version"] as? Int) == 1 else { throw .malformed("KWin's report has no 'version' 1") }
        guard let windowList = document["windows"] as? [[String: Any]] else { throw .malformed("KWin's report: 'windows' is not a list of objects") }
        guard let outputList = document["outputs"] as? [[String: Any]], !outputList.isEmpty else {
            throw .malformed("KWin's report: 'outputs' is not a non-empty list of objects")
        }

        var monitors: [Monitor] = []
        for output in outputList {
            guard let name = output["name"] as? String, let rect = rect(output) else {
                throw .malformed("KWin's report: an output without name, x, y, width or height")
            }
            guard rect.widthPixels > 0, rect.heightPixels > 0 else { continue }
            let scale = (output["scale"] as? Double).flatMap { $0.isFinite && $0 > 0 ? $0 : nil } ?? 1
            monitors.append(Monitor(name: name, rectPixels: rect,
                                    widthMillimetres: MonitorLayout.assumedMillimetres(logicalPixels: rect.widthPixels, scale: scale),
                                    heightMillimetres: MonitorLayout.assumedMillimetres(logicalPixels: rect.heightPixels, scale: scale),
                                    isPrimary: false, physicalSizeSource: .assumed96DPI))
        }
        guard !monitors.isEmpty else { throw .malformed("KWin's report: no output with a size") }
        CompositorState.markPrimary(&monitors)

        var found: [(window: TrackedWindow, uuid: String, stacking: Int)] = []
        for entry in windowList {
            guard let uuid = entry["id"] as? String, SceneID.nativeWindowID(SceneID.forNativeWindow(uuid)) == uuid else {
                throw .malformed("KWin's report: a window without a valid 'id' (1–64 printable ASCII bytes)")
            }
            guard let rect = rect(entry) else { throw .malformed("KWin's report: window \(uuid) has no x, y, width and height") }
            let xWindow = (entry["windowId"] as? Int).flatMap { $0 > 0 ? UInt32(exactly: $0) : nil }
            let nativeID = xWindow == nil ? uuid : nil
            let handle = xWindow ?? SceneID.nativeWindowHandle(uuid)
            let appID = (entry["appId"] as? String).flatMap { $0.isEmpty ? nil : $0 }
                ?? (entry["resourceClass"] as? String).flatMap { $0.isEmpty ? nil : $0 }
            let onDesktop = (entry["onCurrentDesktop"] as? Bool) ?? true
            let onActivity = (entry["onCurrentActivity"] as? Bool) ?? true
            let window = TrackedWindow(
                id: handle, frameID: handle, rectPixels: rect,
                isViewable: !((entry["hidden"] as? Bool) ?? false),
                isMinimized: (entry["minimized"] as? Bool) ?? false,
                isFullscreen: (entry["fullScreen"] as? Bool) ?? false,
                demandsAttention: (entry["demandsAttention"] as? Bool) ?? false,
                desktop: (entry["desktop"] as? Int).flatMap { UInt32(exactly: $0) } ?? TrackedWindow.allDesktops,
                isOnCurrentDesktop: onDesktop && onActivity,
                pid: (entry["pid"] as? Int).flatMap { $0 > 0 ? Int32(exactly: $0) : nil },
                stackingIndex: 0, title: entry["caption"] as? String, applicationName: appID, nativeID: nativeID)
            found.append((window, uuid, (entry["stackingOrder"] as? Int) ?? 0))
        }
        // Bottom to top, as the model wants; KWin's stacking order says which is which.
        found.sort { $0.stacking < $1.stacking }
        var windows: [TrackedWindow] = []
        for (index, item) in found.enumerated() {
            var window = item.window
            window.stackingIndex = index
            windows.append(window)
        }
        let activeUUID = document["active"] as? String
        let active = activeUUID.flatMap { uuid in found.first { $0.uuid == uuid }?.window.id }
        return CompositorState(windows: windows, monitors: monitors, activeWindowID: active)
    }

    /// x, y, width, height (KWin's are real numbers: rounded to whole logical pixels).
    private static func rect(_ object: [String: Any]) -> PixelRect? {
        var values: [Int] = []
        for key in ["x", "y", "width", "height"] {
            guard let number = object[key] as? Double, number.isFinite, abs(number) < 1e6 else { return nil }
            values.append(Int(number.rounded()))
        }
        return PixelRect(xPixels: values[0], yPixels: values[1], widthPixels: values[2], heightPixels: values[3])
    }
}
