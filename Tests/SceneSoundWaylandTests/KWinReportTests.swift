import Testing
import SceneSoundProtocol
import SceneSoundWindows
@testable import SceneSoundWayland

/// The KWin script's report read into the window model, without KWin (KWinWindowTests in
/// SceneSoundServerTests runs the real one).
@Suite struct KWinReportTests {
    static let outputs = #"[{"name":"Virtual-1","x":0,"y":0,"width":1920,"height":1080,"scale":2},{"name":"screen-1","x":1920,"y":0,"width":1280,"height":1024,"scale":null}]"#

    static func window(_ id: String, x: Double = 40, stacking: Int = 0) -> String {
        #"{"id":"\#(id)","pid":4242,"appId":"","resourceClass":"mpv","caption":"No file - mpv","x":\#(x),"y":300.5,"width":400,"height":300,"minimized":false,"onCurrentDesktop":true,"onCurrentActivity":true,"desktop":1,"fullScreen":false,"demandsAttention":false,"hidden":false,"windowId":0,"stackingOrder":\#(stacking)}"#
    }

    @Test func windowsOutputsAndTheActiveWindowAreRead() throws {
        let json = #"{"version":1,"api":5,"windows":[\#(Self.window("top", stacking: 7)),\#(Self.window("e0b9fe21-200c-4bf3-bce0-3f9864925922", x: 1480.4, stacking: 2))],"active":"top","outputs":\#(Self.outputs)}"#
        let state = try KWinReport.state(json: json)
        #expect(state.windows.map(\.nativeID) == ["e0b9fe21-200c-4bf3-bce0-3f9864925922", "top"])  // bottom to top
        let native = state.windows[0]
        #expect(native.id == SceneID.nativeWindowHandle("e0b9fe21-200c-4bf3-bce0-3f9864925922"))
        #expect(native.sceneID == "wayland:e0b9fe21-200c-4bf3-bce0-3f9864925922")
        #expect(native.rectPixels == PixelRect(xPixels: 1480, yPixels: 301, widthPixels: 400, heightPixels: 300))
        #expect(native.pid == 4242 && native.applicationName == "mpv" && native.title == "No file - mpv")
        #expect(native.visibility == .visible && native.stackingIndex == 0)
        #expect(state.activeWindowID == SceneID.nativeWindowHandle("top"))
        // Scale 2: 1920 logical pixels are 3840 device pixels, at 96 dpi 1016 mm; 5.27 gives no scale.
        #expect(state.monitors.map(\.isPrimary) == [true, false])
        #expect(abs(state.monitors[0].widthMillimetres - 1016) < 1)
        #expect(abs(state.monitors[1].widthMillimetres - 338.7) < 1)
    }

    @Test func xwaylandWindowsKeepTheirX11IdsAndHiddenStatesAreRead() throws {
        let xwayland = Self.window("x").replacingOccurrences(of: #""windowId":0"#, with: #""windowId":62914567"#)
        let minimized = Self.window("m").replacingOccurrences(of: #""minimized":false"#, with: #""minimized":true"#)
        let otherDesktop = Self.window("d").replacingOccurrences(of: #""onCurrentDesktop":true"#, with: #""onCurrentDesktop":false"#)
        let otherActivity = Self.window("a").replacingOccurrences(of: #""onCurrentActivity":true"#, with: #""onCurrentActivity":false"#)
        let json = #"{"version":1,"api":6,"windows":[\#(xwayland),\#(minimized),\#(otherDesktop),\#(otherActivity)],"active":null,"outputs":\#(Self.outputs)}"#
        let state = try KWinReport.state(json: json)
        #expect(state.windows[0].id == 62914567 && state.windows[0].nativeID == nil && state.windows[0].sceneID == "x11:0x3c00007")
        #expect(state.windows.map(\.visibility) == [.visible, .minimized, .onOtherDesktop, .onOtherDesktop])
        #expect(state.activeWindowID == nil)
    }

    @Test func malformedReportsAreErrorsNamingWhatIsWrong() {
        let cases: [(String, String)] = [
            ("{not json", "not a JSON object"),
            (#"{"version":2,"windows":[],"outputs":\#(Self.outputs)}"#, "'version' 1"),
            (#"{"version":1,"windows":{},"outputs":\#(Self.outputs)}"#, "'windows'"),
            (#"{"version":1,"windows":[],"outputs":[]}"#, "'outputs'"),
            (#"{"version":1,"windows":[{"id":"has space","x":0,"y":0,"width":1,"height":1}],"outputs":\#(Self.outputs)}"#, "valid 'id'"),
            (#"{"version":1,"windows":[{"id":"w","x":"left","y":0,"width":1,"height":1}],"outputs":\#(Self.outputs)}"#, "no x, y"),
        ]
        for (json, expected) in cases {
            do {
                _ = try KWinReport.state(json: json)
                Issue.record("accepted: \(json)")
            } catch {
                guard case .malformed(let reason) = error else { Issue.record("\(error)"); continue }
                #expect(reason.contains(expected), "\(reason)")
            }
        }
    }
}
