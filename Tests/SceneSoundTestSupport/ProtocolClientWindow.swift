import Foundation

/// A protocol client that names no scene and owns a native window: the repository's Python
/// client (`examples/python`, written from the spec alone) opens a stream, then becomes mpv
/// (exec keeps its pid and its connection) with a Wayland window, so the daemon can find the
/// stream's window only by the client's pid. `videoOutput` `x11` gives it an X11 window instead
/// (under XWayland, with `DISPLAY` in `environment`).
public func startProtocolClientBecomingMPV(socketPath: String, environment: [String: String], videoOutput: String = "wlshm") throws -> ChildProcess {
    // mpv from DesktopRoot: chroot(1) execs it in turn, keeping the pid and the open socket.
    let (mpvExecutable, mpvArguments) = DesktopRoot.command("/usr/bin/mpv", ["--no-config", "--vo=\(videoOutput)", "--force-window=yes", "--really-quiet",
                                                                            "--idle=yes", "--ao=null", "--geometry=400x300"])
    let argv = ([mpvExecutable == "/usr/bin/mpv" ? "mpv" : mpvExecutable] + mpvArguments).map { "'\($0)'" }.joined(separator: ", ")
    let examples = PrivateSoundServer.repositoryRoot().appendingPathComponent("examples/python").path
    let script = """
        import os, sys
        sys.path.insert(0, '\(examples)')
        from scenesound_client import Client
        client = Client(path='\(socketPath)', name='window-test')
        client.open_stream(channels=1)
        os.set_inheritable(client.sock.fileno(), True)
        os.execv('\(mpvExecutable)', [\(argv)])
        """
    return try ChildProcess("/usr/bin/python3", ["-c", script], display: nil, environment: environment)
}
