import Foundation

/// The daemon's end of the link to its guard: a separate process (`scenesound-capture-guard`)
/// that undoes the capture when the daemon dies or hangs, because modules a client loaded
/// outlive it and would leave every captured app silent on a null sink.
///
/// The link is one end of a socket pair that is the guard's stdin. Any death of the daemon,
/// SIGKILL included, closes it (the guard reads end-of-file); a daemon that hangs stops the
/// heartbeats written through it (the guard times out). While the capture rests (nothing
/// plays on its sink) it writes no heartbeat: `r` tells the guard so, and it waits on the
/// socket alone until the next beat. A guard that is gone makes `beat`
/// fail, and the capture starts over with a new one.
final class CaptureGuardLink {
    let pid: pid_t
    private var socket: Int32

    private init(pid: pid_t, socket: Int32) {
        self.pid = pid
        self.socket = socket
    }

    deinit { close() }

    struct SpawnFailure: Error, CustomStringConvertible {
        let description: String
    }

    /// Starts the guard for the capture sinks marked with `session`.
    static func spawn(
        executable: String, session: String, serverAddress: String?, hangSeconds: Double
    ) throws(SpawnFailure) -> CaptureGuardLink {
        var ends: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
            throw SpawnFailure(description: "socketpair: \(String(cString: strerror(errno)))")
        }
        let (ours, theirs) = (ends[0], ends[1])

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Its own session: a terminal's Ctrl-C or hang-up that stops the daemon must not
        // stop the guard before it has undone the capture. Default signal handling and an
        // empty mask, whatever the spawning thread had blocked.
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(Self.spawnSetSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, theirs, 0)  // dup2 clears close-on-exec

        var arguments = [executable, "--session", session, "--hang-seconds", String(hangSeconds)]
        if let serverAddress { arguments += ["--server", serverAddress] }
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid = pid_t()
        let status = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        Foundation.close(theirs)
        guard status == 0 else {
            Foundation.close(ours)
            throw SpawnFailure(description: "cannot start \(executable): \(String(cString: strerror(status)))")
        }
        return CaptureGuardLink(pid: pid, socket: ours)
    }

    /// glibc's POSIX_SPAWN_SETSID (2.26+), which Swift does not import (it is behind _GNU_SOURCE).
    private static let spawnSetSID: Int32 = 0x80

    /// Tells the guard the daemon is alive. false once the guard is gone.
    func beat() -> Bool {
        guard socket >= 0 else { return false }
        var byte = UInt8(ascii: "h")
        let written = send(socket, &byte, 1, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
        // EAGAIN: the guard is slow to read, not gone.
        return written == 1 || errno == EAGAIN
    }

    /// Whether the guard asked (`p`) if the daemon is alive, and whether it is gone (end of
    /// file). Non-blocking: reads what is there.
    func readQuestions() -> (asked: Bool, gone: Bool) {
        guard socket >= 0 else { return (false, true) }
        var buffer = [UInt8](repeating: 0, count: 64)
        var asked = false
        while true {
            let count = recv(socket, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if count > 0 { asked = asked || buffer.prefix(count).contains(UInt8(ascii: "p")); continue }
            if count == 0 { return (asked, true) }
            return (asked, errno != EAGAIN && errno != EINTR)
        }
    }

    /// The socket, for the daemon's loop to watch (the guard's questions, its end).
    var descriptor: Int32 { socket }

    /// Tells the guard the capture rests: no heartbeat until the next `beat` (a death still
    /// closes the socket). false once the guard is gone.
    func rest() -> Bool {
        guard socket >= 0 else { return false }
        var byte = UInt8(ascii: "r")
        let written = send(socket, &byte, 1, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
        return written == 1 || errno == EAGAIN
    }

    /// Tells the guard which sink to make the default again (a beat too). false once it is gone.
    func tellRealSink(_ name: String) -> Bool {
        guard socket >= 0 else { return false }
        let bytes = Array(("s" + name.filter { $0 != "\n" } + "\n").utf8)
        // Short and rare: it fits in the socket buffer, or the guard is not reading at all.
        let written = bytes.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT)) }
        return written == bytes.count || errno == EAGAIN
    }

    /// Closes our end: the guard sweeps (a no-op after a clean stop) and exits. It is reaped
    /// as it exits — at once if it already has, else by a small thread that waits for it — so
    /// no zombie stays behind a long-running daemon. Idempotent.
    func close() {
        guard socket >= 0 else { return }
        Foundation.close(socket)
        socket = -1
        Self.reap(pid)
    }

    /// Collects the guard now if it has exited, else once it does, on a thread of its own: its
    /// sweep takes a moment, and the caller (the capture's loop) never waits for it.
    static func reap(_ pid: pid_t) {
        var status: Int32 = 0
        guard waitpid(pid, &status, WNOHANG) == 0 else { return }
        Thread.detachNewThread {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        }
    }
}
