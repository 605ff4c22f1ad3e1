import Foundation
import Testing
import SceneSoundDBus
import SceneSoundDSP
import SceneSoundMedia
import SceneSoundProtocol
import SceneSoundTestSupport

/// Native Wayland windows under a real KWin (Plasma 5.27, `kwin_wayland --virtual`, on a private
/// session bus), followed through SceneSound's KWin script (`--windows kwin`), heard through the
/// daemon's wav output. Windows are moved by KWin scripts of the test's own.
@Suite(.serialized) struct KWinWindowTests {
    /// KWin with one mpv window at (x, 300), and a daemon following KWin.
    struct OneNativeWindow {
        let kwin: KWinFixture
        let mpv: ChildProcess
        let internalID: String
        let scene: String
        let daemon: Daemon
        let client: RawClient

        init(xPixels: Int, mpvArguments: [String] = ["--idle=yes", "--ao=null"], mpvEnvironment: [String: String] = [:],
             daemonArguments: [String] = ["--windows", "kwin"], daemonEnvironment: [String: String] = [:]) throws {
            kwin = try KWinFixture()
            mpv = try kwin.openMPV(["--geometry=400x300"] + mpvArguments, environment: mpvEnvironment)
            internalID = try kwin.waitForWindow(pid: mpv.pid)
            try kwin.move(pid: mpv.pid, xPixels: xPixels, yPixels: 300)
            scene = SceneID.forNativeWindow(internalID)
            daemon = try Daemon(extraArguments: daemonArguments,
                                environment: kwin.clientEnvironment.merging(daemonEnvironment) { $1 })
            client = try RawClient(socketPath: daemon.socketPath)
        }
    }

    static func scene(_ client: RawClient, _ id: String) throws -> StatusDocument.Scene? {
        try WindowSceneTests.scene(client, id)
    }

    /// The daemon follows KWin and sees a window (a scene shows in `status` only once used).
    static func waitForWindows(_ client: RawClient, daemon: Daemon, kwin: KWinFixture) throws {
        do {
            try waitUntil(timeoutSeconds: 15, "KWin's windows followed") {
                let display = try HeadTrackingTests.statusDocument(client).display
                return display.connected && (display.windows ?? 0) >= 1
            }
        } catch {
            throw TestFailure("\(error); the daemon's log: \(daemon.log.suffix(3000)); KWin's: \((try? String(contentsOfFile: kwin.logPath, encoding: .utf8))?.suffix(2000) ?? "")")
        }
    }

    @Test func aNativeWindowIsHeardWhereItIsFollowedAndMuffledWhenMinimizedOrOnAnotherDesktop() throws {
        let setup = try OneNativeWindow(xPixels: 40, daemonArguments: ["--windows", "auto"])
        defer { setup.kwin.stopAll() }
        let (kwin, mpv, scene, daemon, client) = (setup.kwin, setup.mpv, setup.scene, setup.daemon, setup.client)
        // The choice is logged after the socket listens: waited for, not read at once.
        try waitUntil(timeoutSeconds: 10, "auto's choice logged") {
            daemon.log.contains("--windows auto: kwin, since org.kde.KWin is on the session bus")
        }
        try Self.waitForWindows(client, daemon: daemon, kwin: kwin)
        #expect(try kwin.isScriptLoaded("scenesound"))
        let left = try WindowSceneTests.cues(playing: scene, daemon: daemon, client: client)
        let leftLevel = try WindowSceneTests.level(daemon)
        let status = try Self.scene(client, scene)
        #expect(status?.application == "mpv")
        #expect(status?.window == "0x" + String(SceneID.nativeWindowHandle(setup.internalID), radix: 16))

        // Moved by a script, as a drag would: KWin's frameGeometryChanged reaches the daemon at once.
        // Timed from the run call (sent over a connection of the test's own) to the status showing it.
        let runner = try DBusConnection(address: kwin.bus.address)
        defer { runner.close() }
        var worst = 0.0
        for (step, xPixels) in [500, 900, 1300, 1480].enumerated() {
            let before = try Self.scene(client, scene)?.azimuthDegrees ?? 0
            let script = try kwin.loadScript(KWinFixture.moveScript(pid: mpv.pid, xPixels: xPixels, yPixels: 300))
            let moved = Date()
            _ = try runner.call(destination: "org.kde.KWin", path: script.objectPath, interface: "org.kde.kwin.Script", member: "run")
            defer { try? kwin.unloadScript(script.name) }
            try waitUntil(timeoutSeconds: 2, "the scene to follow move \(step)") {
                abs((try Self.scene(client, scene)?.azimuthDegrees ?? before) - before) > 1
            }
            worst = max(worst, Date().timeIntervalSince(moved))
        }
        let right = try WindowSceneTests.cues(playing: scene, daemon: daemon, client: client)
        let rect = try #require(try kwin.window(pid: mpv.pid)).rect
        print("KWin: native window at the left ITD \(left.itdMicroseconds) µs ILD \(left.interauralLevelDifferenceDecibels) dB; moved right (frame \(rect)) ITD \(right.itdMicroseconds) µs ILD \(right.interauralLevelDifferenceDecibels) dB; followed moves within \(Int(worst * 1000)) ms (from the moving script's run call)")
        #expect(left.itdMicroseconds > 100 && left.interauralLevelDifferenceDecibels > 2)
        #expect(right.itdMicroseconds < -100 && right.interauralLevelDifferenceDecibels < -2)
        #expect(worst < 0.1)
        #expect(try Self.scene(client, scene)?.rectPixels == rect)

        // The CLI names it: by its scene, and as the active window.
        let handle = "0x" + String(SceneID.nativeWindowHandle(setup.internalID), radix: 16)
        try waitUntil(timeoutSeconds: 5, "the active window") {
            try HeadTrackingTests.statusDocument(client).display.activeWindowScene == scene
        }
        let boundActive = try CommandLineTests.runCLI(["scene", "bind", "focus", "--window", "active", "--socket", daemon.socketPath])
        let boundByID = try CommandLineTests.runCLI(["scene", "bind", "player", "--window", scene, "--socket", daemon.socketPath])
        #expect(boundActive.status == 0 && boundByID.status == 0, "\(boundActive.error) \(boundByID.error)")
        #expect(try Self.scene(client, "focus")?.window == handle && Self.scene(client, "player")?.window == handle)

        // Minimized: muffled; restored: as before.
        try kwin.withWindow(pid: mpv.pid, "c.minimized = true;")
        try waitUntil(timeoutSeconds: 5, "minimized") { try Self.scene(client, scene)?.state == "minimized" }
        _ = try WindowSceneTests.cues(playing: scene, daemon: daemon, client: client)
        let minimizedLevel = try WindowSceneTests.level(daemon)
        try kwin.withWindow(pid: mpv.pid, "c.minimized = false;")
        try waitUntil(timeoutSeconds: 5, "restored") { try Self.scene(client, scene)?.state == "visible" }
        _ = try WindowSceneTests.cues(playing: scene, daemon: daemon, client: client)
        let restoredLevel = try WindowSceneTests.level(daemon)

        // On another virtual desktop: muffled too; back: as before.
        try kwin.withWindow(pid: mpv.pid, KWinFixture.toDesktopScript(2))
        try waitUntil(timeoutSeconds: 5, "on desktop 2") { try Self.scene(client, scene)?.state == "onOtherDesktop" }
        _ = try WindowSceneTests.cues(playing: scene, daemon: daemon, client: client)
        let otherDesktopLevel = try WindowSceneTests.level(daemon)
        try kwin.withWindow(pid: mpv.pid, KWinFixture.toDesktopScript(1))
        try waitUntil(timeoutSeconds: 5, "back on desktop 1") { try Self.scene(client, scene)?.state == "visible" }
        print("KWin: window level visible \(leftLevel) dB, minimized \(minimizedLevel) dB, restored \(restoredLevel) dB, other desktop \(otherDesktopLevel) dB")
        #expect(minimizedLevel < leftLevel - 10)
        #expect(otherDesktopLevel < leftLevel - 10)
        #expect(abs(restoredLevel - leftLevel) < 1.5)

        // A protocol client that names no scene, found by its pid: its window at the left.
        let program = try startProtocolClientBecomingMPV(socketPath: daemon.socketPath, environment: kwin.clientEnvironment)
        defer { program.kill() }
        let programWindow = try kwin.waitForWindow(pid: program.pid)
        _ = try kwin.move(pid: program.pid, xPixels: 40, yPixels: 600)
        let programHandle = "0x" + String(SceneID.nativeWindowHandle(programWindow), radix: 16)
        try waitUntil(timeoutSeconds: 10, "the client's scene to find its window") {
            let pidScene = try Self.scene(client, "pid:\(program.pid)")
            return pidScene?.window == programHandle && (pidScene?.azimuthDegrees ?? 0) > 10
        }
    }

    /// An X11 app under KWin's XWayland (`kwin_wayland --xwayland`, a real xterm): its `x11:`
    /// scene is where KWin puts it (KWin's geometry is the truth; its `windowId` maps the X11 id
    /// to the window), heard there and followed when moved; a protocol client with an X11 window
    /// is found by its pid.
    @Test func anXWaylandWindowsX11SceneIsHeardWhereKWinPutsItAndFollowed() throws {
        let kwin = try KWinFixture(xwayland: true)
        defer { kwin.stopAll() }
        let xterm = try kwin.openXTerm(geometry: "60x20+700+100")
        let xWindow = try kwin.xWindowID(pid: xterm.pid)
        _ = try kwin.waitForWindow(pid: xterm.pid)
        #expect(try kwin.window(pid: xterm.pid)?.xWindow == Int(xWindow))
        try kwin.move(pid: xterm.pid, xPixels: 40, yPixels: 300)
        let scene = SceneID.forX11Window(xWindow)
        let daemon = try Daemon(extraArguments: ["--windows", "kwin"], environment: kwin.clientEnvironment)
        let client = try RawClient(socketPath: daemon.socketPath)
        try Self.waitForWindows(client, daemon: daemon, kwin: kwin)
        let left = try WindowSceneTests.cues(playing: scene, daemon: daemon, client: client)
        let leftRect = try #require(try kwin.window(pid: xterm.pid)).rect
        let status = try Self.scene(client, scene)
        #expect(status?.window == "0x" + String(xWindow, radix: 16))
        #expect(status?.rectPixels == leftRect, "\(String(describing: status?.rectPixels)) \(leftRect)")

        // Moved by a script, as a drag would; the scene follows KWin's geometry.
        try kwin.move(pid: xterm.pid, xPixels: 1480, yPixels: 300)
        try waitUntil(timeoutSeconds: 2, "the x11: scene to follow the move") { try Self.scene(client, scene)?.rectPixels?.first == 1480 }
        let right = try WindowSceneTests.cues(playing: scene, daemon: daemon, client: client)
        let rightRect = try #require(try kwin.window(pid: xterm.pid)).rect
        print("KWin: XWayland xterm \(scene) (application \(status?.application ?? "-")) at the left (frame \(leftRect)) ITD \(left.itdMicroseconds) µs ILD \(left.interauralLevelDifferenceDecibels) dB; moved right (frame \(rightRect)) ITD \(right.itdMicroseconds) µs ILD \(right.interauralLevelDifferenceDecibels) dB")
        #expect(left.itdMicroseconds > 100 && left.interauralLevelDifferenceDecibels > 2)
        #expect(right.itdMicroseconds < -100 && right.interauralLevelDifferenceDecibels < -2)
        #expect(try Self.scene(client, scene)?.rectPixels == rightRect)

        // A protocol client that names no scene and shows an X11 window (mpv --vo=x11 on XWayland), found by its pid.
        let program = try startProtocolClientBecomingMPV(socketPath: daemon.socketPath, environment: ["DISPLAY": try kwin.xDisplay()],
                                                         videoOutput: "x11")
        defer { program.kill() }
        let programWindow = try kwin.xWindowID(pid: program.pid)
        _ = try kwin.waitForWindow(pid: program.pid)
        try kwin.move(pid: program.pid, xPixels: 40, yPixels: 600)
        try waitUntil(timeoutSeconds: 10, "the client's scene to find its X11 window") {
            let pidScene = try Self.scene(client, "pid:\(program.pid)")
            return pidScene?.window == "0x" + String(programWindow, radix: 16) && (pidScene?.azimuthDegrees ?? 0) > 10
        }
    }

    /// Nothing but KWin may report windows: another client's call is refused, and a malformed
    /// report (sent through KWin itself) is one logged line, the last windows kept.
    @Test func onlyKWinReportsAndAMalformedReportIsOneLoggedLine() throws {
        let setup = try OneNativeWindow(xPixels: 40)
        defer { setup.kwin.stopAll() }
        let (kwin, scene, daemon, client) = (setup.kwin, setup.scene, setup.daemon, setup.client)
        try Self.waitForWindows(client, daemon: daemon, kwin: kwin)
        _ = try WindowSceneTests.cues(playing: scene, daemon: daemon, client: client)
        let before = try #require(try Self.scene(client, scene))

        let stranger = try DBusConnection(address: kwin.bus.address)
        defer { stranger.close() }
        // The daemon's connection: the one that exported the object (the only one besides KWin's and ours).
        let names = try stranger.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                                      member: "ListNames")
        let fake = #"{"version":1,"windows":[],"active":null,"outputs":[{"name":"x","x":0,"y":0,"width":10,"height":10,"scale":1}]}"#
        var refusals: [String] = []
        var daemonName: String?
        var uniqueNames: [String] = []
        if case .array(let list)? = names.first {
            for case .string(let name) in list where name.hasPrefix(":") && name != stranger.uniqueName { uniqueNames.append(name) }
        }
        for name in uniqueNames {
            do throws(DBusError) {
                _ = try stranger.call(destination: name, path: "/org/scenesound/KWin", interface: "org.scenesound.KWin1",
                                      member: "Report", arguments: [.string(fake)])
                daemonName = name
            } catch {
                if error.name == DBusError.accessDeniedName { daemonName = name }
                refusals.append(error.name)
            }
        }
        print("KWin: a stranger's Report refused with \(refusals)")
        #expect(daemonName != nil && refusals.contains(DBusError.accessDeniedName), "\(refusals)")
        #expect(try Self.scene(client, scene)?.rectPixels == before.rectPixels)
        #expect(try Self.scene(client, scene)?.state == "visible")

        // KWin itself sending nonsense: one line in the log, the windows kept, the daemon alive.
        let daemonBusName = try #require(daemonName)
        try kwin.runScript(#"callDBus("\#(daemonBusName)", "/org/scenesound/KWin", "org.scenesound.KWin1", "Report", "{not json");"#)
        try waitUntil(timeoutSeconds: 5, "the malformed report logged") { daemon.log.contains("is not a JSON object") }
        try kwin.move(pid: setup.mpv.pid, xPixels: 1480, yPixels: 300)
        try waitUntil(timeoutSeconds: 5, "the next good report") { try Self.scene(client, scene)?.rectPixels?.first == 1480 }
        #expect(daemon.isRunning)
        #expect(daemon.log.components(separatedBy: "is not a JSON object").count == 2, "\(daemon.log.suffix(2000))")
    }

    /// An unmodified app: mpv plays noise into a private PulseAudio and shows a native window
    /// at the right; `--capture-apps` takes its stream and finds the window by mpv's pid.
    @Test func anAppsStreamIsFoundByItsPidAndHeardFromItsNativeWindow() throws {
        let server = try PrivateSoundServer(.pulseAudio)
        defer { server.tearDown() }
        let file = server.directory.appendingPathComponent("noise.raw")
        try Data(WindowSceneTests.noise(seconds: 20)).write(to: file)
        let setup = try OneNativeWindow(xPixels: 1480, mpvArguments: [
            "--ao=pulse", "--loop-file=inf", "--demuxer=rawaudio", "--demuxer-rawaudio-format=s16le",
            "--demuxer-rawaudio-channels=1", "--demuxer-rawaudio-rate=48000", file.path],
                                        mpvEnvironment: server.clientEnvironment,
                                        daemonArguments: ["--windows", "kwin", "--capture-apps"], daemonEnvironment: server.clientEnvironment)
        defer { setup.kwin.stopAll() }
        let (daemon, client) = (setup.daemon, setup.client)
        let (cues, azimuthDegrees) = try WindowSceneTests.cuesOfCapturedApp(pid: setup.mpv.pid, daemon: daemon, client: client)
        print("KWin: mpv's captured stream found by pid at azimuth \(azimuthDegrees)°: ITD \(cues.itdMicroseconds) µs, ILD \(cues.interauralLevelDifferenceDecibels) dB")
        #expect(cues.itdMicroseconds < -100 && cues.interauralLevelDifferenceDecibels < -2, "\(daemon.log.suffix(1500))")
    }

    /// KWin 5.27 numbers scripts by how many are loaded: with one unloaded before ours, ours gets
    /// the object path of another still loaded. The daemon's script runs all the same.
    @Test func theScriptRunsWhenKWinGivesItAnotherScriptsNumber() throws {
        let kwin = try KWinFixture()
        defer { kwin.stopAll() }
        let mpv = try kwin.openMPV(["--geometry=400x300", "--idle=yes", "--ao=null"])
        let scene = SceneID.forNativeWindow(try kwin.waitForWindow(pid: mpv.pid))
        try kwin.move(pid: mpv.pid, xPixels: 1480, yPixels: 300)
        // (The fixture's own scripts run on their numbers too: it is done with them from here.)
        let first = try kwin.loadScript("var first = 1;")
        let second = try kwin.loadScript("var second = 2;")
        try kwin.unloadScript(first.name)  // one loaded: the next script is numbered 1, as `second` is
        let daemon = try Daemon(extraArguments: ["--windows", "kwin"], environment: kwin.clientEnvironment)
        let client = try RawClient(socketPath: daemon.socketPath)
        try Self.waitForWindows(client, daemon: daemon, kwin: kwin)
        let right = try WindowSceneTests.cues(playing: scene, daemon: daemon, client: client)
        print("KWin: the script run under another's number (\(second.objectPath)): a window at the right ITD \(right.itdMicroseconds) µs")
        #expect(right.itdMicroseconds < -100)
    }

    /// KWin crashing leaves sounds where they were; the new KWin gets the script again, and a
    /// window at the right is heard there. At exit the daemon unloads its script.
    @Test func kwinRestartingIsSurvivedAndTheScriptUnloadedAtExit() throws {
        let setup = try OneNativeWindow(xPixels: 40)
        defer { setup.kwin.stopAll() }
        let (kwin, scene, daemon, client) = (setup.kwin, setup.scene, setup.daemon, setup.client)
        func display() throws -> StatusDocument.Display { try HeadTrackingTests.statusDocument(client).display }
        try Self.waitForWindows(client, daemon: daemon, kwin: kwin)
        kwin.killKWin()
        try waitUntil(timeoutSeconds: 5, "the loss to be noticed") { try !display().connected }
        let gone = try WindowSceneTests.cues(playing: scene, daemon: daemon, client: client)
        #expect(gone.itdMicroseconds > 100, "\(gone)")
        #expect(daemon.isRunning)

        let restarted = Date()
        try kwin.restartKWin()
        try waitUntil(timeoutSeconds: 15, "the new KWin to be followed") { try display().connected }
        let reloaded = Date().timeIntervalSince(restarted)
        #expect(try kwin.isScriptLoaded("scenesound"))
        let mpv = try kwin.openMPV(["--geometry=400x300", "--idle=yes", "--ao=null"])
        let newScene = SceneID.forNativeWindow(try kwin.waitForWindow(pid: mpv.pid))
        try kwin.move(pid: mpv.pid, xPixels: 1480, yPixels: 300)
        try Self.waitForWindows(client, daemon: daemon, kwin: kwin)
        let right = try WindowSceneTests.cues(playing: newScene, daemon: daemon, client: client)
        print("KWin restarted: the last place kept (ITD \(gone.itdMicroseconds) µs), script loaded again \(String(format: "%.1f", reloaded)) s after the restart began, a new window at the right ITD \(right.itdMicroseconds) µs")
        #expect(right.itdMicroseconds < -100)

        daemon.stop()
        #expect(try !kwin.isScriptLoaded("scenesound"))
    }
}
