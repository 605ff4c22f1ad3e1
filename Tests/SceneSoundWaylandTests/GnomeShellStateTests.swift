import Testing
import SceneSoundProtocol
import SceneSoundWindows
@testable import SceneSoundWayland

/// The GNOME extension's JSON, without GNOME Shell (GnomeShellExtensionTests runs the real one).
@Suite struct GnomeShellStateTests {
    /// As the extension (43 variant) prints it, with an XWayland xterm on workspace 1, a dock and
    /// a minimized window added; the layout logical, one monitor of scale 2 right of a primary one.
    static let state = #"""
    {"interfaceVersion": 1, "serial": 7, "shellVersion": "43.9", "focusedWindowId": 3602578700, "activeWorkspace": 0,
     "layoutPixels": "logical",
     "monitors": [{"index": 0, "xPixels": 0, "yPixels": 0, "widthPixels": 1920, "heightPixels": 1080, "scale": 1, "primary": true},
                  {"index": 1, "xPixels": 1920, "yPixels": 0, "widthPixels": 1280, "heightPixels": 720, "scale": 2, "primary": false}],
     "windows": [
      {"id": 5, "xPixels": 0, "yPixels": 0, "widthPixels": 1920, "heightPixels": 40, "pid": 900, "appId": "panel", "minimized": false,
       "fullscreen": false, "workspace": -1, "onActiveWorkspace": true, "clientType": "wayland", "x11WindowId": null, "monitor": 0,
       "windowType": "dock"},
      {"id": 3602578700, "xPixels": 1200, "yPixels": 500, "widthPixels": 400, "heightPixels": 300, "pid": 23914, "appId": "mpv",
       "sandboxedAppId": null, "gtkApplicationId": null, "wmClass": "mpv", "title": "No file - mpv", "minimized": false,
       "fullscreen": false, "workspace": 0, "onActiveWorkspace": true, "clientType": "wayland", "x11WindowId": null, "monitor": 0,
       "windowType": "normal"},
      {"id": 3602578701, "xPixels": 10, "yPixels": 20, "widthPixels": 500, "heightPixels": 400, "pid": 40, "appId": "XTerm",
       "title": "xterm", "minimized": false, "fullscreen": false, "workspace": 1, "onActiveWorkspace": false, "clientType": "x11",
       "x11WindowId": 4194307, "monitor": 0, "windowType": "normal"},
      {"id": 3602578702, "xPixels": 2000, "yPixels": 100, "widthPixels": 300, "heightPixels": 200, "pid": 0,
       "appId": "org.gnome.Nautilus", "title": "Home", "minimized": true, "fullscreen": false, "workspace": 0,
       "onActiveWorkspace": true, "clientType": "wayland", "x11WindowId": null, "monitor": 1, "windowType": "normal"}]}
    """#

    @Test func windowsMonitorsAndFocusAreRead() throws {
        let state = try GnomeShellState.state(json: Array(Self.state.utf8))
        #expect(state.windows.count == 3, "the dock is left out")
        let mpv = try #require(state.windows.first { $0.applicationName == "mpv" })
        #expect(mpv.sceneID == "wayland:3602578700" && mpv.id == SceneID.nativeWindowHandle("3602578700"))
        #expect(mpv.rectPixels == PixelRect(xPixels: 1200, yPixels: 500, widthPixels: 400, heightPixels: 300))
        #expect(mpv.visibility == .visible && mpv.pid == 23914 && mpv.title == "No file - mpv")
        #expect(state.activeWindowID == mpv.id)
        let xterm = try #require(state.windows.first { $0.applicationName == "XTerm" })
        #expect(xterm.sceneID == "x11:0x400003" && xterm.nativeID == nil, "XWayland windows keep their X11 ids")
        #expect(xterm.visibility == .onOtherDesktop && xterm.desktop == 1)
        let files = try #require(state.windows.first { $0.applicationName == "org.gnome.Nautilus" })
        #expect(files.visibility == .minimized && files.pid == nil)
        #expect(state.windows.map(\.stackingIndex) == [0, 1, 2])
        #expect(state.monitors.count == 2 && state.monitors[0].isPrimary && !state.monitors[1].isPrimary)
        // Logical layout, scale 2: 1280 logical pixels are 2560 of the monitor's own, at 96 dpi.
        #expect(abs(state.monitors[1].widthMillimetres - 2560 * 25.4 / 96) < 0.01)
        #expect(abs(state.monitors[0].widthMillimetres - 1920 * 25.4 / 96) < 0.01)
    }

    @Test func aPhysicalLayoutsPixelsAreTheMonitorsOwn() throws {
        let physical = Self.state.replacingOccurrences(of: #""layoutPixels": "logical""#, with: #""layoutPixels": "physical""#)
        let state = try GnomeShellState.state(json: Array(physical.utf8))
        #expect(abs(state.monitors[1].widthMillimetres - 1280 * 25.4 / 96) < 0.01)
    }

    @Test func malformedRepliesAreReportedNotCrashedOn() {
        for json in ["[1, 2]", "{}", #"{"monitors": [], "windows": 3}"#, #"{"monitors": [{"index": 0}], "windows": []}"#,
                     #"{"monitors": [], "windows": [{"id": "x", "xPixels": 0, "yPixels": 0, "widthPixels": 1, "heightPixels": 1}]}"#,
                     "\u{0}", ""] {
            #expect(throws: CompositorError.self) { try GnomeShellState.state(json: Array(json.utf8)) }
        }
    }
}
