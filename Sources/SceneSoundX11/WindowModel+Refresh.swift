import SceneSoundWindows
import CXCB

/// Brings the model up to date with the server for everything events marked, pipelining the
/// requests (all sent, then all replies read) so a refresh costs about one round trip.
extension WindowModel {
    /// A first look at the display: the root's children, their attributes and event selection.
    func scan(_ connection: XConnection) {
        connection.selectInput(window: root, mask: XConnection.substructureAndPropertyMask)
        connection.selectRandRNotifications()
        // Selection first, then the tree: a window created in between shows up in both, which
        // is harmless; the other order could miss it.
        guard let tree = connection.queryTree(root) else { return }
        for window in tree.children { addTopLevel(window, overrideRedirect: false) }
        watch(tree.children, connection)
        xStackingOrder = tree.children
    }

    /// Reads override-redirect and class of new top-levels and selects events on the ones that
    /// can be clients.
    func watch(_ windows: [xcb_window_t], _ connection: XConnection) {
        let cookies = windows.map { connection.sendGetAttributes($0) }
        for (window, cookie) in zip(windows, cookies) {
            guard let attributes = connection.attributes(cookie) else {
                removeTopLevel(window)
                continue
            }
            topLevels[window]?.overrideRedirect = attributes.overrideRedirect
            topLevels[window]?.isInputOnly = attributes.isInputOnly
            if topLevels[window]?.isCandidate == true {
                connection.selectInput(window: window, mask: XConnection.frameMask)
            }
        }
    }

    func refresh(_ connection: XConnection) {
        if rootNeedsProperties { refreshRootProperties(connection) }
        resolveClients(connection)
        refreshWindows(connection)
        if stackingNeedsRefresh { refreshStacking(connection) }
        if monitorsNeedRefresh {
            monitors = connection.monitors()
            monitorsNeedRefresh = false
        }
        refreshFocus(connection)
    }

    private func refreshRootProperties(_ connection: XConnection) {
        let check = connection.sendGetProperty(root, atoms.netSupportingWMCheck, maximumItems: 1)
        let desktop = connection.sendGetProperty(root, atoms.netCurrentDesktop, maximumItems: 1)
        let active = connection.sendGetProperty(root, atoms.netActiveWindow, maximumItems: 1)
        let stacking = connection.sendGetProperty(root, atoms.netClientListStacking, maximumItems: 4096)
        let checkWindow = connection.property(check)?.values32.first
        currentDesktop = connection.property(desktop)?.values32.first
        netActiveWindow = connection.property(active)?.values32.first.flatMap { $0 == 0 ? nil : $0 }
        let stackingProperty = connection.property(stacking)
        ewmhStackingOrder = stackingProperty?.exists == true ? stackingProperty?.values32 : nil
        // A manager that died leaves its check property on the root; the check window itself
        // (which must carry the same property) dies with it.
        if let checkWindow {
            hasEWMHWindowManager = connection.property(connection.sendGetProperty(checkWindow, atoms.netSupportingWMCheck, maximumItems: 1))?.exists == true
        } else {
            hasEWMHWindowManager = false
        }
        rootNeedsProperties = false
    }

    private func resolveClients(_ connection: XConnection) {
        for (frame, topLevel) in topLevels where topLevel.needsResolve {
            topLevels[frame]?.needsResolve = false
            guard topLevel.isCandidate else { continue }
            let client = findClient(of: frame, connection)
            guard client != topLevel.clientID else { continue }
            if let old = topLevel.clientID, frameOfClient[old] == frame { frameOfClient.removeValue(forKey: old) }
            topLevels[frame]?.clientID = client
            topLevels[frame]?.needsGeometry = true
            topLevels[frame]?.needsProperties = true
            if let client {
                frameOfClient[client] = frame
                if client != frame { connection.selectInput(window: client, mask: XConnection.clientMask) }
            }
            stackingNeedsRefresh = true
        }
    }

    /// Breadth first, at most three levels below the frame (frame → wrapper → client is the
    /// deepest nesting common managers use).
    private func findClient(of frame: xcb_window_t, _ connection: XConnection) -> xcb_window_t? {
        var level = [frame]
        for _ in 0 ..< 4 {
            let cookies = level.map {
                (connection.sendGetProperty($0, atoms.wmState, maximumItems: 1),
                 connection.sendGetProperty($0, atoms.wmClass, maximumItems: 1))
            }
            var found: xcb_window_t?
            for (window, (state, windowClass)) in zip(level, cookies) {
                let marked = connection.property(state)?.exists == true || connection.property(windowClass)?.exists == true
                if marked && found == nil { found = window }
            }
            if let found { return found }
            level = level.flatMap { connection.queryTree($0)?.children ?? [] }
            if level.isEmpty { return nil }
        }
        return nil
    }

    private struct WindowCookies {
        var frame: xcb_window_t
        var client: xcb_window_t
        var origin: xcb_translate_coordinates_cookie_t?
        var size: xcb_get_geometry_cookie_t?
        var attributes: xcb_get_window_attributes_cookie_t?
        var netState: xcb_get_property_cookie_t?
        var wmState: xcb_get_property_cookie_t?
        var desktop: xcb_get_property_cookie_t?
        var pid: xcb_get_property_cookie_t?
        var netName: xcb_get_property_cookie_t?
        var name: xcb_get_property_cookie_t?
        var windowClass: xcb_get_property_cookie_t?
    }

    private func refreshWindows(_ connection: XConnection) {
        var pending: [WindowCookies] = []
        for (frame, topLevel) in topLevels where topLevel.needsGeometry || topLevel.needsProperties {
            guard let client = topLevel.clientID else { continue }
            var cookies = WindowCookies(frame: frame, client: client)
            if topLevel.needsGeometry {
                cookies.origin = connection.sendTranslateToRoot(client)
                cookies.size = connection.sendGetGeometry(client)
                cookies.attributes = connection.sendGetAttributes(client)
            }
            if topLevel.needsProperties {
                cookies.netState = connection.sendGetProperty(client, atoms.netWMState)
                cookies.wmState = connection.sendGetProperty(client, atoms.wmState, maximumItems: 1)
                cookies.desktop = connection.sendGetProperty(client, atoms.netWMDesktop, maximumItems: 1)
                cookies.pid = connection.sendGetProperty(client, atoms.netWMPID, maximumItems: 1)
                // Titles and classes past 1 KiB are cut (items are 32-bit units).
                cookies.netName = connection.sendGetProperty(client, atoms.netWMName, maximumItems: 256)
                cookies.name = connection.sendGetProperty(client, atoms.wmName, maximumItems: 256)
                cookies.windowClass = connection.sendGetProperty(client, atoms.wmClass, maximumItems: 256)
            }
            pending.append(cookies)
            topLevels[frame]?.needsGeometry = false
            topLevels[frame]?.needsProperties = false
        }
        for cookies in pending {
            // Read every reply even for a window found gone, so none is left in XCB's queue.
            let origin = cookies.origin.flatMap { connection.rootOrigin($0) }
            let size = cookies.size.flatMap { connection.size($0) }
            let attributes = cookies.attributes.flatMap { connection.attributes($0) }
            let netState = cookies.netState.flatMap { connection.property($0) }
            let wmState = cookies.wmState.flatMap { connection.property($0) }
            let desktop = cookies.desktop.flatMap { connection.property($0) }
            let pid = cookies.pid.flatMap { connection.property($0) }
            let netName = cookies.netName.flatMap { connection.property($0) }
            let name = cookies.name.flatMap { connection.property($0) }
            let windowClass = cookies.windowClass.flatMap { connection.property($0) }
            guard var topLevel = topLevels[cookies.frame], topLevel.clientID == cookies.client else { continue }
            if let origin, let size {
                topLevel.rectPixels = PixelRect(xPixels: origin.x, yPixels: origin.y,
                                                widthPixels: size.widthPixels, heightPixels: size.heightPixels)
            }
            if let attributes { topLevel.isViewable = attributes.isViewable }
            if let netState {
                topLevel.isHidden = netState.values32.contains(atoms.netWMStateHidden)
                topLevel.isFullscreen = netState.values32.contains(atoms.netWMStateFullscreen)
                topLevel.demandsAttention = netState.values32.contains(atoms.netWMStateDemandsAttention)
            }
            // ICCCM WM_STATE: 0 Withdrawn, 1 Normal, 3 Iconic.
            if let wmState { topLevel.isIconic = wmState.values32.first == 3 }
            if let desktop { topLevel.desktop = desktop.values32.first }
            if let pid { topLevel.pid = pid.values32.first.map { Int32(bitPattern: $0) } }
            if netName != nil || name != nil {
                let title = netName?.exists == true ? netName : name
                topLevel.title = title?.strings.first.flatMap { $0.isEmpty ? nil : $0 }
            }
            // WM_CLASS is "instance\0Class\0"; the class names the application ("XTerm", "firefox").
            if let windowClass {
                let parts = windowClass.strings
                topLevel.applicationName = parts.count > 1 && !parts[1].isEmpty ? parts[1] : parts.first.flatMap { $0.isEmpty ? nil : $0 }
            }
            topLevels[cookies.frame] = topLevel
        }
    }

    private func refreshStacking(_ connection: XConnection) {
        guard let tree = connection.queryTree(root) else { return }
        xStackingOrder = tree.children
        // Repair: a window whose CreateNotify raced our selection, or one destroyed unseen.
        let present = Set(tree.children)
        let missing = tree.children.filter { topLevels[$0] == nil }
        for window in missing { addTopLevel(window, overrideRedirect: false) }
        if !missing.isEmpty { watch(missing, connection) }
        for window in topLevels.keys where !present.contains(window) { removeTopLevel(window) }
        stackingNeedsRefresh = false
    }

    /// `--window active` without an EWMH manager: the client holding the input focus.
    private func refreshFocus(_ connection: XConnection) {
        guard !(hasEWMHWindowManager && netActiveWindow != nil) else { return }
        guard let focus = connection.inputFocus(), focus > 1 else {  // 0 None, 1 PointerRoot
            focusedClient = nil
            return
        }
        // Unchanged focus on a window still tracked: skip the walk up the tree.
        if focus == lastFocusWindow, let client = focusedClient, frameOfClient[client] != nil { return }
        lastFocusWindow = focus
        var window = focus
        for _ in 0 ..< 16 {
            if let frame = frame(of: window) {
                focusedClient = topLevels[frame]?.clientID
                return
            }
            guard let parent = connection.queryTree(window)?.parent, parent != 0, parent != root else { break }
            window = parent
        }
        focusedClient = nil
    }
}
