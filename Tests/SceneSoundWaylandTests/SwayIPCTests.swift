import Testing
import SceneSoundProtocol
import SceneSoundWindows
@testable import SceneSoundWayland

/// sway's framing and tree, without sway (SwayWindowTests in SceneSoundServerTests runs the real one).
@Suite struct SwayIPCTests {
    @Test func framesRoundTripAndPartialOnesWait() throws {
        let frame = I3IPCFrame.encode(.getTree, payload: "{}")
        #expect(frame.count == I3IPCFrame.headerBytes + 2)
        var buffer = frame + frame.prefix(5)
        let frames = try I3IPCFrame.takeFrames(from: &buffer)
        #expect(frames.count == 1 && frames[0].type == 4 && frames[0].payload == Array("{}".utf8))
        #expect(buffer.count == 5, "a partial frame stays for the next read")
        var garbage = Array("not-ipc-at-all".utf8)
        #expect(throws: CompositorError.self) { try I3IPCFrame.takeFrames(from: &garbage) }
    }

    static let outputs = #"[{"name": "HEADLESS-1", "active": true, "scale": 2.0, "rect": {"x": 0, "y": 0, "width": 960, "height": 540}, "current_workspace": "1"}]"#

    /// As sway 1.7 prints it (trimmed): a floating native view, a tiled XWayland view on
    /// workspace 2 (not shown), and one in the scratchpad.
    static let tree = #"""
    {"id": 1, "type": "root", "rect": {"x": 0, "y": 0, "width": 960, "height": 540}, "nodes": [
      {"id": 2147483647, "type": "output", "name": "__i3", "nodes": [
        {"id": 2147483646, "type": "workspace", "name": "__i3_scratch", "nodes": [], "floating_nodes": [
          {"id": 9, "type": "floating_con", "name": "notes", "shell": "xdg_shell", "app_id": "foot", "pid": 31, "visible": false,
           "focused": false, "rect": {"x": 10, "y": 10, "width": 104, "height": 102}, "window_rect": {"x": 2, "y": 0, "width": 100, "height": 100}}]}]},
      {"id": 3, "type": "output", "name": "HEADLESS-1", "current_workspace": "1", "nodes": [
        {"id": 4, "type": "workspace", "name": "1", "nodes": [], "floating_nodes": [
          {"id": 5, "type": "floating_con", "name": "No file - mpv", "shell": "xdg_shell", "app_id": "mpv", "pid": 20944, "visible": true,
           "focused": true, "urgent": false, "fullscreen_mode": 0,
           "rect": {"x": 478, "y": 300, "width": 404, "height": 302}, "window_rect": {"x": 2, "y": 0, "width": 400, "height": 300}}]},
        {"id": 6, "type": "workspace", "name": "2", "nodes": [
          {"id": 7, "type": "con", "name": "xterm", "shell": "xwayland", "app_id": null, "window": 4194307, "pid": 40, "visible": false,
           "focused": false, "window_properties": {"class": "XTerm", "instance": "xterm"},
           "rect": {"x": 0, "y": 0, "width": 960, "height": 540}, "window_rect": {"x": 0, "y": 0, "width": 960, "height": 540}}],
         "floating_nodes": []}]}]}
    """#

    @Test func viewsAreReadWithTheirStatesAndScale() throws {
        let (state, views) = try SwayTree.state(tree: Array(Self.tree.utf8), outputs: Array(Self.outputs.utf8))
        #expect(state.windows.count == 3 && views.count == 3)
        let mpv = try #require(state.windows.first { $0.applicationName == "mpv" })
        #expect(mpv.sceneID == "wayland:5" && mpv.id == SceneID.nativeWindowHandle("5"))
        #expect(mpv.rectPixels == PixelRect(xPixels: 480, yPixels: 300, widthPixels: 400, heightPixels: 300))
        #expect(mpv.visibility == .visible && mpv.pid == 20944 && state.activeWindowID == mpv.id)
        let xterm = try #require(state.windows.first { $0.applicationName == "XTerm" })
        #expect(xterm.sceneID == "x11:0x400003" && xterm.nativeID == nil, "XWayland views keep their X11 ids")
        #expect(xterm.visibility == .onOtherDesktop)
        #expect(state.windows.first { $0.applicationName == "foot" }?.visibility == .minimized)
        // Scale 2: 960 logical pixels are 1920 of the output's own, at 96 dpi.
        #expect(abs(state.monitors[0].widthMillimetres - 1920 * 25.4 / 96) < 0.01 && state.monitors[0].isPrimary)
    }

    @Test func malformedRepliesAreReportedNotCrashedOn() {
        for (tree, outputs) in [("[1, 2]", Self.outputs), (Self.tree, "{}"), ("{\"nodes\": 3}", Self.outputs),
                                ("{\"nodes\": [{\"shell\": \"xdg_shell\", \"id\": 1}]}", Self.outputs), ("\u{0}", Self.outputs)] {
            #expect(throws: CompositorError.self) { try SwayTree.state(tree: Array(tree.utf8), outputs: Array(outputs.utf8)) }
        }
    }
}
