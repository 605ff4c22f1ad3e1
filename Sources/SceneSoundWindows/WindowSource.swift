/// Where window geometry comes from: the X server through XCB, or a Wayland compositor through
/// its own interface (sway's IPC, Hyprland's sockets). Each source follows the desktop on a
/// thread of its own and publishes `WindowSnapshot`s, through the `onSnapshot` closure it was
/// made with (called on its thread: hand the value off, do not block there) and through
/// `latestSnapshot` (any thread).
///
/// Every source survives its server going away: the last snapshot is re-published with
/// `isDisplayConnected == false` and kept, and the source reconnects with backoff.
public protocol WindowSource: AnyObject, Sendable {
    /// What it follows, for the log: "X display :0", "sway at /run/user/1000/sway-ipc.sock".
    var sourceDescription: String { get }
    /// Starts the source's thread and returns at once; connecting happens on that thread.
    func start()
    /// Stops the thread and waits for it; for shutdown only.
    func stop()
    /// The newest snapshot, nil until the first connection succeeded. Never waits.
    var latestSnapshot: WindowSnapshot? { get }
    var isConnected: Bool { get }
    /// Flags (or unflags) a window for attention where the desktop has a way; queued, returns at once.
    func setDemandsAttention(windowID: UInt32, _ demands: Bool)
    /// Whether anything plays. Compositors that announce some changes by no event (sway's and
    /// Hyprland's floating moves) are re-read on a timer while sounds play, and never when idle.
    func setSoundsPlaying(_ playing: Bool)
}

extension WindowSource {
    public func setSoundsPlaying(_ playing: Bool) {}
}

/// `--windows auto|x11|sway|hyprland|kwin|gnome|none` (config key `windows`).
public enum WindowBackendChoice: String, CaseIterable, Sendable {
    case auto, x11, sway, hyprland, kwin, gnome, none

    public static var acceptedValues: String { allCases.map(\.rawValue).joined(separator: ", ") }

    /// `auto`'s pick for the session, and why (for the one log line): sway's and Hyprland's
    /// sockets are announced by their variables; KWin and GNOME Shell by their names on the
    /// session bus (`isOnSessionBus` asks it) in a Wayland session (`WAYLAND_DISPLAY` or
    /// `XDG_SESSION_TYPE=wayland`; on Xorg, Plasma and GNOME windows are X11 windows, followed
    /// through X11 with RandR's millimetres); anything else is followed through X11 when there is
    /// a display, else not at all.
    public static func detect(environment: [String: String],
                              isOnSessionBus: (String) -> Bool = { _ in false }) -> (choice: WindowBackendChoice, reason: String) {
        if let sock = environment["SWAYSOCK"], !sock.isEmpty { return (.sway, "SWAYSOCK is set") }
        if let signature = environment["HYPRLAND_INSTANCE_SIGNATURE"], !signature.isEmpty {
            return (.hyprland, "HYPRLAND_INSTANCE_SIGNATURE is set")
        }
        let isWayland = !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty || environment["XDG_SESSION_TYPE"] == "wayland"
        var onXorg = ""
        for (name, choice) in [("org.kde.KWin", WindowBackendChoice.kwin), ("org.gnome.Shell", .gnome)] where isOnSessionBus(name) {
            if isWayland { return (choice, "\(name) is on the session bus") }
            onXorg = " (\(name) is on the session bus, in an X11 session)"
            break
        }
        if let display = environment["DISPLAY"], !display.isEmpty, display != "none" { return (.x11, "DISPLAY is \(display)\(onXorg)") }
        return (.none, "no compositor found and no DISPLAY")
    }
}
