import SceneSoundWindows
import CXCB
#if canImport(Glibc)
import Glibc
#endif

extension XConnection {
    /// Sets or clears `_NET_WM_STATE_DEMANDS_ATTENTION`. With an EWMH manager, the window's
    /// state belongs to the manager, so we ask it with a `_NET_WM_STATE` client message to the
    /// root (EWMH "_NET_WM_STATE", source indication 2 = pager/tool, since we are not the
    /// window's own client). Without one nobody would answer the message, so the property is
    /// edited directly, as EWMH lets a client do for a window no manager owns.
    func setDemandsAttention(window: xcb_window_t, demands: Bool, viaWindowManager: Bool) {
        if viaWindowManager {
            var message = xcb_client_message_event_t()
            message.response_type = UInt8(XCB_CLIENT_MESSAGE)
            message.format = 32
            message.window = window
            message.type = atoms.netWMState
            let remove: UInt32 = 0, add: UInt32 = 1, sourcePager: UInt32 = 2
            message.data.data32 = (demands ? add : remove, atoms.netWMStateDemandsAttention, 0, sourcePager, 0)
            let mask = XCB_EVENT_MASK_SUBSTRUCTURE_REDIRECT.rawValue | XCB_EVENT_MASK_SUBSTRUCTURE_NOTIFY.rawValue
            withUnsafeBytes(of: &message) { bytes in
                _ = xcb_send_event(raw, 0, root, mask, bytes.baseAddress!.assumingMemoryBound(to: CChar.self))
            }
        } else {
            let current = property(sendGetProperty(window, atoms.netWMState))?.values32 ?? []
            var states = current.filter { $0 != atoms.netWMStateDemandsAttention }
            if demands { states.append(atoms.netWMStateDemandsAttention) }
            xcb_change_property(raw, UInt8(XCB_PROP_MODE_REPLACE.rawValue), window, atoms.netWMState,
                                XCB_ATOM_ATOM.rawValue, 32, UInt32(states.count), states)
        }
        flush()
    }
}
