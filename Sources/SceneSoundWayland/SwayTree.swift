import Foundation
import SceneSoundProtocol
import SceneSoundWindows

/// sway's GET_TREE and GET_OUTPUTS replies turned into the window model: every view (an
/// `xdg_shell` or `xwayland` container) with its content rectangle in logical pixels, on
/// its output's visible workspace or not, in the scratchpad (sway's "minimized") or not.
enum SwayTree {
    /// One view as sway names it: the handle it has in the model, and its con id.
    struct View: Equatable {
        var windowID: UInt32
        var conID: Int
    }

    static func state(tree treeJSON: [UInt8], outputs outputsJSON: [UInt8]) throws(CompositorError) -> (CompositorState, [View]) {
        guard let tree = object(treeJSON) as? [String: Any] else { throw .malformed("GET_TREE is not a JSON object") }
        guard let outputs = object(outputsJSON) as? [[String: Any]] else { throw .malformed("GET_OUTPUTS is not a JSON array") }
        var monitors: [Monitor] = []
        for output in outputs where (output["active"] as? Bool) ?? true {
            guard let name = output["name"] as? String, let rect = rect(output["rect"]) else {
                throw .malformed("GET_OUTPUTS: an output without name or rect")
            }
            guard rect.widthPixels > 0, rect.heightPixels > 0 else { continue }
            let scale = (output["scale"] as? Double) ?? 1
            // sway reports no millimetres; 96 dpi of the output's own pixels.
            monitors.append(Monitor(name: name, rectPixels: rect,
                                    widthMillimetres: MonitorLayout.assumedMillimetres(logicalPixels: rect.widthPixels, scale: scale),
                                    heightMillimetres: MonitorLayout.assumedMillimetres(logicalPixels: rect.heightPixels, scale: scale),
                                    isPrimary: false, physicalSizeSource: .assumed96DPI))
        }
        CompositorState.markPrimary(&monitors)

        var walker = Walker()
        try walker.walk(tree, context: .init())
        // Tiled views beneath floating ones; each group in tree order.
        let ordered = walker.tiled + walker.floating
        var windows: [TrackedWindow] = []
        var views: [View] = []
        var active: UInt32?
        for (index, found) in ordered.enumerated() {
            var window = found.window
            window.stackingIndex = index
            windows.append(window)
            views.append(View(windowID: window.id, conID: found.conID))
            if found.focused { active = window.id }
        }
        return (CompositorState(windows: windows, monitors: monitors, activeWindowID: active), views)
    }

    private struct Found {
        var window: TrackedWindow
        var conID: Int
        var focused: Bool
    }

    private struct Context {
        var outputVisibleWorkspace: String?
        var workspace: String?
        var floating = false
    }

    private struct Walker {
        var tiled: [Found] = []
        var floating: [Found] = []

        mutating func walk(_ node: [String: Any], context: Context) throws(CompositorError) {
            var context = context
            switch node["type"] as? String {
            case "output": context.outputVisibleWorkspace = node["current_workspace"] as? String
            case "workspace": context.workspace = node["name"] as? String
            default: break
            }
            if node["shell"] is String {
                let found = try view(node, context: context)
                if context.floating { floating.append(found) } else { tiled.append(found) }
            }
            for (key, isFloating) in [("nodes", false), ("floating_nodes", true)] {
                guard let children = node[key] else { continue }
                guard let list = children as? [[String: Any]] else { throw .malformed("GET_TREE: '\(key)' is not a list of nodes") }
                var inner = context
                inner.floating = context.floating || isFloating
                for child in list { try walk(child, context: inner) }
            }
        }

        private func view(_ node: [String: Any], context: Context) throws(CompositorError) -> Found {
            guard let conID = node["id"] as? Int, let outer = SwayTree.rect(node["rect"]) else {
                throw .malformed("GET_TREE: a view without id or rect")
            }
            // `window_rect` is the content, relative to `rect` (which includes the border).
            let content = SwayTree.rect(node["window_rect"]).map {
                PixelRect(xPixels: outer.xPixels + $0.xPixels, yPixels: outer.yPixels + $0.yPixels,
                          widthPixels: $0.widthPixels, heightPixels: $0.heightPixels)
            } ?? outer
            let scratchpad = context.workspace == "__i3_scratch"
            let onVisibleWorkspace = scratchpad || context.workspace == nil || context.workspace == context.outputVisibleWorkspace
            let xWindow = (node["window"] as? Int).flatMap { $0 > 0 ? UInt32(exactly: $0) : nil }
            let nativeID = xWindow == nil ? String(conID) : nil
            let properties = node["window_properties"] as? [String: Any]
            let window = TrackedWindow(
                id: xWindow ?? SceneID.nativeWindowHandle(nativeID!), frameID: xWindow ?? SceneID.nativeWindowHandle(nativeID!),
                rectPixels: content, isViewable: (node["visible"] as? Bool) ?? true,
                isMinimized: scratchpad, isFullscreen: ((node["fullscreen_mode"] as? Int) ?? 0) != 0,
                demandsAttention: (node["urgent"] as? Bool) ?? false, desktop: nil, isOnCurrentDesktop: onVisibleWorkspace,
                pid: (node["pid"] as? Int).flatMap { Int32(exactly: $0) }, stackingIndex: 0,
                title: node["name"] as? String,
                applicationName: (node["app_id"] as? String) ?? (properties?["class"] as? String) ?? (properties?["instance"] as? String),
                nativeID: nativeID)
            return Found(window: window, conID: conID, focused: (node["focused"] as? Bool) ?? false)
        }
    }

    static func rect(_ value: Any?) -> PixelRect? {
        guard let rect = value as? [String: Any], let x = rect["x"] as? Int, let y = rect["y"] as? Int,
              let width = rect["width"] as? Int, let height = rect["height"] as? Int else { return nil }
        return PixelRect(xPixels: x, yPixels: y, widthPixels: width, heightPixels: height)
    }

    static func object(_ bytes: [UInt8]) -> Any? {
        try? JSONSerialization.jsonObject(with: Data(bytes))
    }
}
