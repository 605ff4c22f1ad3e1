/// Scene ids: UTF-8 strings of at most 255 bytes. `x11:0x<hex>` names an X11 window directly,
/// `wayland:<id>` a native Wayland window by its compositor's id (protocol/SPEC.md §7);
/// the empty id (allowed where a stream or sound is placed) means "no scene": the server looks
/// for the client's window by `_NET_WM_PID`, else plays straight ahead.
public enum SceneID {
    public static let x11Prefix = "x11:"
    public static let waylandPrefix = "wayland:"
    /// The longest compositor id a `wayland:` scene id carries.
    public static let maximumNativeIDBytes = 64
    /// Set in every native window's handle; X11 resource ids leave their top three bits clear.
    public static let nativeWindowHandleBit: UInt32 = 0x8000_0000

    /// The scene id that names X11 window `windowID`, e.g. `x11:0x3a00007`.
    public static func forX11Window(_ windowID: UInt32) -> String {
        x11Prefix + "0x" + String(windowID, radix: 16)
    }

    /// The window an `x11:` scene id names, or nil for any other id.
    /// Accepts `x11:0x` followed by 1–8 hex digits in either case, not 0.
    public static func x11WindowID(_ sceneID: String) -> UInt32? {
        let utf8 = sceneID.utf8
        let prefixLength = x11Prefix.utf8.count + 2
        guard utf8.count > prefixLength, utf8.count <= prefixLength + 8,
              utf8.starts(with: (x11Prefix + "0").utf8),
              let marker = utf8.dropFirst(prefixLength - 1).first, marker == UInt8(ascii: "x") || marker == UInt8(ascii: "X")
        else { return nil }
        var windowID: UInt32 = 0
        for byte in utf8.dropFirst(prefixLength) {
            guard let digit = hexDigitValue(byte) else { return nil }
            windowID = windowID << 4 | UInt32(digit)
        }
        return windowID == 0 ? nil : windowID  // 0 is X11's None, never a window
    }

    /// The scene id that names a native Wayland window by its compositor's id, e.g. `wayland:42`
    /// (sway's con id) or `wayland:0x55d0c3a4b2c0` (Hyprland's address).
    public static func forNativeWindow(_ compositorID: String) -> String {
        waylandPrefix + compositorID
    }

    /// The compositor's id a `wayland:` scene id names, or nil for any other id: 1–64 bytes of
    /// printable ASCII without spaces.
    public static func nativeWindowID(_ sceneID: String) -> String? {
        guard sceneID.utf8.starts(with: waylandPrefix.utf8) else { return nil }
        let id = sceneID.utf8.dropFirst(waylandPrefix.utf8.count)
        guard !id.isEmpty, id.count <= maximumNativeIDBytes,
              id.allSatisfy({ $0 > UInt8(ascii: " ") && $0 < 0x7F }) else { return nil }
        return String(decoding: id, as: UTF8.self)
    }

    /// The 32-bit handle that stands for a native window where the protocol carries a window id
    /// (`SCENE_BIND_WINDOW`, `status`): FNV-1a of the compositor's id, top bit set so that it is
    /// never an X11 window's id. Two windows of one session share a handle with odds of about
    /// n²/2³² (one in ten million for a hundred windows).
    public static func nativeWindowHandle(_ compositorID: String) -> UInt32 {
        var hash: UInt32 = 0x811c_9dc5
        for byte in compositorID.utf8 {
            hash = (hash ^ UInt32(byte)) &* 0x0100_0193
        }
        return hash | nativeWindowHandleBit
    }

    /// The window a window scene names: an `x11:` id's window, a `wayland:` id's handle; nil
    /// for any other id.
    public static func windowID(_ sceneID: String) -> UInt32? {
        if let x11 = x11WindowID(sceneID) { return x11 }
        return nativeWindowID(sceneID).map(nativeWindowHandle)
    }

    /// Names a window by itself (`x11:`, `wayland:`): cannot be bound, placed or unbound.
    public static func isWindowScene(_ sceneID: String) -> Bool { windowID(sceneID) != nil }

    private static func hexDigitValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Checks length, NUL, and that an id using a reserved prefix (`x11:`, `wayland:`) names a window.
    public static func validate(_ sceneID: String, field: String = "scene_id", allowEmpty: Bool) throws(ProtocolError) {
        try Check.shortString(sceneID, field, allowEmpty: allowEmpty)
        if sceneID.utf8.starts(with: x11Prefix.utf8), x11WindowID(sceneID) == nil {
            throw ProtocolError(.invalidArgument, "\(field) \"\(sceneID)\" uses the x11: prefix but is not x11:0x<hex>")
        }
        if sceneID.utf8.starts(with: waylandPrefix.utf8), nativeWindowID(sceneID) == nil {
            throw ProtocolError(.invalidArgument,
                                "\(field) \"\(sceneID)\" uses the wayland: prefix but is not wayland:<compositor id> (1-64 printable ASCII bytes, no spaces)")
        }
    }
}
