import Foundation
import SceneSoundTestSupport
import Testing
import SceneSoundWindows
import SceneSoundX11

extension X11DisplayTests {
    /// Minimize, desktops, destruction, the active window and the attention flag, on real windows.
    @Suite struct WindowStateTests {
        @Test func minimizeAndRestoreUnderOpenbox() throws {
            let setup = try TrackedXTerm(windowManager: true, geometry: "80x24+300+200")
            defer { setup.stop() }
            let (fixture, harness, window) = (setup.fixture, setup.harness, setup.window)
            let id = String(window.id)

            let before = try harness.settle(window: window.id, changedFrom: nil)
            try fixture.tool("xdotool", "windowminimize", id)
            // openbox sets HIDDEN first, then unmaps.
            let minimized = harness.log.wait {
                $0.window(id: window.id)?.visibility == .minimized && $0.window(id: window.id)?.isViewable == false
            }
            #expect(minimized != nil, "never minimized: \(String(describing: harness.log.latest?.window(id: window.id)))")

            try fixture.tool("wmctrl", "-i", "-a", id)
            #expect(harness.log.wait { $0.window(id: window.id)?.visibility == .visible } != nil)
            // openbox may place the restored window anew: the oracle decides where it is.
            let restored = try harness.settle(window: window.id, changedFrom: nil)
            #expect(restored.centreErrorPixels <= 1, "restored: \(restored) (before: \(before))")
        }

        @Test func anotherDesktopUnderOpenbox() throws {
            let setup = try TrackedXTerm(windowManager: true, geometry: "80x24+300+200")
            defer { setup.stop() }
            let (fixture, harness, window) = (setup.fixture, setup.harness, setup.window)
            let id = String(window.id)

            // The window goes to desktop 1 while the user stays on 0 …
            try fixture.tool("wmctrl", "-i", "-r", id, "-t", "1")
            let moved = harness.log.wait { $0.window(id: window.id)?.visibility == .onOtherDesktop }
            if moved == nil { print("not on another desktop: \(String(describing: harness.log.latest))") }
            #expect(moved?.window(id: window.id)?.desktop == 1)
            #expect(moved?.currentDesktop == 0)
            // … the user follows it …
            try fixture.tool("wmctrl", "-s", "1")
            #expect(harness.log.wait { $0.currentDesktop == 1 && $0.window(id: window.id)?.visibility == .visible } != nil)
            // … and leaves again.
            try fixture.tool("wmctrl", "-s", "0")
            #expect(harness.log.wait { $0.currentDesktop == 0 && $0.window(id: window.id)?.visibility == .onOtherDesktop } != nil)
        }

        @Test func iconicWithoutEWMHManager() throws {
            // A manager without EWMH only sets WM_STATE to Iconic and unmaps the window; do the same by hand.
            let setup = try TrackedXTerm(windowManager: false, geometry: "80x24+300+200")
            defer { setup.stop() }
            let (fixture, harness, window) = (setup.fixture, setup.harness, setup.window)
            let id = String(window.id)
            #expect(harness.log.latest?.hasEWMHWindowManager == false)

            try fixture.tool("xprop", "-id", id, "-f", "WM_STATE", "32c", "-set", "WM_STATE", "3")
            try fixture.tool("xdotool", "windowunmap", id)
            let iconic = harness.log.wait { $0.window(id: window.id)?.visibility == .minimized }
            #expect(iconic != nil, "\(String(describing: harness.log.latest?.window(id: window.id)))")

            try fixture.tool("xprop", "-id", id, "-f", "WM_STATE", "32c", "-set", "WM_STATE", "1")
            try fixture.tool("xdotool", "windowmap", id)
            #expect(harness.log.wait { $0.window(id: window.id)?.visibility == .visible } != nil)
        }

        @Test func destroyedWindowIsReportedGone() throws {
            let setup = try TrackedXTerm(windowManager: true, geometry: "80x24+300+200")
            defer { setup.stop() }
            let (harness, xterm, window) = (setup.harness, setup.xterm, setup.window)
            let lastSeen = try #require(harness.log.latest?.window(id: window.id))

            xterm.kill()
            let gone = harness.log.wait { $0.window(id: window.id) == nil }
            #expect(gone != nil)
            // What a consumer keeps: the last snapshot that had it still says where it was.
            let previous = harness.log.all.last { $0.window(id: window.id) != nil }
            #expect(previous?.window(id: window.id)?.rectPixels == lastSeen.rectPixels)
        }

        @Test func activeWindowAndDemandsAttentionUnderOpenbox() throws {
            let fixture = try XDisplayFixture(windowManager: true)
            defer { fixture.stopAll() }
            let harness = TrackerHarness(fixture)
            defer { harness.tracker.stop() }
            let first = try fixture.openXTerm(geometry: "80x24+100+100")
            let firstWindow = try #require(harness.window(ofPID: first.pid))
            let second = try fixture.openXTerm(geometry: "80x24+900+400")
            let secondWindow = try #require(harness.window(ofPID: second.pid))

            // openbox focuses new windows: the second is active and on top.
            let active = harness.log.wait { $0.activeWindowID == secondWindow.id }
            #expect(active != nil, "active: \(String(describing: harness.log.latest?.activeWindowID))")
            #expect(harness.tracker.activeWindow()?.id == secondWindow.id)
            let stacking = try #require(active)
            #expect(stacking.window(id: secondWindow.id)!.stackingIndex > stacking.window(id: firstWindow.id)!.stackingIndex)

            // Attention on the unfocused one (managers ignore it on the focused window).
            harness.tracker.setDemandsAttention(windowID: firstWindow.id)
            #expect(harness.log.wait { $0.window(id: firstWindow.id)?.demandsAttention == true } != nil)
            let netState = try fixture.toolOutput("xprop", ["-id", String(firstWindow.id), "_NET_WM_STATE"])
            #expect(netState.contains("_NET_WM_STATE_DEMANDS_ATTENTION"))
            harness.tracker.setDemandsAttention(windowID: firstWindow.id, false)
            #expect(harness.log.wait { $0.window(id: firstWindow.id)?.demandsAttention == false } != nil)
        }

        @Test func activeWindowAndDemandsAttentionWithoutWindowManager() throws {
            let setup = try TrackedXTerm(windowManager: false, geometry: "80x24+100+100")
            defer { setup.stop() }
            let (fixture, harness, window) = (setup.fixture, setup.harness, setup.window)

            // No _NET_ACTIVE_WINDOW: the focused client stands in.
            try fixture.tool("xdotool", "windowfocus", "--sync", String(window.id))
            #expect(harness.log.wait { $0.activeWindowID == window.id } != nil)

            harness.tracker.setDemandsAttention(windowID: window.id)
            #expect(harness.log.wait { $0.window(id: window.id)?.demandsAttention == true } != nil)
        }

        /// Titles and application names, with a manager (UTF-8 _NET_WM_NAME) and without one
        /// (WM_NAME only), followed when the title changes.
        @Test(arguments: [true, false])
        func titleAndApplicationAreReadAndFollowed(windowManager: Bool) throws {
            let setup = try TrackedXTerm(windowManager: windowManager, geometry: "80x24+300+200", title: "notes.txt")
            defer { setup.stop() }
            let (fixture, harness, window) = (setup.fixture, setup.harness, setup.window)
            let named = harness.log.wait { $0.window(id: window.id)?.title == "notes.txt" }
            #expect(named?.window(id: window.id)?.applicationName == "XTerm", "\(String(describing: named))")
            // xdotool sets both names; a title with non-ASCII text comes through whole.
            try fixture.tool("xdotool", "set_window", "--name", "Café — todo", String(window.id))
            #expect(harness.log.wait { $0.window(id: window.id)?.title == "Café — todo" } != nil,
                    "\(String(describing: harness.log.latest?.window(id: window.id)))")
        }
    }
}
