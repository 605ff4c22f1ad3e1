import Foundation

/// A long-running process a test started (Xvfb, openbox, xterm), stopped by its PID.
///
/// posix_spawn rather than Foundation's Process, for two reasons seen here: Swift Testing's
/// worker threads block signals and a child inherits that mask (xterm's shell then ignores the
/// SIGHUP of its closed terminal and outlives the test), and Process.waitUntilExit never
/// returned for a SIGKILLed child whose exit its monitor had missed. So: an empty signal mask
/// and default dispositions for the child, SIGKILL to stop it, and our own waitpid to reap it.
/// Every child starts at normal scheduling whatever thread starts it: a load test's apps and
/// busy loops are "at normal priority" by what they measure, and a worker thread left
/// real-time once (a fresh-clone run) started two busy loops at SCHED_FIFO 20 that held both
/// CPUs until the run was killed.
public final class ChildProcess {
    public let pid: pid_t
    public let name: String
    private var reaped = false

    /// `environment` is added to (and overrides) the test process's own.
    public init(_ executable: String, _ arguments: [String], display: String?,
         outputPath: String = "/dev/null", errorPath: String = "/dev/null",
         environment extraEnvironment: [String: String] = [:]) throws {
        name = executable
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        var normal = sched_param()
        posix_spawnattr_setschedpolicy(&attributes, SCHED_OTHER)
        posix_spawnattr_setschedparam(&attributes, &normal)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSCHEDULER))

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)

        var environment = ProcessInfo.processInfo.environment
        environment["DISPLAY"] = display
        environment.merge(extraEnvironment) { _, extra in extra }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var child = pid_t()
        let status = posix_spawn(&child, executable, &actions, &attributes, argv, envp)
        guard status == 0 else {
            throw ToolFailure(command: executable, status: status, output: String(cString: strerror(status)))
        }
        pid = child
    }

    /// Alive and not yet reaped (a zombie counts as dead).
    public var isRunning: Bool {
        guard !reaped else { return false }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid {
            reaped = true
            return false
        }
        return true
    }

    /// Waits for a child that ends by itself (a tool); its exit status, or -1 if killed.
    public func waitForExit() -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        reaped = true
        // WIFEXITED / WEXITSTATUS, which Swift does not import (they are macros).
        return status & 0x7F == 0 ? (status >> 8) & 0xFF : -1
    }

    /// Idempotent.
    public func kill() {
        guard !reaped else { return }
        Foundation.kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        reaped = true
    }

    deinit { kill() }
}

public struct ToolFailure: Error, CustomStringConvertible {
    public let command: String
    public let status: Int32
    public let output: String
    public var description: String { "\(command) exited with \(status): \(output)" }

    public init(command: String, status: Int32, output: String) {
        self.command = command
        self.status = status
        self.output = output
    }
}

/// Runs an X tool against `display` to completion; returns stdout, throws on failure.
@discardableResult
public func runTool(_ executable: String, _ arguments: [String], display: String?,
                    environment: [String: String] = [:]) throws -> String {
    let (status, output, errors) = runToolStatus(executable, arguments, display: display, environment: environment)
    guard status == 0 else {
        throw ToolFailure(command: ([executable] + arguments).joined(separator: " "), status: status, output: errors)
    }
    return output
}

public func runToolStatus(_ executable: String, _ arguments: [String], display: String?,
                          environment: [String: String] = [:]) -> (Int32, String, String) {
    // Output through files, not pipes: nothing to drain while waiting, so no deadlock on a
    // chatty tool, and the same posix_spawn path as the long-running children.
    let base = NSTemporaryDirectory() + "x11tool-\(getpid())-\(UInt64.random(in: 0 ... .max))"
    let outputPath = base + ".out", errorPath = base + ".err"
    defer {
        unlink(outputPath)
        unlink(errorPath)
    }
    let child: ChildProcess
    do {
        child = try ChildProcess(executable, arguments, display: display, outputPath: outputPath, errorPath: errorPath,
                                 environment: environment)
    } catch {
        return (-1, "", "\(error)")
    }
    let status = child.waitForExit()
    let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
    let errors = (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
    return (status, output, errors)
}

/// Polls `condition` until it holds or the timeout passes, for state with no notification
/// of its own (a window manager appearing, an X server accepting connections).
public func waitUntil(timeoutSeconds: Double, pollSeconds: Double = 0.01, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeoutSeconds)
    while try !condition() {
        if Date() >= deadline { return false }
        Thread.sleep(forTimeInterval: pollSeconds)
    }
    return true
}

/// A test's own failure, with the message a reader needs (what was waited for, what was seen).
public struct TestFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Polls a condition until it holds, throwing after the timeout with what was waited for
/// (no fixed sleeps).
public func waitUntil(timeoutSeconds: Double, _ what: String, _ condition: () throws -> Bool) throws {
    guard try waitUntil(timeoutSeconds: timeoutSeconds, condition) else {
        throw TestFailure("timed out after \(timeoutSeconds) s waiting for \(what)")
    }
}

/// The X11 id of process `pid`'s window on `display` (xdotool, waiting until it is mapped).
public func mappedXWindowID(pid: pid_t, display: String) throws -> UInt32 {
    let output = try runTool("/usr/bin/xdotool", ["search", "--sync", "--onlyvisible", "--pid", String(pid)], display: display)
    guard let line = output.split(separator: "\n").first, let id = UInt32(line) else {
        throw ToolFailure(command: "xdotool search --pid \(pid)", status: 1, output: output)
    }
    return id
}

/// Sets mpv's `pause` property through its JSON IPC socket (`--input-ipc-server`), as a user's
/// media keys do (it corks its stream, which stays); returns once mpv answered.
public func setMPVPaused(_ paused: Bool, ipcSocketPath: String) throws {
    try waitUntil(timeoutSeconds: 10, "mpv's IPC socket") { FileManager.default.fileExists(atPath: ipcSocketPath) }
    let socket = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(socket) }
    guard withUnixSocketAddress(ipcSocketPath, { connect(socket, $0, $1) }) == 0 else {
        throw ToolFailure(command: "connect to mpv at \(ipcSocketPath)", status: errno, output: "")
    }
    let command = Array("{\"command\":[\"set_property\",\"pause\",\(paused)]}\n".utf8)
    guard write(socket, command, command.count) == command.count else {
        throw ToolFailure(command: "tell mpv pause \(paused)", status: errno, output: "")
    }
    var reply = [UInt8](repeating: 0, count: 256)
    _ = read(socket, &reply, reply.count)
}
