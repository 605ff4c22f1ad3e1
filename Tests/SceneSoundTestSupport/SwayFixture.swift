import Foundation

/// A private headless sway for one test (Debian's `sway`, wlroots' headless backend and pixman
/// renderer: no GPU, no input devices), with the native Wayland windows the test opens.
/// sway 1.7 refuses to run as root ("Unable to drop root"), so it runs as `nobody` with a
/// runtime directory that user owns; root's clients connect to its socket all the same.
/// Everything is stopped by PID (`stopAll()` in the test's `defer`). sway, swaymsg and mpv come
/// from `DesktopRoot` (a newer Debian's, when checking by hand).
public final class SwayFixture {
    public let runtimeDirectory: String
    /// The Wayland socket's name in the runtime directory, as sway picked it.
    public private(set) var waylandDisplay = ""
    public private(set) var sway: ChildProcess
    public private(set) var socketPath: String
    private var windows: [ChildProcess] = []
    private let configPath: String
    private let logPath: String

    public init() throws {
        var template = Array("/tmp/sss-sway-XXXXXX".utf8CString)
        guard let path = mkdtemp(&template) else { throw ToolFailure(command: "mkdtemp", status: errno, output: "") }
        runtimeDirectory = String(cString: path)
        guard let nobody = getpwnam("nobody")?.pointee else { throw ToolFailure(command: "getpwnam nobody", status: 1, output: "") }
        chown(runtimeDirectory, nobody.pw_uid, nobody.pw_gid)
        chmod(runtimeDirectory, 0o700)
        // The config and log beside it, in a directory nobody can read (mkdtemp's 0700 is root's).
        configPath = runtimeDirectory + ".conf"
        logPath = runtimeDirectory + ".log"
        // New windows float, so that `move position` places them anywhere (tiled ones fill the output);
        // XWayland's too. XWayland starts lazily, on its first X11 client (`xDisplay()`).
        try """
        output HEADLESS-1 resolution 1920x1080 position 0,0
        for_window [app_id=".*"] floating enable
        for_window [class=".*"] floating enable
        default_border pixel 2
        xwayland enable
        """.write(toFile: configPath, atomically: true, encoding: .utf8)
        chmod(configPath, 0o644)
        sway = try Self.startSway(runtimeDirectory: runtimeDirectory, configPath: configPath, logPath: logPath)
        socketPath = ""
        socketPath = try waitForSocket()
        if let root = DesktopRoot.path {
            let version = (try? swaymsg(["-t", "get_version"])).flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            print("SwayFixture: from \(root): sway \(version?["human_readable"] as? String ?? "?")")
        }
    }

    deinit { stopAll() }

    private static func startSway(runtimeDirectory: String, configPath: String, logPath: String) throws -> ChildProcess {
        try DesktopRoot.start("/usr/bin/setpriv", ["--reuid=nobody", "--regid=nogroup", "--clear-groups", "/usr/bin/sway", "-c", configPath],
                              display: nil, errorPath: logPath,
                         environment: ["XDG_RUNTIME_DIR": runtimeDirectory, "WLR_BACKENDS": "headless", "WLR_LIBINPUT_NO_DEVICES": "1",
                                       "WLR_RENDERER": "pixman", "HOME": "/nonexistent"])
    }

    /// sway's IPC socket once it answers (its name carries sway's pid).
    private func waitForSocket() throws -> String {
        var found: String?
        let ready = waitUntil(timeoutSeconds: 20) {
            guard sway.isRunning else { return true }
            let names = (try? FileManager.default.contentsOfDirectory(atPath: runtimeDirectory)) ?? []
            guard let display = names.first(where: { $0.hasPrefix("wayland-") && !$0.hasSuffix(".lock") }),
                  let socket = names.first(where: { $0.hasPrefix("sway-ipc.") && $0.contains(".\(sway.pid).") })
            else { return false }
            waylandDisplay = display
            found = runtimeDirectory + "/" + socket
            return (try? swaymsg(socket: found!, ["-t", "get_version"])) != nil
        }
        guard ready, sway.isRunning, let found else {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: runtimeDirectory)) ?? []
            throw ToolFailure(command: "sway (pid \(sway.pid), running \(sway.isRunning), \(runtimeDirectory): \(names))", status: 1,
                              output: (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "")
        }
        return found
    }

    public func stopAll() {
        for window in windows.reversed() { window.kill() }
        windows.removeAll()
        sway.kill()
        XDisplayFixture.removeDisplayLocked(byPID: sway.pid)
        try? FileManager.default.removeItem(atPath: runtimeDirectory)
        try? FileManager.default.removeItem(atPath: configPath)
        try? FileManager.default.removeItem(atPath: logPath)
    }

    /// sway gone (its socket with it), as when it crashes or the user quits it.
    public func killSway() {
        sway.kill()
    }

    /// A new sway on the same runtime directory: a new socket, named after the new pid.
    public func restartSway() throws {
        sway.kill()  // SIGKILL: its socket stays behind, refusing connections, as after a crash
        sway = try Self.startSway(runtimeDirectory: runtimeDirectory, configPath: configPath, logPath: logPath)
        socketPath = try waitForSocket()
    }

    /// The environment of a native Wayland client of this sway.
    public var clientEnvironment: [String: String] {
        ["XDG_RUNTIME_DIR": runtimeDirectory, "WAYLAND_DISPLAY": waylandDisplay, "SWAYSOCK": socketPath]
    }

    /// mpv with a native Wayland window (wl_shm, no GPU), idle or playing `arguments`' file; it
    /// floats (the config), so it moves with `move(pid:…)`.
    public func openMPV(_ arguments: [String] = ["--idle=yes", "--ao=null"], environment: [String: String] = [:]) throws -> ChildProcess {
        let mpv = try DesktopRoot.start("/usr/bin/mpv", ["--no-config", "--vo=wlshm", "--force-window=yes", "--really-quiet"] + arguments,
                                        display: nil, environment: clientEnvironment.merging(environment) { $1 })
        windows.append(mpv)
        return mpv
    }

    /// sway's XWayland display (`:N`), with root's X11 clients let in. wlroots writes sway's pid
    /// into the lock file of the display it takes (`/tmp/.XN-lock`), and XWayland, run as
    /// nobody, admits only that user until told otherwise (`xhost`, which also starts it).
    public func xDisplay() throws -> String {
        if let xDisplayName, xDisplayPID == sway.pid { return xDisplayName }
        var found: String?
        _ = waitUntil(timeoutSeconds: 10) {
            found = XDisplayFixture.displayLocked(byPID: sway.pid)
            return found != nil
        }
        guard let found else { throw ToolFailure(command: "sway's XWayland lock file (pid \(sway.pid))", status: 1, output: "") }
        try runTool("/usr/bin/setpriv", ["--reuid=nobody", "--regid=nogroup", "--clear-groups", "/usr/bin/xhost", "+si:localuser:root"],
                    display: found)
        xDisplayName = found
        xDisplayPID = sway.pid
        return found
    }
    private var xDisplayName: String?
    private var xDisplayPID: pid_t = 0

    /// A real xterm under sway's XWayland (X11 class `XTerm`); it floats, so it moves with
    /// `command(pid:…)` or `[class=XTerm]`.
    public func openXTerm(geometry: String) throws -> ChildProcess {
        let xterm = try ChildProcess("/usr/bin/xterm", ["-geometry", geometry, "-e", "sleep", "600"], display: try xDisplay(),
                                     environment: ["XDG_RUNTIME_DIR": runtimeDirectory])
        windows.append(xterm)
        return xterm
    }

    /// The X11 id of process `pid`'s window on XWayland (xdotool, once it is mapped).
    public func xWindowID(pid: pid_t) throws -> UInt32 {
        try mappedXWindowID(pid: pid, display: try xDisplay())
    }

    public func swaymsg(_ arguments: [String]) throws -> String {
        try swaymsg(socket: socketPath, arguments)
    }

    private func swaymsg(socket: String, _ arguments: [String]) throws -> String {
        try DesktopRoot.run("/usr/bin/swaymsg", ["-s", socket] + arguments)
    }

    /// Runs a sway command on the views of process `pid`.
    public func command(pid: pid_t, _ command: String) throws {
        _ = try swaymsg(["[pid=\(pid)] \(command)"])
    }

    /// The view of process `pid` in sway's tree: (con id, content rectangle [x, y, w, h]), once mapped.
    public func view(pid: pid_t) throws -> (conID: Int, rect: [Int])? {
        try viewWithXWindow(pid: pid).map { ($0.conID, $0.rect) }
    }

    /// As `view(pid:)`, with the X11 id sway reports for an XWayland view (its `window`; nil for a native one).
    public func viewWithXWindow(pid: pid_t) throws -> (conID: Int, rect: [Int], xWindow: Int?)? {
        let text = try swaymsg(["-t", "get_tree", "-r"])
        guard let tree = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else { return nil }
        func find(_ node: [String: Any]) -> (Int, [Int], Int?)? {
            if node["pid"] as? Int == Int(pid), node["shell"] is String, let id = node["id"] as? Int,
               let r = node["rect"] as? [String: Int], let w = node["window_rect"] as? [String: Int] {
                return (id, [r["x"]! + w["x"]!, r["y"]! + w["y"]!, w["width"]!, w["height"]!], node["window"] as? Int)
            }
            for key in ["nodes", "floating_nodes"] {
                for child in node[key] as? [[String: Any]] ?? [] { if let found = find(child) { return found } }
            }
            return nil
        }
        return find(tree)
    }

    /// Waits for process `pid`'s view to be mapped; its con id.
    public func waitForView(pid: pid_t, timeoutSeconds: Double = 15) throws -> Int {
        var conID: Int?
        _ = waitUntil(timeoutSeconds: timeoutSeconds) {
            conID = (try? view(pid: pid))??.conID
            return conID != nil
        }
        guard let conID else { throw ToolFailure(command: "sway view of pid \(pid)", status: 1, output: (try? swaymsg(["-t", "get_tree"])) ?? "") }
        return conID
    }
}
