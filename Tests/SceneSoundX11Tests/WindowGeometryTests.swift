import Foundation
import SceneSoundTestSupport
import Testing
import SceneSoundWindows
import SceneSoundX11

extension X11DisplayTests {
    /// The tracked centre against `xwininfo` after every kind of geometry change, with and without
    /// a reparenting window manager. Each test owns its Xvfb; serialized so that timings are not
    /// disturbed by a second X server on a 2-core machine.
    @Suite struct WindowGeometryTests {
        @Test func followsMoveResizeWmctrlAndFullscreenUnderOpenbox() throws {
            let setup = try TrackedXTerm(windowManager: true, geometry: "80x24+100+100")
            defer { setup.stop() }
            let (fixture, harness, xterm, window) = (setup.fixture, setup.harness, setup.xterm, setup.window)
            #expect(window.frameID != window.id, "openbox reparents the client into a frame")
            let found = try fixture.toolOutput("xdotool", ["search", "--sync", "--pid", String(xterm.pid)])
            #expect(found.split(separator: "\n").compactMap { UInt32($0) }.contains(window.id))

            let id = String(window.id)
            var comparison = try harness.settle(window: window.id, changedFrom: nil)
            #expect(comparison.centreErrorPixels <= 1, "initial: \(comparison)")

            var steps: [(String, () throws -> Void)] = [
                ("xdotool windowmove", { try fixture.tool("xdotool", "windowmove", id, "700", "300") }),
                ("xdotool windowsize", { try fixture.tool("xdotool", "windowsize", id, "640", "480") }),
                ("wmctrl -e", { try fixture.tool("wmctrl", "-i", "-r", id, "-e", "0,1200,500,500,300") }),
            ]
            steps.append(("wmctrl fullscreen", { try fixture.tool("wmctrl", "-i", "-r", id, "-b", "add,fullscreen") }))
            for (name, action) in steps {
                let before = comparison.oracle
                try action()
                comparison = try harness.settle(window: window.id, changedFrom: before)
                #expect(comparison.oracle != before, "\(name) changed nothing")
                #expect(comparison.centreErrorPixels <= 1, "\(name): \(comparison)")
            }
            let fullscreen = try #require(harness.log.latest?.window(id: window.id))
            #expect(fullscreen.isFullscreen)
            #expect(fullscreen.rectPixels == PixelRect(xPixels: 0, yPixels: 0, widthPixels: 1920, heightPixels: 1080))
        }

        @Test func followsMoveAndResizeWithoutWindowManager() throws {
            let setup = try TrackedXTerm(windowManager: false, geometry: "80x24+100+100")
            defer { setup.stop() }
            let (fixture, harness, window) = (setup.fixture, setup.harness, setup.window)
            #expect(window.frameID == window.id, "no manager: the client is the top-level")
            let id = String(window.id)
            var comparison = try harness.settle(window: window.id, changedFrom: nil)
            #expect(comparison.centreErrorPixels <= 1, "initial: \(comparison)")
            #expect(comparison.oracle.borderWidth > 0, "xterm keeps its own border without a manager")

            // wmctrl and EWMH fullscreen need a manager to act on their requests; without one the
            // closest thing is to size the window to the screen by hand.
            let steps: [(String, () throws -> Void)] = [
                ("xdotool windowmove", { try fixture.tool("xdotool", "windowmove", id, "700", "300") }),
                ("xdotool windowsize", { try fixture.tool("xdotool", "windowsize", id, "640", "480") }),
                ("screen-sized", {
                    try fixture.tool("xdotool", "windowmove", id, "0", "0")
                    try fixture.tool("xdotool", "windowsize", id, "1918", "1078")
                }),
            ]
            for (name, action) in steps {
                let before = comparison.oracle
                try action()
                comparison = try harness.settle(window: window.id, changedFrom: before)
                #expect(comparison.oracle != before, "\(name) changed nothing")
                #expect(comparison.centreErrorPixels <= 1, "\(name): \(comparison)")
            }
        }
    }
}
