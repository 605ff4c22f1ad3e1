import SceneSoundWindows
import CXCB
#if canImport(Glibc)
import Glibc
#endif

/// The atoms the tracker reads and writes, interned once per connection (all requests sent
/// before the first reply is awaited: one round trip, not twenty).
struct XAtoms {
    let wmState: xcb_atom_t
    let wmClass: xcb_atom_t
    let wmChangeState: xcb_atom_t
    let netWMState: xcb_atom_t
    let netWMStateHidden: xcb_atom_t
    let netWMStateFullscreen: xcb_atom_t
    let netWMStateDemandsAttention: xcb_atom_t
    let netWMDesktop: xcb_atom_t
    let netWMPID: xcb_atom_t
    let netCurrentDesktop: xcb_atom_t
    let netActiveWindow: xcb_atom_t
    let netClientListStacking: xcb_atom_t
    let netSupportingWMCheck: xcb_atom_t
    /// Window titles: `_NET_WM_NAME` (UTF-8, set by current toolkits), else ICCCM `WM_NAME`.
    let netWMName: xcb_atom_t
    let wmName: xcb_atom_t

    init(connection: XConnection) {
        let names = [
            "WM_STATE", "WM_CLASS", "WM_CHANGE_STATE", "_NET_WM_STATE", "_NET_WM_STATE_HIDDEN",
            "_NET_WM_STATE_FULLSCREEN", "_NET_WM_STATE_DEMANDS_ATTENTION", "_NET_WM_DESKTOP", "_NET_WM_PID",
            "_NET_CURRENT_DESKTOP", "_NET_ACTIVE_WINDOW", "_NET_CLIENT_LIST_STACKING", "_NET_SUPPORTING_WM_CHECK",
            "_NET_WM_NAME", "WM_NAME",
        ]
        let cookies = names.map { name in
            name.withCString { xcb_intern_atom(connection.raw, 0, UInt16(strlen($0)), $0) }
        }
        let values: [xcb_atom_t] = cookies.map { cookie in
            guard let reply = xcb_intern_atom_reply(connection.raw, cookie, nil) else { return 0 }
            defer { free(reply) }
            return reply.pointee.atom
        }
        wmState = values[0]; wmClass = values[1]; wmChangeState = values[2]
        netWMState = values[3]; netWMStateHidden = values[4]; netWMStateFullscreen = values[5]
        netWMStateDemandsAttention = values[6]; netWMDesktop = values[7]; netWMPID = values[8]
        netCurrentDesktop = values[9]; netActiveWindow = values[10]; netClientListStacking = values[11]
        netSupportingWMCheck = values[12]
        netWMName = values[13]; wmName = values[14]
    }

    /// Root properties whose change alters the snapshot.
    func isRootProperty(_ atom: xcb_atom_t) -> Bool {
        atom == netCurrentDesktop || atom == netActiveWindow || atom == netClientListStacking
            || atom == netSupportingWMCheck
    }

    /// Client properties whose change alters the snapshot.
    func isClientProperty(_ atom: xcb_atom_t) -> Bool {
        atom == netWMState || atom == wmState || atom == netWMDesktop || atom == netWMPID || atom == wmClass
            || atom == netWMName || atom == wmName
    }
}
