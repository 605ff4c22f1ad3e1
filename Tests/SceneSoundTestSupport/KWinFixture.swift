import Foundation

/// A private headless KWin (Plasma 5.27's `kwin_wayland --virtual`, QPainter compositing, no
/// GPU) on a private session bus, with the native Wayland windows the test opens. The packaged
/// binary carries a file capability (`cap_sys_resource=ep`) that a sandbox may refuse to exec
/// ("Operation not permitted"): a copy of it, without the capability, runs. Windows are moved
/// and minimized by KWin scripts of the test's own (`runScript`), as a user's drag would move
/// them; what KWin says about a window comes back through a script's `print`, read from KWin's
/// log. Everything is stopped by PID (`stopAll()` in the test's `defer`). KWin and mpv come from
/// `DesktopRoot` (a newer Debian's, when checking by hand: Plasma 6, whose scripting API the
/// fixture's own scripts follow too).
public final class KWinFixture {
    public let directory: String
    public let runtimeDirectory: String
    public let bus: PrivateSessionBus
    public let waylandDisplay = "wayland-sss"
    public private(set) var kwin: ChildProcess
    private let binary: String
    private var windows: [ChildProcess] = []
    private var scriptCount = 0
    /// KWin's major version (5 or 6), from its support information (`kwin_wayland --version`
    /// aborts without a display).
    public private(set) var majorVersion = 5
    /// KWin runs XWayland (`--xwayland`): X11 apps' windows are its windows too.
    public let xwayland: Bool

    public init(xwayland: Bool = false) throws {
        self.xwayland = xwayland
        var template = Array("/tmp/sss-kwin-XXXXXX".utf8CString)
        guard let path = mkdtemp(&template) else { throw ToolFailure(command: "mkdtemp", status: errno, output: "") }
        directory = String(cString: path)
        runtimeDirectory = directory + "/runtime"
        try FileManager.default.createDirectory(atPath: runtimeDirectory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        try FileManager.default.createDirectory(atPath: directory + "/home", withIntermediateDirectories: true)
        binary = directory + "/kwin_wayland"
        try FileManager.default.copyItem(atPath: DesktopRoot.hostPath("/usr/bin/kwin_wayland"), toPath: binary)
        bus = try PrivateSessionBus()
        kwin = try Self.start(binary: binary, directory: directory, runtimeDirectory: runtimeDirectory,
                              display: waylandDisplay, bus: bus, logIndex: 0, xwayland: xwayland)
        try waitUntilReady()
        // "KWin version: 6.3.6"
        let information = try dbusSend(["--dest=org.kde.KWin", "/KWin", "org.kde.KWin.supportInformation"])
        if let range = information.range(of: "KWin version: "),
           let major = Int(information[range.upperBound...].prefix { $0.isNumber }) {
            majorVersion = major
        }
        if let root = DesktopRoot.path, let range = information.range(of: "KWin version: ") {
            print("KWinFixture: from \(root): \(information[range.lowerBound...].prefix { $0 != "\n" })")
        }
    }

    deinit { stopAll() }

    private static func start(binary: String, directory: String, runtimeDirectory: String, display: String,
                              bus: PrivateSessionBus, logIndex: Int, xwayland: Bool) throws -> ChildProcess {
        try DesktopRoot.start(binary, ["--virtual", "--no-lockscreen", "--no-global-shortcuts", "--width", "1920", "--height", "1080",
                                  "--socket", display] + (xwayland ? ["--xwayland"] : []),
                         display: nil, errorPath: directory + "/kwin-\(logIndex).log",
                         environment: ["XDG_RUNTIME_DIR": runtimeDirectory, "DBUS_SESSION_BUS_ADDRESS": bus.address,
                                       "KWIN_COMPOSE": "Q", "HOME": directory + "/home", "XDG_CONFIG_HOME": directory + "/home/.config",
                                       "QT_LOGGING_RULES": "js.debug=true;kwin_scripting.debug=true"])
    }

    private var logIndex = 0
    public var logPath: String { directory + "/kwin-\(logIndex).log" }

    /// KWin is up once its scripting answers on the bus and its Wayland socket exists.
    private func waitUntilReady() throws {
        let ready = waitUntil(timeoutSeconds: 30, pollSeconds: 0.05) {
            guard kwin.isRunning else { return true }
            guard FileManager.default.fileExists(atPath: runtimeDirectory + "/" + waylandDisplay) else { return false }
            return (try? dbusSend(["--dest=org.kde.KWin", "/Scripting", "org.kde.kwin.Scripting.isScriptLoaded", "string:none"])) != nil
        }
        guard ready, kwin.isRunning else {
            throw ToolFailure(command: "kwin_wayland (running \(kwin.isRunning))", status: 1,
                              output: (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "")
        }
    }

    public func stopAll() {
        for window in windows.reversed() { window.kill() }
        windows.removeAll()
        kwin.kill()
        if xwayland { XDisplayFixture.removeDisplayLocked(byPID: kwin.pid) }
        bus.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// KWin gone, as when it crashes (its windows lose their connection and exit).
    public func killKWin() {
        kwin.kill()
        for window in windows { window.kill() }
        windows.removeAll()
    }

    /// A new KWin on the same bus and runtime directory (a new owner of org.kde.KWin).
    public func restartKWin() throws {
        killKWin()
        try? FileManager.default.removeItem(atPath: runtimeDirectory + "/" + waylandDisplay)
        try? FileManager.default.removeItem(atPath: runtimeDirectory + "/" + waylandDisplay + ".lock")
        logIndex += 1
        kwin = try Self.start(binary: binary, directory: directory, runtimeDirectory: runtimeDirectory,
                              display: waylandDisplay, bus: bus, logIndex: logIndex, xwayland: xwayland)
        try waitUntilReady()
    }

    /// The environment of a client of this KWin and its bus.
    public var clientEnvironment: [String: String] {
        ["XDG_RUNTIME_DIR": runtimeDirectory, "WAYLAND_DISPLAY": waylandDisplay, "DBUS_SESSION_BUS_ADDRESS": bus.address]
    }

    /// mpv with a native Wayland window (wl_shm, no GPU).
    public func openMPV(_ arguments: [String] = ["--idle=yes", "--ao=null"], environment: [String: String] = [:]) throws -> ChildProcess {
        let mpv = try DesktopRoot.start("/usr/bin/mpv", ["--no-config", "--vo=wlshm", "--force-window=yes", "--really-quiet"] + arguments,
                                        display: nil, environment: clientEnvironment.merging(environment) { $1 })
        windows.append(mpv)
        return mpv
    }

    /// KWin's XWayland display (`:N`, with `--xwayland`): KWin writes its own pid into the lock
    /// file of the display it takes (`/tmp/.XN-lock`). XWayland runs as root, as the tests do.
    public func xDisplay() throws -> String {
        var found: String?
        _ = waitUntil(timeoutSeconds: 10) {
            found = XDisplayFixture.displayLocked(byPID: kwin.pid)
            return found != nil
        }
        guard let found else { throw ToolFailure(command: "KWin's XWayland lock file (pid \(kwin.pid), --xwayland \(xwayland))", status: 1, output: "") }
        return found
    }

    /// A real xterm under KWin's XWayland.
    public func openXTerm(geometry: String) throws -> ChildProcess {
        let xterm = try ChildProcess("/usr/bin/xterm", ["-geometry", geometry, "-e", "sleep", "600"], display: try xDisplay())
        windows.append(xterm)
        return xterm
    }

    /// The X11 id of process `pid`'s window on XWayland (xdotool, once it is mapped).
    public func xWindowID(pid: pid_t) throws -> UInt32 {
        try mappedXWindowID(pid: pid, display: try xDisplay())
    }

    @discardableResult
    public func dbusSend(_ arguments: [String]) throws -> String {
        try runTool("/usr/bin/dbus-send", ["--bus=\(bus.address)", "--print-reply", "--type=method_call"] + arguments, display: nil)
    }

    /// Loads and runs a KWin script of the test's own (JavaScript; `run` on `/<id>` in 5.27,
    /// `/Scripting/Script<id>` in 6; `windowList` below lists the windows in either),
    /// then unloads it at once: 5.27 numbers a new script by how many are loaded, so a script
    /// left loaded while another is unloaded would share its number (and its object path) with
    /// the next one. Returns the moment just before `run` was sent.
    @discardableResult
    public func runScript(_ source: String) throws -> Date {
        let script = try loadScript(source)
        let started = Date()
        try dbusSend(["--dest=org.kde.KWin", script.objectPath, "org.kde.kwin.Script.run"])
        try unloadScript(script.name)
        return started
    }

    /// Loads a script without running it: its name and the object path `run` is called on
    /// (a test that times what follows the run calls it itself, without a tool's start-up).
    public func loadScript(_ source: String) throws -> (name: String, objectPath: String) {
        scriptCount += 1
        let name = "sss-test-\(scriptCount)"
        let path = directory + "/\(name).js"
        try source.write(toFile: path, atomically: true, encoding: .utf8)
        let reply = try dbusSend(["--dest=org.kde.KWin", "/Scripting", "org.kde.kwin.Scripting.loadScript", "string:\(path)", "string:\(name)"])
        guard let id = reply.split(whereSeparator: \.isWhitespace).last.flatMap({ Int($0) }), id >= 0 else {
            throw ToolFailure(command: "loadScript \(path)", status: 1, output: reply)
        }
        return (name, majorVersion >= 6 ? "/Scripting/Script\(id)" : "/\(id)")
    }

    public func unloadScript(_ name: String) throws {
        try dbusSend(["--dest=org.kde.KWin", "/Scripting", "org.kde.kwin.Scripting.unloadScript", "string:\(name)"])
    }

    /// A script's expression for every window, in 5.27's API and in 6's.
    public static let windowList = "(typeof workspace.windowList === \"function\" ? workspace.windowList() : workspace.clientList())"

    /// A script's statements that put `c` on virtual desktop `number` (from 1), making it exist:
    /// 5.27 numbers desktops (`workspace.desktops` a count, `c.desktop` a number), 6 lists them
    /// (`workspace.desktops` objects, `c.desktops` a list of them, `createDesktop`; 5.27 has a
    /// `createDesktop` too, so the type of `workspace.desktops` tells them apart).
    public static func toDesktopScript(_ number: Int) -> String {
        """
        if (typeof workspace.desktops === "number") {
            if (workspace.desktops < \(number)) workspace.desktops = \(number);
            c.desktop = \(number);
        } else {
            while (workspace.desktops.length < \(number)) workspace.createDesktop(workspace.desktops.length, "Desktop " + (workspace.desktops.length + 1));
            c.desktops = [workspace.desktops[\(number - 1)]];
        }
        """
    }

    /// The script body that moves process `pid`'s window (its frame) to (x, y), size kept.
    public static func moveScript(pid: pid_t, xPixels: Int, yPixels: Int) -> String {
        """
        \(Self.windowList).forEach(function (c) {
            if (c.pid === \(pid) && c.normalWindow) {
                c.frameGeometry = { x: \(xPixels), y: \(yPixels), width: c.frameGeometry.width, height: c.frameGeometry.height };
            }
        });
        """
    }

    /// Whether KWin has a script of that name loaded (SceneSound's is "scenesound").
    public func isScriptLoaded(_ name: String) throws -> Bool {
        try dbusSend(["--dest=org.kde.KWin", "/Scripting", "org.kde.kwin.Scripting.isScriptLoaded", "string:\(name)"])
            .contains("boolean true")
    }

    /// What KWin says of process `pid`'s window: its internalId (braces dropped) and frame
    /// geometry [x, y, w, h], once it is managed, and its X11 id (`windowId`, 0 for a native window).
    /// Through a script printing into KWin's log.
    public func window(pid: pid_t) throws -> (internalID: String, rect: [Int], minimized: Bool, xWindow: Int)? {
        let token = "SSS-WINDOW-\(scriptCount + 1)"
        try runScript("""
            var found = null;
            \(Self.windowList).forEach(function (c) {
                if (c.pid === \(pid) && c.normalWindow) {
                    var g = c.frameGeometry;
                    found = { id: String(c.internalId).replace(/[{}]/g, ""), rect: [g.x, g.y, g.width, g.height], minimized: c.minimized,
                             xWindow: c.windowId || 0 };
                }
            });
            print("\(token) " + JSON.stringify(found));
            """)
        var line: Substring?
        _ = waitUntil(timeoutSeconds: 5) {
            line = ((try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "").split(separator: "\n").first { $0.contains(token + " ") }
            return line != nil
        }
        guard let line, let json = line.range(of: token + " ").map({ line[$0.upperBound...] }),
              let object = try JSONSerialization.jsonObject(with: Data(json.utf8), options: [.fragmentsAllowed]) as? [String: Any],
              let id = object["id"] as? String, let rect = object["rect"] as? [Double] else { return nil }
        return (id, rect.map { Int($0.rounded()) }, (object["minimized"] as? Bool) ?? false, (object["xWindow"] as? Int) ?? 0)
    }

    /// Waits for process `pid`'s window to be managed; its internalId.
    public func waitForWindow(pid: pid_t, timeoutSeconds: Double = 15) throws -> String {
        var id: String?
        _ = waitUntil(timeoutSeconds: timeoutSeconds, pollSeconds: 0.1) {
            id = (try? window(pid: pid))??.internalID
            return id != nil
        }
        guard let id else { throw ToolFailure(command: "KWin window of pid \(pid)", status: 1, output: (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "") }
        return id
    }

    /// Runs `body` (JavaScript, `c` the window) on process `pid`'s windows; when it was started.
    @discardableResult
    public func withWindow(pid: pid_t, _ body: String) throws -> Date {
        try runScript("""
            \(Self.windowList).forEach(function (c) {
                if (c.pid === \(pid) && c.normalWindow) { \(body) }
            });
            """)
    }

    /// Moves process `pid`'s window (its frame) to (x, y), size kept; when the move was started.
    @discardableResult
    public func move(pid: pid_t, xPixels: Int, yPixels: Int) throws -> Date {
        try runScript(Self.moveScript(pid: pid, xPixels: xPixels, yPixels: yPixels))
    }
}
