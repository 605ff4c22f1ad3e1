import Foundation

/// Where the fixtures' compositors and apps come from: this machine's own (Debian 12: sway 1.7,
/// KWin 5.27, GNOME Shell 43), or, with `SCENESOUND_DESKTOP_ROOT` set to a chroot of a newer
/// Debian (scripts/check-newer-desktops makes one of Debian 13: sway 1.10, KWin 6.3, GNOME
/// Shell 48), that chroot's, started inside it. The chroot has the host's /tmp bound in, so
/// every socket and directory the fixtures make has the same path on both sides; the daemon,
/// the buses and the sound servers stay on the host. For checking by hand, not for `make test`.
public enum DesktopRoot {
    /// The chroot, or nil for this machine's own programs.
    public static let path: String? = {
        guard let root = ProcessInfo.processInfo.environment["SCENESOUND_DESKTOP_ROOT"], !root.isEmpty, root != "/" else { return nil }
        return root
    }()

    /// The executable and arguments that run `program` (an absolute path, as inside the root).
    /// chroot(1) execs the program, so the pid a test gets is the program's own.
    public static func command(_ program: String, _ arguments: [String]) -> (executable: String, arguments: [String]) {
        guard let path else { return (program, arguments) }
        return ("/usr/sbin/chroot", [path, program] + arguments)
    }

    /// `file` (an absolute path, as inside the root) as the host sees it.
    public static func hostPath(_ file: String) -> String {
        (path ?? "") + file
    }

    /// Starts `program` from the root (see `command`).
    public static func start(_ program: String, _ arguments: [String], display: String?, outputPath: String = "/dev/null",
                             errorPath: String = "/dev/null", environment: [String: String] = [:]) throws -> ChildProcess {
        let (executable, allArguments) = command(program, arguments)
        return try ChildProcess(executable, allArguments, display: display, outputPath: outputPath, errorPath: errorPath,
                                environment: environment)
    }

    /// Runs `program` from the root to its end; its output (see `runTool`).
    public static func run(_ program: String, _ arguments: [String], environment: [String: String] = [:]) throws -> String {
        let (executable, allArguments) = command(program, arguments)
        return try runTool(executable, allArguments, display: nil, environment: environment)
    }
}
