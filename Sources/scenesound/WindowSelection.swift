import ArgumentParser
import SceneSoundProtocol

/// `--window XID|active`: an X11 top-level window, named by its id (hex `0x3a00007` as
/// xwininfo prints it, or decimal as xdotool does), or the active window.
enum WindowSelection: ExpressibleByArgument, Equatable {
    case id(UInt32)
    case active

    init?(argument: String) {
        if argument == "active" { self = .active; return }
        let parsed = argument.lowercased().hasPrefix("0x")
            ? UInt32(argument.dropFirst(2), radix: 16)
            : UInt32(argument, radix: 10)
        guard let windowID = parsed, windowID != 0 else { return nil }
        self = .id(windowID)
    }

    static var defaultCompletionKind: CompletionKind { .default }

    /// The window's id. `active` needs the X11 support, which is not built yet.
    func resolveWindowID() throws -> UInt32 {
        switch self {
        case .id(let windowID): return windowID
        case .active:
            throw RuntimeError("--window active is not supported yet; pass the window id instead (e.g. --window 0x3a00007 from xwininfo)")
        }
    }

    /// The scene that names the window directly: `x11:0x<hex>`.
    func sceneID() throws -> String {
        SceneID.forX11Window(try resolveWindowID())
    }
}
