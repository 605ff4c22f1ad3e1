import SceneSoundWindows
import CXCB

/// The X events the tracker acts on, decoded from XCB's wire structs. `event` is the window
/// whose selection delivered it (the root, a frame, or the window itself), `window` the one
/// it is about.
enum XEvent: Equatable {
    case created(window: xcb_window_t, parent: xcb_window_t, overrideRedirect: Bool)
    case destroyed(event: xcb_window_t, window: xcb_window_t)
    case mapped(event: xcb_window_t, window: xcb_window_t)
    case unmapped(event: xcb_window_t, window: xcb_window_t)
    case reparented(event: xcb_window_t, window: xcb_window_t, parent: xcb_window_t, overrideRedirect: Bool)
    case configured(event: xcb_window_t, window: xcb_window_t, aboveSibling: xcb_window_t)
    case circulated(event: xcb_window_t, window: xcb_window_t)
    case propertyChanged(window: xcb_window_t, atom: xcb_atom_t)
    /// Any RandR notification: screen size, CRTC or output changed.
    case randrChanged
    /// Errors of unchecked requests and events the tracker does not use.
    case ignored

    init(_ generic: UnsafeMutablePointer<xcb_generic_event_t>, root: xcb_window_t, randrFirstEvent: UInt8?) {
        // The top bit marks events sent with SendEvent (e.g. ICCCM's synthetic ConfigureNotify);
        // they describe the same change, so they are treated alike.
        let code = generic.pointee.response_type & 0x7F
        let raw = UnsafeRawPointer(generic)
        switch Int32(code) {
        case XCB_CREATE_NOTIFY:
            let e = raw.load(as: xcb_create_notify_event_t.self)
            self = .created(window: e.window, parent: e.parent, overrideRedirect: e.override_redirect != 0)
        case XCB_DESTROY_NOTIFY:
            let e = raw.load(as: xcb_destroy_notify_event_t.self)
            self = .destroyed(event: e.event, window: e.window)
        case XCB_MAP_NOTIFY:
            let e = raw.load(as: xcb_map_notify_event_t.self)
            self = .mapped(event: e.event, window: e.window)
        case XCB_UNMAP_NOTIFY:
            let e = raw.load(as: xcb_unmap_notify_event_t.self)
            self = .unmapped(event: e.event, window: e.window)
        case XCB_REPARENT_NOTIFY:
            let e = raw.load(as: xcb_reparent_notify_event_t.self)
            self = .reparented(event: e.event, window: e.window, parent: e.parent,
                               overrideRedirect: e.override_redirect != 0)
        case XCB_CONFIGURE_NOTIFY:
            let e = raw.load(as: xcb_configure_notify_event_t.self)
            self = .configured(event: e.event, window: e.window, aboveSibling: e.above_sibling)
        case XCB_CIRCULATE_NOTIFY:
            let e = raw.load(as: xcb_circulate_notify_event_t.self)
            self = .circulated(event: e.event, window: e.window)
        case XCB_PROPERTY_NOTIFY:
            let e = raw.load(as: xcb_property_notify_event_t.self)
            self = .propertyChanged(window: e.window, atom: e.atom)
        default:
            if let base = randrFirstEvent, code == base || code == base &+ 1 {
                self = .randrChanged
            } else {
                self = .ignored
            }
        }
    }
}
