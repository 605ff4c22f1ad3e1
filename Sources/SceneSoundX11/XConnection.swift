import SceneSoundWindows
import CXCB
#if canImport(Glibc)
import Glibc
#endif

/// One XCB connection and what its setup says about the chosen screen. Used only
/// from the tracker thread; every X request of the module goes through this type and its
/// extensions, so the rest of the module never touches a C pointer.
final class XConnection {
    let raw: OpaquePointer
    let root: xcb_window_t
    /// Pixels as of connection setup (RandR resizes show up in the monitor list instead).
    let coreScreen: MonitorLayout.CoreScreen
    /// RandR's first event code, when the server has RandR ≥ 1.5 (GetMonitors).
    let randrFirstEvent: UInt8?
    private(set) var atoms: XAtoms!

    /// Connects to `displayName` (nil: $DISPLAY). Nil when there is no server to talk to.
    init?(displayName: String?) {
        var screenNumber: Int32 = 0
        let connection: OpaquePointer? = displayName.map { xcb_connect($0, &screenNumber) } ?? xcb_connect(nil, &screenNumber)
        guard let connection else { return nil }
        guard xcb_connection_has_error(connection) == 0 else {
            xcb_disconnect(connection)
            return nil
        }
        var iterator = xcb_setup_roots_iterator(xcb_get_setup(connection))
        var remaining = screenNumber
        while remaining > 0 && iterator.rem > 0 {
            xcb_screen_next(&iterator)
            remaining -= 1
        }
        guard let screen = iterator.data?.pointee else {
            xcb_disconnect(connection)
            return nil
        }
        raw = connection
        root = screen.root
        coreScreen = MonitorLayout.CoreScreen(
            widthPixels: Int(screen.width_in_pixels), heightPixels: Int(screen.height_in_pixels),
            widthMillimetres: Int(screen.width_in_millimeters), heightMillimetres: Int(screen.height_in_millimeters))
        randrFirstEvent = XConnection.randrEventBase(connection)
        atoms = XAtoms(connection: self)
    }

    deinit { xcb_disconnect(raw) }

    var fileDescriptor: Int32 { xcb_get_file_descriptor(raw) }

    /// Once set, the connection is dead for good (server gone, protocol error): reconnect.
    var hasFailed: Bool { xcb_connection_has_error(raw) != 0 }

    func flush() { _ = xcb_flush(raw) }

    /// The next event already received or readable without blocking; errors of requests sent
    /// unchecked (a window destroyed under our feet) arrive here too and are dropped.
    func pollEvent() -> XEvent? {
        guard let event = xcb_poll_for_event(raw) else { return nil }
        defer { free(event) }
        return XEvent(event, root: root, randrFirstEvent: randrFirstEvent)
    }

    private static func randrEventBase(_ connection: OpaquePointer) -> UInt8? {
        guard let data = xcb_get_extension_data(connection, cxcb_randr_extension()), data.pointee.present != 0 else {
            return nil
        }
        let cookie = xcb_randr_query_version(connection, 1, 5)
        guard let version = xcb_randr_query_version_reply(connection, cookie, nil) else { return nil }
        defer { free(version) }
        guard version.pointee.major_version > 1 || version.pointee.minor_version >= 5 else { return nil }
        return data.pointee.first_event
    }
}
