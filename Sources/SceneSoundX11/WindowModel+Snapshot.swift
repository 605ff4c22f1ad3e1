import SceneSoundWindows
import CXCB

extension WindowModel {
    /// The tracked windows bottom to top: every candidate top-level whose client is known and
    /// whose geometry has been read once.
    func trackedWindows() -> [TrackedWindow] {
        let xIndex = Dictionary(xStackingOrder.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        let ewmhIndex = ewmhStackingOrder.map {
            Dictionary($0.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        }
        // The manager's list wins (it knows layers and desktops); windows it does not list
        // (unmanaged ones) go beneath, in X order.
        func order(_ topLevel: TopLevel) -> (Int, Int) {
            if let ewmhIndex, let client = topLevel.clientID, let index = ewmhIndex[client] { return (1, index) }
            return (0, xIndex[topLevel.frameID] ?? Int.max)
        }
        let ordered = topLevels.values
            .filter { $0.isCandidate && $0.clientID != nil && $0.rectPixels != nil }
            .sorted { order($0) < order($1) }
        return ordered.enumerated().map { index, topLevel in
            let onCurrentDesktop = isOnCurrentDesktop(topLevel.desktop)
            return TrackedWindow(
                id: topLevel.clientID!, frameID: topLevel.frameID, rectPixels: topLevel.rectPixels!,
                isViewable: topLevel.isViewable,
                // EWMH managers set HIDDEN, managers without EWMH only WM_STATE Iconic.
                isMinimized: onCurrentDesktop && (topLevel.isHidden || topLevel.isIconic),
                isFullscreen: topLevel.isFullscreen, demandsAttention: topLevel.demandsAttention,
                desktop: topLevel.desktop,
                isOnCurrentDesktop: onCurrentDesktop,
                pid: topLevel.pid, stackingIndex: index, title: topLevel.title, applicationName: topLevel.applicationName)
        }
    }

    private func isOnCurrentDesktop(_ desktop: UInt32?) -> Bool {
        guard let desktop, let currentDesktop else { return true }
        return desktop == TrackedWindow.allDesktops || desktop == currentDesktop
    }

    /// `_NET_ACTIVE_WINDOW` as a client id (managers may name the frame), or the focused client.
    var activeClient: xcb_window_t? {
        if hasEWMHWindowManager, let active = netActiveWindow {
            return frame(of: active).flatMap { topLevels[$0]?.clientID } ?? active
        }
        return focusedClient
    }
}
