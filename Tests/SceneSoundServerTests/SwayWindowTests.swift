import Foundation
import Testing
import SceneSoundDSP
import SceneSoundMedia
import SceneSoundProtocol
import SceneSoundTestSupport

/// Native Wayland windows under a real sway (headless, as `nobody`), followed through sway's
/// IPC (`--windows sway`), heard through the daemon's wav output: mpv's `wlshm` window has no
/// X11 id, so only the compositor knows where it is.
@Suite(.serialized) struct SwayWindowTests {
    /// sway with one floating mpv window at (x, 300), and a daemon following sway.
    struct OneNativeWindow {
        let sway: SwayFixture
        let mpv: ChildProcess
        let conID: Int
        let scene: String
        let daemon: Daemon
        let client: RawClient

        init(xPixels: Int, mpvArguments: [String] = ["--idle=yes", "--ao=null"], mpvEnvironment: [String: String] = [:],
             daemonArguments: [String] = [], daemonEnvironment: [String: String] = [:]) throws {
            sway = try SwayFixture()
            mpv = try sway.openMPV(["--geometry=400x300"] + mpvArguments, environment: mpvEnvironment)
            conID = try sway.waitForView(pid: mpv.pid)
            try sway.command(pid: mpv.pid, "move position \(xPixels) 300")
            scene = SceneID.forNativeWindow(String(conID))
            daemon = try Daemon(extraArguments: ["--windows", "sway"] + daemonArguments,
                                environment: ["SWAYSOCK": sway.socketPath].merging(daemonEnvironment) { $1 })
            client = try RawClient(socketPath: daemon.socketPath)
        }
    }

    static func scene(_ client: RawClient, _ id: String) throws -> StatusDocument.Scene? {
        try WindowSceneTests.scene(client, id)
    }

    @Test func aNativeWindowIsHeardWhereItIsAndFollowedWithinAHundredMilliseconds() throws {
        let setup = try OneNativeWindow(xPixels: 40)
        defer { setup.sway.stopAll() }
        let (sway, mpv, scene, daemon, client) = (setup.sway, setup.mpv, setup.scene, setup.daemon, setup.client)
        let left = try WindowSceneTests.cues(playing: scene, daemon: daemon, client: client)
        let status = try Self.scene(client, scene)
        #expect(status?.state == "visible")
        #expect(status?.application == "mpv")
        #expect(status?.window == "0x" + String(SceneID.nativeWindowHandle(String(setup.conID)), radix: 16))

        // A floating move sends no event: the source re-reads sway while something plays (every
        // 50 ms). The time is the machine's too (sway relaying, the status polls): a miss no
        // longer than the machine stood still meanwhile is its (ci68: 102.8 ms, once).
        _ = try client.openStream(format: AudioFormat(sampleFormat: .s16le, rateHz: 48000, channels: 1), scene: scene)
        let watch = MachineStallWatch(thresholdSeconds: 0.002)
        defer { watch.stop() }
        var moves: [(from: Double, to: Double)] = []
        for (step, xPixels) in [500, 900, 1300, 1480].enumerated() {
            let before = try Self.scene(client, scene)?.azimuthDegrees ?? 0
            try sway.command(pid: mpv.pid, "move position \(xPixels) 300")
            let moved = MachineStallWatch.nowSeconds()
            try waitUntil(timeoutSeconds: 2, "the scene to follow move \(step)") {
                abs((try Self.scene(client, scene)?.azimuthDegrees ?? before) - before) > 1
            }
            moves.append((moved, MachineStallWatch.nowSeconds()))
        }
        watch.stop()
        let worst = moves.map { $0.to - $0.from }.max() ?? 0
        let right = try WindowSceneTests.cues(playing: scene, daemon: daemon, client: client)
        let rect = try #require(try sway.view(pid: mpv.pid)).rect
        print("sway: native window at the left ITD \(left.itdMicroseconds) µs ILD \(left.interauralLevelDifferenceDecibels) dB; moved right (content \(rect)) ITD \(right.itdMicroseconds) µs ILD \(right.interauralLevelDifferenceDecibels) dB; followed floating moves within \(Int(worst * 1000)) ms")
        #expect(left.itdMicroseconds > 100 && left.interauralLevelDifferenceDecibels > 2)
        #expect(right.itdMicroseconds < -100 && right.interauralLevelDifferenceDecibels < -2)
        for (step, move) in moves.enumerated() {
            watch.expectTime(move.to - move.from, under: 0.1, from: move.from, to: move.to, "sway: floating move \(step) followed")
        }
        #expect(try Self.scene(client, scene)?.rectPixels == rect)

        // The CLI names native windows too: by their scene, and as the active window.
        let handle = "0x" + String(SceneID.nativeWindowHandle(String(setup.conID)), radix: 16)
        try waitUntil(timeoutSeconds: 5, "the active window") {
            try HeadTrackingTests.statusDocument(client).display.activeWindowScene == scene
        }
        let boundActive = try CommandLineTests.runCLI(["scene", "bind", "focus", "--window", "active", "--socket", daemon.socketPath])
        let boundByID = try CommandLineTests.runCLI(["scene", "bind", "player", "--window", scene, "--socket", daemon.socketPath])
        #expect(boundActive.status == 0 && boundByID.status == 0, "\(boundActive.error) \(boundByID.error)")
        #expect(try Self.scene(client, "focus")?.window == handle && Self.scene(client, "player")?.window == handle)
        let list = try CommandLineTests.runCLI(["scene", "list", "--socket", daemon.socketPath])
        #expect(list.output.contains("mpv"), "\(list.output)")

        // A protocol client that names no scene, found by its pid: its window at the left.
        let program = try startProtocolClientBecomingMPV(socketPath: daemon.socketPath, environment: sway.clientEnvironment)
        defer { program.kill() }
        let programCon = try sway.waitForView(pid: program.pid)
        try sway.command(pid: program.pid, "move position 40 600")
        let programHandle = "0x" + String(SceneID.nativeWindowHandle(String(programCon)), radix: 16)
        try waitUntil(timeoutSeconds: 10, "the client's scene to find its window") {
            let pidScene = try Self.scene(client, "pid:\(program.pid)")
            return pidScene?.window == programHandle && (pidScene?.azimuthDegrees ?? 0) > 10
        }
    }

    /// An X11 app under sway's XWayland (a real xterm): its `x11:` scene is where sway puts it
    /// (sway's geometry is the truth; its `window` field maps the X11 id to the view), heard
    /// there and followed when moved; a protocol client with an X11 window is found by its pid.
    @Test func anXWaylandWindowsX11SceneIsHeardWhereSwayPutsItAndFollowed() throws {
        let sway = try SwayFixture()
        defer { sway.stopAll() }
        let xterm = try sway.openXTerm(geometry: "60x20+700+100")
        let xWindow = try sway.xWindowID(pid: xterm.pid)
        _ = try sway.waitForView(pid: xterm.pid)
        #expect(try sway.viewWithXWindow(pid: xterm.pid)?.xWindow == Int(xWindow))
        _ = try sway.swaymsg(["[class=XTerm] move position 40 300"])
        let scene = SceneID.forX11Window(xWindow)
        let daemon = try Daemon(extraArguments: ["--windows", "sway"], environment: ["SWAYSOCK": sway.socketPath])
        let client = try RawClient(socketPath: daemon.socketPath)
        let left = try WindowSceneTests.cues(playing: scene, daemon: daemon, client: client)
        let leftRect = try #require(try sway.view(pid: xterm.pid)).rect
        let status = try Self.scene(client, scene)
        #expect(status?.window == "0x" + String(xWindow, radix: 16))
        #expect(status?.application == "XTerm")
        #expect(status?.rectPixels == leftRect)

        // Moved by sway (floating: no event); the scene follows sway's geometry.
        _ = try client.openStream(format: AudioFormat(sampleFormat: .s16le, rateHz: 48000, channels: 1), scene: scene)
        let watch = MachineStallWatch(thresholdSeconds: 0.002)
        defer { watch.stop() }
        _ = try sway.swaymsg(["[class=XTerm] move position 1480 300"])
        let moved = MachineStallWatch.nowSeconds()
        try waitUntil(timeoutSeconds: 2, "the x11: scene to follow the move") { try Self.scene(client, scene)?.rectPixels?.first == 1482 }
        let followed = MachineStallWatch.nowSeconds(), followedSeconds = followed - moved
        watch.stop()
        let right = try WindowSceneTests.cues(playing: scene, daemon: daemon, client: client)
        let rightRect = try #require(try sway.view(pid: xterm.pid)).rect
        print("sway: XWayland xterm \(scene) at the left (content \(leftRect)) ITD \(left.itdMicroseconds) µs ILD \(left.interauralLevelDifferenceDecibels) dB; moved right (content \(rightRect)) ITD \(right.itdMicroseconds) µs ILD \(right.interauralLevelDifferenceDecibels) dB; followed within \(Int(followedSeconds * 1000)) ms")
        #expect(left.itdMicroseconds > 100 && left.interauralLevelDifferenceDecibels > 2)
        #expect(right.itdMicroseconds < -100 && right.interauralLevelDifferenceDecibels < -2)
        #expect(try Self.scene(client, scene)?.rectPixels == rightRect)
        watch.expectTime(followedSeconds, under: 0.1, from: moved, to: followed, "sway: the XWayland window's move followed")

        // A protocol client that names no scene and shows an X11 window (mpv --vo=x11 on XWayland), found by its pid.
        let program = try startProtocolClientBecomingMPV(socketPath: daemon.socketPath, environment: ["DISPLAY": try sway.xDisplay()],
                                                         videoOutput: "x11")
        defer { program.kill() }
        let programWindow = try sway.xWindowID(pid: program.pid)
        _ = try sway.waitForView(pid: program.pid)
        try sway.command(pid: program.pid, "move position 40 600")
        try waitUntil(timeoutSeconds: 10, "the client's scene to find its X11 window") {
            let pidScene = try Self.scene(client, "pid:\(program.pid)")
            return pidScene?.window == "0x" + String(programWindow, radix: 16) && (pidScene?.azimuthDegrees ?? 0) > 10
        }
    }

    @Test func anotherWorkspaceAndTheScratchpadAreMuffled() throws {
        let setup = try OneNativeWindow(xPixels: 40)
        defer { setup.sway.stopAll() }
        let (sway, mpv, scene, daemon, client) = (setup.sway, setup.mpv, setup.scene, setup.daemon, setup.client)
        _ = try WindowSceneTests.cues(playing: scene, daemon: daemon, client: client)
        let visibleLevel = try WindowSceneTests.level(daemon)

        try sway.command(pid: mpv.pid, "move container to workspace 2")
        try waitUntil(timeoutSeconds: 5, "the other workspace") { try Self.scene(client, scene)?.state == "onOtherDesktop" }
        _ = try WindowSceneTests.cues(playing: scene, daemon: daemon, client: client)
        let otherWorkspaceLevel = try WindowSceneTests.level(daemon)

        _ = try sway.swaymsg(["workspace 2"])
        try waitUntil(timeoutSeconds: 5, "its workspace shown") { try Self.scene(client, scene)?.state == "visible" }
        try sway.command(pid: mpv.pid, "move scratchpad")
        try waitUntil(timeoutSeconds: 5, "the scratchpad") { try Self.scene(client, scene)?.state == "minimized" }
        _ = try WindowSceneTests.cues(playing: scene, daemon: daemon, client: client)
        let scratchpadLevel = try WindowSceneTests.level(daemon)

        try sway.command(pid: mpv.pid, "scratchpad show")
        try waitUntil(timeoutSeconds: 5, "shown again") { try Self.scene(client, scene)?.state == "visible" }
        _ = try WindowSceneTests.cues(playing: scene, daemon: daemon, client: client)
        let shownLevel = try WindowSceneTests.level(daemon)
        print("sway: window level visible \(visibleLevel) dB, other workspace \(otherWorkspaceLevel) dB, scratchpad \(scratchpadLevel) dB, shown again \(shownLevel) dB")
        #expect(otherWorkspaceLevel < visibleLevel - 10)
        #expect(scratchpadLevel < visibleLevel - 10)
        #expect(abs(shownLevel - visibleLevel) < 1)
    }

    /// An unmodified app: mpv plays noise into a private PulseAudio and shows a native window
    /// at the right; `--capture-apps` takes its stream and finds the window by mpv's pid.
    @Test func anAppsStreamIsFoundByItsPidAndHeardFromItsNativeWindow() throws {
        let server = try PrivateSoundServer(.pulseAudio)
        defer { server.tearDown() }
        // Mono noise as raw PCM: a stereo file would carry a difference between its channels of its own.
        let file = server.directory.appendingPathComponent("noise.raw")
        try Data(WindowSceneTests.noise(seconds: 20)).write(to: file)
        let setup = try OneNativeWindow(xPixels: 1480, mpvArguments: [
            "--ao=pulse", "--loop-file=inf", "--demuxer=rawaudio", "--demuxer-rawaudio-format=s16le",
            "--demuxer-rawaudio-channels=1", "--demuxer-rawaudio-rate=48000", file.path],
                                        mpvEnvironment: server.clientEnvironment,
                                        daemonArguments: ["--capture-apps"], daemonEnvironment: server.clientEnvironment)
        defer { setup.sway.stopAll() }
        let (daemon, client) = (setup.daemon, setup.client)
        let (cues, azimuthDegrees) = try WindowSceneTests.cuesOfCapturedApp(pid: setup.mpv.pid, daemon: daemon, client: client)
        print("sway: mpv's captured stream found by pid at azimuth \(azimuthDegrees)°: ITD \(cues.itdMicroseconds) µs, ILD \(cues.interauralLevelDifferenceDecibels) dB")
        #expect(cues.itdMicroseconds < -100 && cues.interauralLevelDifferenceDecibels < -2, "\(daemon.log.suffix(1500))")
    }

    /// An unmodified X11 app under sway's XWayland: mpv (`--vo=x11`) plays noise into a private
    /// PulseAudio with its window at the right; `--capture-apps` finds that X11 window by mpv's pid.
    @Test func anAppsStreamIsFoundByItsPidAndHeardFromItsXWaylandWindow() throws {
        let server = try PrivateSoundServer(.pulseAudio)
        defer { server.tearDown() }
        let file = server.directory.appendingPathComponent("noise.raw")
        try Data(WindowSceneTests.noise(seconds: 20)).write(to: file)
        let sway = try SwayFixture()
        defer { sway.stopAll() }
        let mpv = try sway.openMPV(["--vo=x11", "--geometry=400x300", "--ao=pulse", "--loop-file=inf", "--demuxer=rawaudio",
                                    "--demuxer-rawaudio-format=s16le", "--demuxer-rawaudio-channels=1", "--demuxer-rawaudio-rate=48000", file.path],
                                   environment: server.clientEnvironment.merging(["DISPLAY": try sway.xDisplay()]) { $1 })
        let xWindow = try sway.xWindowID(pid: mpv.pid)
        _ = try sway.waitForView(pid: mpv.pid)
        try sway.command(pid: mpv.pid, "move position 1480 300")
        let daemon = try Daemon(extraArguments: ["--windows", "sway", "--capture-apps"],
                                environment: ["SWAYSOCK": sway.socketPath].merging(server.clientEnvironment) { $1 })
        let client = try RawClient(socketPath: daemon.socketPath)
        let (cues, azimuthDegrees) = try WindowSceneTests.cuesOfCapturedApp(pid: mpv.pid, daemon: daemon, client: client)
        let stream = try HeadTrackingTests.statusDocument(client).apps?.streams.first { $0.pid == Int(mpv.pid) }
        print("sway: mpv's captured stream found by pid at its XWayland window \(stream?.window ?? "-") at azimuth \(azimuthDegrees)°: ITD \(cues.itdMicroseconds) µs, ILD \(cues.interauralLevelDifferenceDecibels) dB")
        #expect(stream?.window == "0x" + String(xWindow, radix: 16))
        #expect(cues.itdMicroseconds < -100 && cues.interauralLevelDifferenceDecibels < -2, "\(daemon.log.suffix(1500))")
    }

    @Test func swayGoingAwayKeepsSoundsPlayingAndItsReturnIsPickedUp() throws {
        let setup = try OneNativeWindow(xPixels: 40)
        defer { setup.sway.stopAll() }
        let (sway, scene, daemon, client) = (setup.sway, setup.scene, setup.daemon, setup.client)
        func display() throws -> StatusDocument.Display { try HeadTrackingTests.statusDocument(client).display }
        try waitUntil(timeoutSeconds: 5, "sway followed") { try display().connected }
        sway.killSway()
        try waitUntil(timeoutSeconds: 5, "the loss to be noticed") { try !display().connected }
        // Playback goes on without sway, where the window was last seen.
        let gone = try WindowSceneTests.cues(playing: scene, daemon: daemon, client: client)
        #expect(gone.itdMicroseconds > 100, "\(gone)")
        #expect(daemon.isRunning)

        // The new sway's socket has a new name (its pid's): the daemon finds it beside the old one.
        try sway.restartSway()
        try waitUntil(timeoutSeconds: 10, "the new sway to be picked up") { try display().connected }
        let mpv = try sway.openMPV(["--geometry=400x300", "--idle=yes", "--ao=null"])
        let conID = try sway.waitForView(pid: mpv.pid)
        try sway.command(pid: mpv.pid, "move position 1480 300")
        let newScene = SceneID.forNativeWindow(String(conID))
        let right = try WindowSceneTests.cues(playing: newScene, daemon: daemon, client: client)
        print("sway restarted: the last place kept (ITD \(gone.itdMicroseconds) µs), a new window at the right ITD \(right.itdMicroseconds) µs")
        #expect(right.itdMicroseconds < -100)
    }
}
