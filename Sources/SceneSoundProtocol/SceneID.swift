/// Scene ids: UTF-8 strings of at most 255 bytes. `x11:0x<hex>` names an X11 window directly;
/// the empty id (allowed where a stream or sound is placed) means "no scene": the server looks
/// for the client's window by `_NET_WM_PID`, else plays straight ahead.
public enum SceneID {
    public static let x11Prefix = "x11:"

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

    private static func hexDigitValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Checks length, NUL, and that an id using the reserved `x11:` prefix names a window.
    public static func validate(_ sceneID: String, field: String = "scene_id", allowEmpty: Bool) throws(ProtocolError) {
        try Check.shortString(sceneID, field, allowEmpty: allowEmpty)
        if sceneID.utf8.starts(with: x11Prefix.utf8), x11WindowID(sceneID) == nil {
            throw ProtocolError(.invalidArgument, "\(field) \"\(sceneID)\" uses the x11: prefix but is not x11:0x<hex>")
        }
    }
}
