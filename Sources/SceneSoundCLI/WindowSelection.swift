import ArgumentParser
import Foundation
import SceneSoundClient
import SceneSoundProtocol

/// `--window XID|wayland:ID|active`: an X11 top-level window, named by its id (hex `0x3a00007`
/// as xwininfo prints it, or decimal as xdotool does), a native Wayland window by its
/// compositor's id (`wayland:42`, sway's con id), or the active window.
enum WindowSelection: ExpressibleByArgument, Equatable {
    case id(UInt32)
    case native(String)
    case active

    init?(argument: String) {
        if argument == "active" { self = .active; return }
        if let native = SceneID.nativeWindowID(argument) { self = .native(native); return }
        guard let windowID = WindowIDText.parse(argument), windowID != 0 else { return nil }
        self = .id(windowID)
    }

    static var defaultCompletionKind: CompletionKind { .default }

    /// The window's id; `active` is `_NET_ACTIVE_WINDOW` as the server's window tracker sees it.
    func resolveWindowID(server: ServerOptions) throws -> UInt32 {
        switch self {
        case .id(let windowID): return windowID
        case .native(let native): return SceneID.nativeWindowHandle(native)
        case .active:
            let connection = try server.connect()
            defer { connection.close() }
            let display = try connection.statusDocument().display
            guard let active = display.activeWindow, let id = WindowIDText.parse(active) else {
                throw RuntimeError(display.connected
                    ? "there is no active window on the server's display; pass --window XID"
                    : "the server follows no X display (started with --display none?); pass --window XID")
            }
            return id
        }
    }

    /// The scene that names the window directly: `x11:0x<hex>`, `wayland:<id>`.
    func sceneID(server: ServerOptions) throws -> String {
        switch self {
        case .native(let native): return SceneID.forNativeWindow(native)
        case .id(let windowID): return SceneID.forX11Window(windowID)
        case .active:
            let connection = try server.connect()
            defer { connection.close() }
            let display = try connection.statusDocument().display
            if let scene = display.activeWindowScene { return scene }
            return SceneID.forX11Window(try resolveWindowID(server: server))
        }
    }
}

/// A window id as xwininfo (hex, "0x3a00007") or xdotool (decimal) prints it.
enum WindowIDText {
    static func parse(_ text: String) -> UInt32? {
        text.lowercased().hasPrefix("0x") ? UInt32(text.dropFirst(2), radix: 16) : UInt32(text)
    }
}
