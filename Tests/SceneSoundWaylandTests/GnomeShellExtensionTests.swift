import Foundation
import Testing
import SceneSoundTestSupport

/// SceneSound's GNOME Shell extension (data/gnome-shell) inside a real headless gnome-shell 43
/// (or a newer one from `DesktopRoot`, its variant chosen by the Shell's version),
/// seen over D-Bus through gdbus, as the daemon or any other client of the session bus sees it.
@Suite(.serialized) struct GnomeShellExtensionTests {
    /// The serials of the Changed signals `gdbus monitor` has printed so far.
    static func changedSerials(_ monitorLog: String) -> [Int] {
        let text = (try? String(contentsOfFile: monitorLog, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            guard let range = line.range(of: "Changed (uint64 ") else { return nil }
            return Int(line[range.upperBound...].prefix { $0.isNumber })
        }
    }

    static func rect(_ window: [String: Any]?) -> [Int] {
        ["xPixels", "yPixels", "widthPixels", "heightPixels"].map { window?[$0] as? Int ?? -1 }
    }

    @Test func aNativeWindowIsReportedItsChangesSignalledAndNothingIsLeftWhenDisabled() throws {
        let started = Date()
        let gnome = try GnomeShellFixture()
        defer { gnome.stopAll() }
        let uuid = GnomeShellFixture.extensionUUID
        let signals = try gnome.monitorSignals()
        let mpv = try gnome.openMPV(["--idle=yes", "--ao=null", "--geometry=400x300", "--title=scenesound-test"])
        var window = try gnome.waitForWindow(pid: mpv.pid)
        // Shell 48 has mpv's window sized before it has its title (43 has both at once): each change is signalled.
        try waitUntil(timeoutSeconds: 5, "the title") {
            window = try gnome.window(pid: mpv.pid) ?? window
            return window["title"] as? String == "scenesound-test"
        }
        #expect(window["appId"] as? String == "mpv" && window["wmClass"] as? String == "mpv")
        #expect(window["title"] as? String == "scenesound-test")
        #expect(window["clientType"] as? String == "wayland" && window["x11WindowId"] is NSNull)
        #expect(Self.rect(window)[2 ... 3] == [400, 300])
        #expect(window["minimized"] as? Bool == false && window["fullscreen"] as? Bool == false && window["onActiveWorkspace"] as? Bool == true)
        #expect(window["workspace"] as? Int == 0 && window["monitor"] as? Int == 0 && window["windowType"] as? String == "normal")
        #expect((window["id"] as? Int ?? 0) > 0)
        let state = try gnome.state()
        #expect(state["interfaceVersion"] as? Int == 1 && state["activeWorkspace"] as? Int == 0 && state["layoutPixels"] as? String == "physical")
        #expect((state["shellVersion"] as? String)?.hasPrefix("\(GnomeShellFixture.shellMajorVersion).") == true)
        let monitors = state["monitors"] as? [[String: Any]] ?? []
        #expect(monitors.count == 1)
        #expect(Self.rect(monitors.first) == [0, 0, 1920, 1080] && monitors.first?["scale"] as? Double == 1
                    && monitors.first?["primary"] as? Bool == true)

        // A move: the rectangle follows, announced by a Changed signal carrying the state's serial.
        let before = Self.changedSerials(signals).count
        let moveStarted = Date()
        try gnome.moveWindow(pid: mpv.pid, xPixels: 1200, yPixels: 500)
        try waitUntil(timeoutSeconds: 5, "a Changed signal after the move") { Self.changedSerials(signals).count > before }
        let signalSeconds = Date().timeIntervalSince(moveStarted)
        let moved = try gnome.state()
        let movedWindow = (moved["windows"] as? [[String: Any]])?.first { $0["pid"] as? Int == Int(mpv.pid) }
        #expect(Self.rect(movedWindow) == [1200, 500, 400, 300])
        #expect(moved["serial"] as? Int == Self.changedSerials(signals).last)

        // Fifty moves in one go (as a drag moves a window every frame) make one signal: coalesced.
        let beforeBurst = Self.changedSerials(signals).count
        try gnome.eval("""
            const w = global.display.list_all_windows().find(w => w.get_pid() === \(mpv.pid));
            for (let i = 0; i < 50; i++) w.move_frame(true, 100 + 10 * i, 200);
            """)
        try waitUntil(timeoutSeconds: 5, "a Changed signal after the burst") { Self.changedSerials(signals).count > beforeBurst }
        Thread.sleep(forTimeInterval: 0.2)  // time for any further (uncoalesced) signals to arrive
        let burstSignals = Self.changedSerials(signals).count - beforeBurst
        #expect(burstSignals == 1, "50 moves made \(burstSignals) signals")
        #expect(Self.rect(try gnome.window(pid: mpv.pid)) == [590, 200, 400, 300])

        // Minimized, then restored.
        let beforeMinimize = Self.changedSerials(signals).count
        try gnome.minimizeWindow(pid: mpv.pid)
        try waitUntil(timeoutSeconds: 5, "a Changed signal after minimizing") { Self.changedSerials(signals).count > beforeMinimize }
        #expect(try gnome.window(pid: mpv.pid)?["minimized"] as? Bool == true)
        try gnome.minimizeWindow(pid: mpv.pid, false)
        try waitUntil(timeoutSeconds: 5, "restored") { try gnome.window(pid: mpv.pid)?["minimized"] as? Bool == false }

        // Read-only: one method, a read-only property, nothing settable.
        let introspection = try gnome.gdbus(["introspect", "--session", "--xml", "-d", "org.gnome.Shell", "-o", GnomeShellFixture.objectPath])
        let ours = introspection.components(separatedBy: "<interface name=\"\(GnomeShellFixture.interface)\">").last ?? ""
        let ourInterface = ours.components(separatedBy: "</interface>").first ?? ""
        #expect(ourInterface.components(separatedBy: "<method ").count - 1 == 1, "\(ourInterface)")
        #expect(ourInterface.contains("<method name=\"GetState\">") && ourInterface.contains("<signal name=\"Changed\">"))
        #expect(!ourInterface.contains("readwrite") && !ourInterface.contains("access=\"write\""))
        let set = runToolStatus("/usr/bin/gdbus", ["call", "--session", "-d", "org.gnome.Shell", "-o", GnomeShellFixture.objectPath,
                                                   "-m", "org.freedesktop.DBus.Properties.Set", GnomeShellFixture.interface,
                                                   "InterfaceVersion", "<uint32 5>"], display: nil, environment: gnome.environment)
        #expect(set.0 != 0 && set.2.contains("not writable"), "\(set)")

        // Disabled: every handler it connected is disconnected, and the object is gone.
        let handlers = try gnome.eval("""
            globalThis.sceneSoundHandlers = [...Main.extensionManager.lookup('\(uuid)').stateObj._service._connections]
                .flatMap(([object, ids]) => ids.map(id => [object, id]));
            sceneSoundHandlers.length
            """)
        try gnome.setEnabledExtensions([GnomeShellFixture.unsafeModeUUID])
        try waitUntil(timeoutSeconds: 10, "the object to go") { (try? gnome.stateText()) == nil }
        let stillConnected = try gnome.eval("""
            sceneSoundHandlers.filter(([object, id]) => imports.gi.GObject.signal_handler_is_connected(object, id)).length
            """)
        #expect((Int(handlers) ?? 0) >= 10, "handlers connected while enabled: \(handlers)")
        #expect(stillConnected == "0", "of \(handlers) handlers, \(stillConnected) stayed connected after disable()")

        // Enabled again (the Shell knows it from its start): back, with the window.
        try gnome.setEnabledExtensions([uuid, GnomeShellFixture.unsafeModeUUID])
        try waitUntil(timeoutSeconds: 10, "the object to return") { (try? gnome.window(pid: mpv.pid)) != nil }
        print("GNOME extension: window reported \(Self.rect(window)); a move signalled within \(Int(signalSeconds * 1000)) ms; 50 moves, \(burstSignals) signal; \(handlers) handlers, \(stillConnected) left after disable; suite \(Int(Date().timeIntervalSince(started))) s")
    }

    /// The GNOME 45+ variant cannot run in Shell 43: GJS loads it as the ES module it is. The
    /// shared file must load and define the service; extension.js must parse, failing only where
    /// it imports the Shell 45 modules that 43 lacks.
    @Test func theGnome45VariantLoadsAsAnESModule() throws {
        var template = Array("/tmp/sss-gnome45-XXXXXX".utf8CString)
        let directory = String(cString: try #require(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try GnomeShellFixture.installExtension(into: directory, variant: "45")
        let installed = directory + "/" + GnomeShellFixture.extensionUUID
        let metadata = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: installed + "/metadata.json"))) as? [String: Any]
        #expect((metadata?["shell-version"] as? [String])?.first == "45")
        #expect((metadata?["description"] as? String)?.contains("read-only, on the session bus") == true)
        try """
        import {WindowsService, OBJECT_PATH} from './\(GnomeShellFixture.extensionUUID)/windowsService.js';
        print(`service ${typeof WindowsService} ${OBJECT_PATH}`);
        try {
            await import('./\(GnomeShellFixture.extensionUUID)/extension.js');
            print('extension loaded');
        } catch (error) {
            print(`extension ${error.name}: ${error.message}`);
        }
        """.write(toFile: directory + "/check.js", atomically: true, encoding: .utf8)
        let output = try runTool("/usr/bin/gjs", ["-m", directory + "/check.js"], display: nil)
        #expect(output.contains("service function /org/scenesound/Windows"), "\(output)")
        #expect(output.contains("extension ImportError: Unable to load file from: resource:///org/gnome/shell/"), "\(output)")
    }
}
