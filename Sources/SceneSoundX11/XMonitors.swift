import SceneSoundWindows
import CXCB
#if canImport(Glibc)
import Glibc
#endif

extension XConnection {
    /// The monitors as RandR 1.5 lists them (active ones only: a disabled output has no place
    /// on the desk), resolved with the core-screen and 96-dpi fallbacks.
    func monitors() -> [Monitor] {
        MonitorLayout.resolve(randrMonitors: randrMonitors(), coreScreen: currentCoreScreen())
    }

    /// The core screen with its current pixel size (the root window follows RandR resizes;
    /// the setup block does not).
    private func currentCoreScreen() -> MonitorLayout.CoreScreen {
        var screen = coreScreen
        if let root = xcb_get_geometry_reply(raw, xcb_get_geometry(raw, root), nil) {
            screen.widthPixels = Int(root.pointee.width)
            screen.heightPixels = Int(root.pointee.height)
            free(root)
        }
        return screen
    }

    private func randrMonitors() -> [Monitor] {
        guard randrFirstEvent != nil,
              let reply = xcb_randr_get_monitors_reply(raw, xcb_randr_get_monitors(raw, root, 1), nil) else { return [] }
        defer { free(reply) }
        var monitors: [Monitor] = []
        var nameCookies: [xcb_get_atom_name_cookie_t] = []
        var iterator = xcb_randr_get_monitors_monitors_iterator(reply)
        while iterator.rem > 0 {
            let info = iterator.data.pointee
            monitors.append(Monitor(
                name: "",
                rectPixels: PixelRect(xPixels: Int(info.x), yPixels: Int(info.y),
                                      widthPixels: Int(info.width), heightPixels: Int(info.height)),
                widthMillimetres: Double(info.width_in_millimeters),
                heightMillimetres: Double(info.height_in_millimeters),
                isPrimary: info.primary != 0))
            nameCookies.append(xcb_get_atom_name(raw, info.name))
            xcb_randr_monitor_info_next(&iterator)
        }
        for (index, cookie) in nameCookies.enumerated() {
            guard let name = xcb_get_atom_name_reply(raw, cookie, nil) else { continue }
            let length = Int(xcb_get_atom_name_name_length(name))
            let bytes = UnsafeRawBufferPointer(start: xcb_get_atom_name_name(name), count: length)
            monitors[index].name = String(decoding: bytes, as: UTF8.self)
            free(name)
        }
        return monitors
    }
}
