/// How a window can be seen right now; the server decides what each means for its sound
/// (docs/ARCHITECTURE.md "Conventions": minimized, on another desktop or unmapped keep the last visible position).
public enum WindowVisibility: String, Equatable, Sendable {
    case visible
    /// `_NET_WM_STATE_HIDDEN`, or WM_STATE Iconic (a manager without EWMH).
    case minimized
    /// `_NET_WM_DESKTOP` is neither the root's `_NET_CURRENT_DESKTOP` nor "all desktops".
    case onOtherDesktop
    /// Not viewable for another reason (withdrawn, not yet mapped, an ancestor unmapped).
    case unmapped
}

import SceneSoundProtocol

/// One top-level window as its window source saw it when the snapshot was taken: an X11
/// window (through XCB, or an XWayland window as the compositor reports it) or a native
/// Wayland window (`nativeID` set). Geometry is in the desktop's logical pixels.
public struct TrackedWindow: Equatable, Sendable {
    /// `_NET_WM_DESKTOP`'s value for "on every desktop".
    public static let allDesktops: UInt32 = 0xFFFF_FFFF

    /// The client window: what xwininfo, xdotool, xprop and `_NET_ACTIVE_WINDOW` name, and what
    /// `x11:0x…` scene ids refer to. A native Wayland window has the handle of its
    /// `wayland:` scene id instead (`SceneID.nativeWindowHandle`, top bit set, never an X id).
    public var id: UInt32
    /// The compositor's own id of a native Wayland window (sway's con id, Hyprland's address):
    /// its scene id is `wayland:<nativeID>`. Nil for X11 windows, XWayland's included.
    public var nativeID: String?
    /// The root's child holding it: the manager's frame, or the client itself without a
    /// reparenting manager.
    public var frameID: UInt32
    /// The client area (border and frame excluded) in root pixels.
    public var rectPixels: PixelRect
    /// Mapped with all its ancestors (X's "viewable").
    public var isViewable: Bool
    /// HIDDEN or Iconic on the current desktop (on another one they only mean "not shown here").
    public var isMinimized: Bool
    public var isFullscreen: Bool
    public var demandsAttention: Bool
    /// `_NET_WM_DESKTOP`; nil without an EWMH manager.
    public var desktop: UInt32?
    public var isOnCurrentDesktop: Bool
    /// `_NET_WM_PID`; nil when the client does not set it.
    public var pid: Int32?
    /// Position in the stacking order, 0 = bottom-most; higher windows cover lower ones.
    public var stackingIndex: Int
    /// `_NET_WM_NAME`, else `WM_NAME`; nil when the client sets neither.
    public var title: String?
    /// `WM_CLASS`'s class ("XTerm", "firefox"), else its instance name; a native Wayland
    /// window's app id ("mpv", "org.gnome.Nautilus").
    public var applicationName: String?

    public init(id: UInt32, frameID: UInt32, rectPixels: PixelRect, isViewable: Bool, isMinimized: Bool,
                isFullscreen: Bool, demandsAttention: Bool, desktop: UInt32?, isOnCurrentDesktop: Bool,
                pid: Int32?, stackingIndex: Int, title: String? = nil, applicationName: String? = nil,
                nativeID: String? = nil) {
        self.id = id
        self.nativeID = nativeID
        self.frameID = frameID
        self.rectPixels = rectPixels
        self.isViewable = isViewable
        self.isMinimized = isMinimized
        self.isFullscreen = isFullscreen
        self.demandsAttention = demandsAttention
        self.desktop = desktop
        self.isOnCurrentDesktop = isOnCurrentDesktop
        self.pid = pid
        self.stackingIndex = stackingIndex
        self.title = title
        self.applicationName = applicationName
    }

    /// Another desktop wins: managers mark windows on other desktops HIDDEN (openbox does)
    /// and often Iconic, so only on the current desktop do those mean "minimized"; both win
    /// over a bare unmap, since managers unmap windows to minimize or hide them.
    public var visibility: WindowVisibility {
        if !isOnCurrentDesktop { return .onOtherDesktop }
        if isMinimized { return .minimized }
        if !isViewable { return .unmapped }
        return .visible
    }

    /// The scene id naming this window directly (docs/ARCHITECTURE.md "Conventions").
    public var sceneID: String { nativeID.map(SceneID.forNativeWindow) ?? SceneID.forX11Window(id) }
}

/// Everything a window source knows at one moment. Immutable; cheap to copy (arrays are shared).
public struct WindowSnapshot: Equatable, Sendable {
    /// Strictly increasing across the tracker's life, reconnections included.
    public var sequence: UInt64
    /// CLOCK_MONOTONIC when the snapshot was published.
    public var publishedMonotonicNanoseconds: UInt64
    /// CLOCK_MONOTONIC when the newest X event it reflects was read (0 before any event); the
    /// difference to `publishedMonotonicNanoseconds` is the tracker's own latency.
    public var newestEventMonotonicNanoseconds: UInt64
    /// False after the connection (to the X server or the compositor) was lost: the windows are
    /// those last seen, kept so that sounds stay where they were until the source reconnects.
    public var isDisplayConnected: Bool
    /// Bottom to top (`stackingIndex` is the position in this array).
    public var windows: [TrackedWindow]
    /// Never empty: RandR's monitors, or the core screen as one monitor; the compositor's
    /// outputs in logical pixels.
    public var monitors: [Monitor]
    /// `_NET_ACTIVE_WINDOW` as a client id; without an EWMH manager, the client holding the input focus.
    public var activeWindowID: UInt32?
    /// Root `_NET_CURRENT_DESKTOP`; nil without an EWMH manager.
    public var currentDesktop: UInt32?
    /// An EWMH window manager (`_NET_SUPPORTING_WM_CHECK`) is running; always true from a
    /// compositor.
    public var hasEWMHWindowManager: Bool

    public init(sequence: UInt64, publishedMonotonicNanoseconds: UInt64, newestEventMonotonicNanoseconds: UInt64,
                isDisplayConnected: Bool, windows: [TrackedWindow], monitors: [Monitor], activeWindowID: UInt32?,
                currentDesktop: UInt32?, hasEWMHWindowManager: Bool) {
        self.sequence = sequence
        self.publishedMonotonicNanoseconds = publishedMonotonicNanoseconds
        self.newestEventMonotonicNanoseconds = newestEventMonotonicNanoseconds
        self.isDisplayConnected = isDisplayConnected
        self.windows = windows
        self.monitors = monitors
        self.activeWindowID = activeWindowID
        self.currentDesktop = currentDesktop
        self.hasEWMHWindowManager = hasEWMHWindowManager
    }

    /// The window with this client id, or whose frame has this id (a user may pick either).
    public func window(id: UInt32) -> TrackedWindow? {
        windows.first { $0.id == id } ?? windows.first { $0.frameID == id }
    }

    /// A process's windows (`_NET_WM_PID`), topmost first: the automatic binding of a scene
    /// that a client names without binding it takes the first visible one.
    public func windows(pid: Int32) -> [TrackedWindow] {
        windows.filter { $0.pid == pid }.reversed()
    }

    /// `--window active`.
    public var activeWindow: TrackedWindow? { activeWindowID.flatMap { window(id: $0) } }

    /// The pixel-to-metres map for this snapshot's monitors.
    public func screenSpace(listenerDistanceMetres: Double = ScreenSpace.defaultListenerDistanceMetres) -> ScreenSpace {
        ScreenSpace(monitors: monitors, listenerDistanceMetres: listenerDistanceMetres)
    }
}
