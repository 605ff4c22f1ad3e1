/// `x11:0x<hex>` scene ids (docs/ARCHITECTURE.md "Conventions"), in one place so the server, the CLI and the
/// tracker spell them the same way.
public enum X11SceneID {
    public static let prefix = "x11:"

    public static func string(for windowID: UInt32) -> String {
        prefix + "0x" + String(windowID, radix: 16)
    }

    /// The window id of an `x11:0x…` scene id (hex, any case), nil for other ids.
    public static func windowID(of sceneID: String) -> UInt32? {
        guard sceneID.hasPrefix(prefix) else { return nil }
        return parseWindowID(String(sceneID.dropFirst(prefix.count)))
    }

    /// A window id as users type it: `0x1a00003` (xwininfo, xdotool) or decimal (xdotool search).
    public static func parseWindowID(_ text: String) -> UInt32? {
        let lowered = text.lowercased()
        if lowered.hasPrefix("0x") { return UInt32(lowered.dropFirst(2), radix: 16) }
        return UInt32(lowered)
    }
}
