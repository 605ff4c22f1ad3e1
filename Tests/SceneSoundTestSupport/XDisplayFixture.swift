import Foundation

/// A private X display for one test: Xvfb on a free display number, optionally openbox,
/// and the windows the test opens. `stopAll()` (in the test's `defer`) kills everything by PID.
public final class XDisplayFixture {
    public let displayNumber: Int
    public var display: String { ":\(displayNumber)" }
    public private(set) var xvfb: ChildProcess
    private var others: [ChildProcess] = []
    /// From start to answering requests; printed by tests, since it varies wildly here.
    public private(set) var openboxStartupSeconds: Double?

    public enum SetupFailure: Error { case noFreeDisplay, notReady(String) }

    /// Tries display numbers from 90 up: another test run (or engineer) may hold one.
    public init(windowManager: Bool) throws {
        var started: (Int, ChildProcess)?
        for number in 90 ..< 140 where !Self.isTaken(number) {
            guard let server = try? Self.startXvfb(number) else { continue }
            started = (number, server)
            break
        }
        guard let (number, server) = started else { throw SetupFailure.noFreeDisplay }
        displayNumber = number
        xvfb = server
        if windowManager {
            try startOpenbox()
            print("openbox on \(display) answered requests after \(Int((openboxStartupSeconds ?? 0) * 1000)) ms")
        }
    }

    deinit { stopAll() }

    public func stopAll() {
        for process in others.reversed() { process.kill() }
        others.removeAll()
        xvfb.kill()
    }

    /// Taken while the lock file names a live process. A lock left by a killed server is
    /// free: Xvfb removes a stale lock itself.
    private static func isTaken(_ number: Int) -> Bool {
        guard let lock = try? String(contentsOfFile: "/tmp/.X\(number)-lock", encoding: .utf8) else { return false }
        guard let pid = pid_t(lock.trimmingCharacters(in: .whitespacesAndNewlines)) else { return true }
        return kill(pid, 0) == 0 && !isZombie(pid)
    }

    /// The display (`:N`) whose lock file (`/tmp/.XN-lock`) names process `pid`: a compositor
    /// that runs XWayland (wlroots, KWin) writes its own pid there. The pid is padded with
    /// spaces and may be followed by a NUL: only its digits count.
    public static func displayLocked(byPID pid: pid_t) -> String? {
        let locks = ((try? FileManager.default.contentsOfDirectory(atPath: "/tmp")) ?? []).filter { $0.hasPrefix(".X") && $0.hasSuffix("-lock") }
        return locks.first { name in
            (try? String(contentsOfFile: "/tmp/" + name, encoding: .utf8)).map { String($0.filter(\.isNumber)) } == String(pid)
        }.map { ":" + $0.dropFirst(2).dropLast(5) }
    }

    /// Removes the lock file and socket of a display whose lock names `pid` (a compositor killed
    /// by the test leaves them behind).
    public static func removeDisplayLocked(byPID pid: pid_t) {
        guard let display = displayLocked(byPID: pid) else { return }
        try? FileManager.default.removeItem(atPath: "/tmp/.X\(display.dropFirst())-lock")
        try? FileManager.default.removeItem(atPath: "/tmp/.X11-unix/X\(display.dropFirst())")
    }

    /// Processes orphaned to PID 1 stay zombies here; they hold no display.
    private static func isZombie(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        return stat[stat.index(close, offsetBy: 2)...].hasPrefix("Z")
    }

    /// -noreset: without it the server resets when its last client disconnects, which
    /// silently drops monitors defined with `xrandr --setmonitor` the moment xrandr exits.
    private static func startXvfb(_ number: Int) throws -> ChildProcess {
        let server = try ChildProcess("/usr/bin/Xvfb", [":\(number)", "-screen", "0", "1920x1080x24", "-dpi", "96",
                                                        "-noreset", "-nolisten", "tcp"], display: nil)
        let ready = waitUntil(timeoutSeconds: 10, pollSeconds: 0.02) {
            !server.isRunning || runToolStatus("/usr/bin/xdpyinfo", ["-display", ":\(number)"], display: nil).0 == 0
        }
        guard ready, server.isRunning else {
            server.kill()
            throw SetupFailure.notReady("Xvfb :\(number)")
        }
        return server
    }

    /// Kills the X server as a crash would and starts a new one on the same number.
    public func killServer() { xvfb.kill() }

    public func restartServer() throws {
        xvfb.kill()
        // The killed server's lock and socket stay behind; Xvfb clears a stale lock itself
        // (its PID is dead and reaped), and replaces the socket.
        xvfb = try Self.startXvfb(displayNumber)
    }

    private func startOpenbox() throws {
        let openbox = try ChildProcess("/usr/bin/openbox", ["--sm-disable"], display: display)
        others.append(openbox)
        // It advertises itself (EWMH _NET_SUPPORTING_WM_CHECK) before it handles requests; here
        // it then sometimes ignores clients for 5-20 s (Xvfb and openbox both idle in poll), and
        // an xterm mapped in that window stays unmanaged. So wait for a real round trip through
        // the manager: a desktop switch it performs, and back.
        let started = Date()
        let advertised = waitUntil(timeoutSeconds: 10, pollSeconds: 0.02) {
            (try? runTool("/usr/bin/xprop", ["-root", "_NET_SUPPORTING_WM_CHECK"], display: display))?
                .contains("window id") == true
        }
        guard advertised else { throw SetupFailure.notReady("openbox on \(display)") }
        for desktop in ["1", "0"] {
            let answered = waitUntil(timeoutSeconds: 40, pollSeconds: 0.05) {
                // Re-sent while unanswered: a request sent too early is dropped, not queued.
                _ = runToolStatus("/usr/bin/wmctrl", ["-s", desktop], display: display)
                return (try? runTool("/usr/bin/xprop", ["-root", "_NET_CURRENT_DESKTOP"], display: display))?
                    .hasSuffix("= \(desktop)\n") == true
            }
            guard answered else { throw SetupFailure.notReady("openbox on \(display) never switched desktops") }
        }
        openboxStartupSeconds = Date().timeIntervalSince(started)
    }

    /// A real xterm; its window id comes from the tracker (by `_NET_WM_PID`).
    /// `title`: the window's title (xterm's -T), else xterm's own ("sleep"). `className`: its
    /// `WM_CLASS` class (xterm's -class), else "XTerm".
    public func openXTerm(geometry: String, title: String? = nil, className: String? = nil) throws -> ChildProcess {
        let xterm = try ChildProcess("/usr/bin/xterm", ["-geometry", geometry] + (title.map { ["-T", $0] } ?? [])
                                         + (className.map { ["-class", $0] } ?? []) + ["-e", "sleep", "600"],
                                     display: display)
        others.append(xterm)
        return xterm
    }

    /// The xterm's window (found by its pid with xdotool, once it is mapped).
    public func windowID(of xterm: ChildProcess) throws -> UInt32 {
        let output = try toolOutput("xdotool", ["search", "--sync", "--onlyvisible", "--pid", String(xterm.pid)])
        guard let line = output.split(separator: "\n").first, let id = UInt32(line) else {
            throw SetupFailure.notReady("no window for xterm \(xterm.pid): \(output)")
        }
        return id
    }

    public func tool(_ name: String, _ arguments: String...) throws {
        try runTool("/usr/bin/\(name)", arguments, display: display)
    }

    @discardableResult
    public func toolOutput(_ name: String, _ arguments: [String]) throws -> String {
        try runTool("/usr/bin/\(name)", arguments, display: display)
    }
}
