import SceneSoundWindows
import CXCB
#if canImport(Glibc)
import Glibc
#endif

/// Thin, typed wrappers over the XCB requests the tracker sends. Each comes as a `send…`
/// returning the cookie and a matching reply reader, so callers can pipeline many requests
/// and pay one round trip. A nil reply means the request failed (usually: the window is gone).
extension XConnection {
    static let substructureAndPropertyMask =
        XCB_EVENT_MASK_SUBSTRUCTURE_NOTIFY.rawValue | XCB_EVENT_MASK_PROPERTY_CHANGE.rawValue
    /// Frames: their own changes, their children's (the client being reparented in or out,
    /// resized inside), and properties.
    static let frameMask = XCB_EVENT_MASK_STRUCTURE_NOTIFY.rawValue | substructureAndPropertyMask
    static let clientMask = XCB_EVENT_MASK_STRUCTURE_NOTIFY.rawValue | XCB_EVENT_MASK_PROPERTY_CHANGE.rawValue

    /// Unchecked: selecting on a window that has just been destroyed is harmless, its
    /// DestroyNotify follows.
    func selectInput(window: xcb_window_t, mask: UInt32) {
        var value = mask
        xcb_change_window_attributes(raw, window, XCB_CW_EVENT_MASK.rawValue, &value)
    }

    func selectRandRNotifications() {
        guard randrFirstEvent != nil else { return }
        let mask = XCB_RANDR_NOTIFY_MASK_SCREEN_CHANGE.rawValue | XCB_RANDR_NOTIFY_MASK_CRTC_CHANGE.rawValue
            | XCB_RANDR_NOTIFY_MASK_OUTPUT_CHANGE.rawValue
        xcb_randr_select_input(raw, root, UInt16(mask))
    }

    // MARK: Properties

    struct Property {
        /// XCB_ATOM_NONE when the window exists but has no such property.
        var type: xcb_atom_t
        /// The value as 32-bit items (CARDINAL, ATOM, WINDOW); empty for other formats.
        var values32: [UInt32]
        /// The value as bytes (STRING, UTF8_STRING, WM_CLASS); empty for other formats.
        var bytes: [UInt8] = []
        var exists: Bool { type != 0 }

        /// Text of a string property: UTF-8 (`UTF8_STRING`, and ASCII, the usual `STRING`),
        /// else Latin-1 (ICCCM's `STRING`). Items split at NULs (WM_CLASS holds two).
        var strings: [String] {
            bytes.split(separator: 0, omittingEmptySubsequences: false).map { part in
                String(validating: part, as: UTF8.self) ?? String(part.map { Character(Unicode.Scalar($0)) })
            }
        }
    }

    func sendGetProperty(_ window: xcb_window_t, _ atom: xcb_atom_t, maximumItems: UInt32 = 64) -> xcb_get_property_cookie_t {
        xcb_get_property(raw, 0, window, atom, XCB_ATOM_ANY.rawValue, 0, maximumItems)
    }

    func property(_ cookie: xcb_get_property_cookie_t) -> Property? {
        var error: UnsafeMutablePointer<xcb_generic_error_t>?
        let reply = xcb_get_property_reply(raw, cookie, &error)
        free(error)
        guard let reply else { return nil }
        defer { free(reply) }
        var values: [UInt32] = []
        if reply.pointee.format == 32, let bytes = xcb_get_property_value(reply) {
            let count = Int(xcb_get_property_value_length(reply)) / 4
            values = Array(UnsafeBufferPointer(start: bytes.assumingMemoryBound(to: UInt32.self), count: count))
        }
        var text: [UInt8] = []
        if reply.pointee.format == 8, let bytes = xcb_get_property_value(reply) {
            let count = Int(xcb_get_property_value_length(reply))
            text = Array(UnsafeBufferPointer(start: bytes.assumingMemoryBound(to: UInt8.self), count: count))
        }
        return Property(type: reply.pointee.type, values32: values, bytes: text)
    }

    // MARK: Geometry

    func sendTranslateToRoot(_ window: xcb_window_t) -> xcb_translate_coordinates_cookie_t {
        xcb_translate_coordinates(raw, window, root, 0, 0)
    }

    /// The window's origin (inside its border) in root coordinates.
    func rootOrigin(_ cookie: xcb_translate_coordinates_cookie_t) -> (x: Int, y: Int)? {
        var error: UnsafeMutablePointer<xcb_generic_error_t>?
        let reply = xcb_translate_coordinates_reply(raw, cookie, &error)
        free(error)
        guard let reply else { return nil }
        defer { free(reply) }
        return (Int(reply.pointee.dst_x), Int(reply.pointee.dst_y))
    }

    func sendGetGeometry(_ window: xcb_window_t) -> xcb_get_geometry_cookie_t {
        xcb_get_geometry(raw, window)
    }

    func size(_ cookie: xcb_get_geometry_cookie_t) -> (widthPixels: Int, heightPixels: Int)? {
        var error: UnsafeMutablePointer<xcb_generic_error_t>?
        let reply = xcb_get_geometry_reply(raw, cookie, &error)
        free(error)
        guard let reply else { return nil }
        defer { free(reply) }
        return (Int(reply.pointee.width), Int(reply.pointee.height))
    }

    struct Attributes {
        var isViewable: Bool
        var overrideRedirect: Bool
        var isInputOnly: Bool
    }

    func sendGetAttributes(_ window: xcb_window_t) -> xcb_get_window_attributes_cookie_t {
        xcb_get_window_attributes(raw, window)
    }

    func attributes(_ cookie: xcb_get_window_attributes_cookie_t) -> Attributes? {
        var error: UnsafeMutablePointer<xcb_generic_error_t>?
        let reply = xcb_get_window_attributes_reply(raw, cookie, &error)
        free(error)
        guard let reply else { return nil }
        defer { free(reply) }
        return Attributes(
            isViewable: UInt32(reply.pointee.map_state) == XCB_MAP_STATE_VIEWABLE.rawValue,
            overrideRedirect: reply.pointee.override_redirect != 0,
            isInputOnly: UInt32(reply.pointee._class) == XCB_WINDOW_CLASS_INPUT_ONLY.rawValue)
    }

    // MARK: Tree and focus

    /// Children bottom to top, and the parent; nil if the window is gone.
    func queryTree(_ window: xcb_window_t) -> (parent: xcb_window_t, children: [xcb_window_t])? {
        var error: UnsafeMutablePointer<xcb_generic_error_t>?
        let reply = xcb_query_tree_reply(raw, xcb_query_tree(raw, window), &error)
        free(error)
        guard let reply else { return nil }
        defer { free(reply) }
        let count = Int(xcb_query_tree_children_length(reply))
        let children = count > 0 ? Array(UnsafeBufferPointer(start: xcb_query_tree_children(reply), count: count)) : []
        return (reply.pointee.parent, children)
    }

    func inputFocus() -> xcb_window_t? {
        guard let reply = xcb_get_input_focus_reply(raw, xcb_get_input_focus(raw), nil) else { return nil }
        defer { free(reply) }
        return reply.pointee.focus
    }
}
