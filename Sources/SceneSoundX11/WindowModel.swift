import SceneSoundWindows
import CXCB

/// The tracker's mutable picture of the display, fed by X events. Events only mark what
/// changed; `WindowModel+Refresh` asks the server for the new values once per publication, so a
/// drag's hundreds of ConfigureNotify cost one geometry query per published snapshot.
///
/// Frames and clients: each child of the root is a `TopLevel` (the manager's frame, or the
/// client itself with no reparenting manager). Its client is the window carrying WM_STATE
/// (set by managers) or WM_CLASS (set by every toolkit, and the only mark without a manager):
/// the top-level itself, or the first such descendant.
final class WindowModel {
    struct TopLevel {
        let frameID: xcb_window_t
        var overrideRedirect = false
        var isInputOnly = false
        var aboveSibling: xcb_window_t = 0
        var clientID: xcb_window_t?
        var needsResolve = true
        var needsGeometry = true
        var needsProperties = true
        var rectPixels: PixelRect?
        var isViewable = false
        var isHidden = false
        var isFullscreen = false
        var demandsAttention = false
        var isIconic = false
        var desktop: UInt32?
        var pid: Int32?
        var title: String?
        var applicationName: String?

        init(frameID: xcb_window_t) { self.frameID = frameID }

        /// Menus, tooltips and other override-redirect windows are never anyone's "window".
        var isCandidate: Bool { !overrideRedirect && !isInputOnly }
    }

    let root: xcb_window_t
    let atoms: XAtoms
    var topLevels: [xcb_window_t: TopLevel] = [:]
    var frameOfClient: [xcb_window_t: xcb_window_t] = [:]
    /// Root children bottom to top, as of the last QueryTree.
    var xStackingOrder: [xcb_window_t] = []
    /// Root `_NET_CLIENT_LIST_STACKING` (clients bottom to top) when a manager provides it.
    var ewmhStackingOrder: [xcb_window_t]?
    var hasEWMHWindowManager = false
    var currentDesktop: UInt32?
    var netActiveWindow: xcb_window_t?
    var focusedClient: xcb_window_t?
    var lastFocusWindow: xcb_window_t = 0
    var monitors: [Monitor] = []

    var rootNeedsProperties = true
    var stackingNeedsRefresh = true
    var monitorsNeedRefresh = true
    /// Set by every event that may change the snapshot; cleared when one is published.
    var hasChanges = true

    init(root: xcb_window_t, atoms: XAtoms) {
        self.root = root
        self.atoms = atoms
    }

    /// The top-level a window belongs to, as frame or as client.
    func frame(of window: xcb_window_t) -> xcb_window_t? {
        topLevels[window] != nil ? window : frameOfClient[window]
    }

    func addTopLevel(_ window: xcb_window_t, overrideRedirect: Bool) {
        guard topLevels[window] == nil else { return }
        var topLevel = TopLevel(frameID: window)
        topLevel.overrideRedirect = overrideRedirect
        topLevels[window] = topLevel
        stackingNeedsRefresh = true
    }

    func removeTopLevel(_ window: xcb_window_t) {
        guard let removed = topLevels.removeValue(forKey: window) else { return }
        if let client = removed.clientID, frameOfClient[client] == window { frameOfClient.removeValue(forKey: client) }
        stackingNeedsRefresh = true
    }

    private func mark(_ window: xcb_window_t, resolve: Bool = false, geometry: Bool = false, properties: Bool = false) {
        guard let frame = frame(of: window) else { return }
        if resolve { topLevels[frame]?.needsResolve = true }
        if geometry { topLevels[frame]?.needsGeometry = true }
        if properties { topLevels[frame]?.needsProperties = true }
    }

    /// Applies one event. Returns the windows that became top-levels and need their event
    /// selection (the caller owns the connection).
    func apply(_ event: XEvent) -> [xcb_window_t] {
        var newTopLevels: [xcb_window_t] = []
        switch event {
        case .ignored:
            return []
        case let .created(window, parent, overrideRedirect):
            // Children created inside frames (decorations, toolkit subwindows) are not top-levels.
            guard parent == root else { return [] }
            addTopLevel(window, overrideRedirect: overrideRedirect)
            newTopLevels.append(window)
        case let .destroyed(_, window):
            if topLevels[window] != nil {
                removeTopLevel(window)
            } else if let frame = frameOfClient.removeValue(forKey: window) {
                topLevels[frame]?.clientID = nil
                topLevels[frame]?.needsResolve = true
            }
        case let .mapped(event, window), let .unmapped(event, window):
            // Viewability of the client follows the frame's and its own map state.
            mark(window, resolve: topLevels[window]?.clientID == nil, geometry: true)
            if event != root && event != window { mark(event, resolve: topLevels[event]?.clientID == nil, geometry: true) }
            stackingNeedsRefresh = true
        case let .reparented(event, window, parent, overrideRedirect):
            if let oldFrame = frameOfClient[window], oldFrame != parent { topLevels[oldFrame]?.needsResolve = true }
            if parent == root {
                addTopLevel(window, overrideRedirect: overrideRedirect)
                newTopLevels.append(window)
            } else {
                removeTopLevel(window)
                topLevels[parent]?.needsResolve = true
            }
            if event != root { mark(event, resolve: true) }
            stackingNeedsRefresh = true
        case let .configured(event, window, aboveSibling):
            if topLevels[window] != nil, event == root || event == window {
                topLevels[window]?.needsGeometry = true
                // Only a restack changes the order; a drag keeps the same sibling.
                if topLevels[window]?.aboveSibling != aboveSibling {
                    topLevels[window]?.aboveSibling = aboveSibling
                    stackingNeedsRefresh = true
                }
            } else {
                mark(window, geometry: true)
            }
        case .circulated:
            stackingNeedsRefresh = true
        case let .propertyChanged(window, atom):
            if window == root {
                guard atoms.isRootProperty(atom) else { return [] }
                rootNeedsProperties = true
                if atom == atoms.netClientListStacking { stackingNeedsRefresh = true }
            } else {
                guard atoms.isClientProperty(atom) else { return [] }
                let identifies = atom == atoms.wmState || atom == atoms.wmClass
                mark(window, resolve: identifies && topLevels[window]?.clientID != window, properties: true)
            }
        case .randrChanged:
            monitorsNeedRefresh = true
        }
        hasChanges = true
        return newTopLevels
    }
}
