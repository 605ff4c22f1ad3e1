// SceneSound's KWin script: tells scenesoundd where every window is, so that sounds follow
// native Wayland windows (Wayland gives clients no global positions; a KWin script sees them).
//
// scenesoundd writes a copy of this file per run with @SCENESOUND_BUS_NAME@ replaced by its
// unique name on the session bus, loads it (org.kde.kwin.Scripting.loadScript), and unloads it
// at exit. It only reads: it changes nothing in KWin. On every change (window added, removed,
// moved, resized, minimized, sent to another desktop or activity, activated; outputs changed)
// it sends the whole state as one JSON string to org.scenesound.KWin1.Report, which the daemon
// accepts from KWin alone. Events only, no timers.
//
// Both scripting APIs: Plasma 5.27 (clientList, clientAdded, activeClient, numScreens) and
// Plasma 6 (windowList, windowAdded, activeWindow, screens), told apart by what exists.
(function () {
    "use strict";
    var service = "@SCENESOUND_BUS_NAME@";
    // Installed where KWin lists packaged scripts, so a user may enable it by hand: without the
    // daemon's copy (a bus name starts with ':') it has no one to report to, and does nothing.
    if (service.charAt(0) !== ":") return;
    var plasma6 = typeof workspace.windowList === "function";

    function windowList() { return plasma6 ? workspace.windowList() : workspace.clientList(); }
    function activeWindow() { return plasma6 ? workspace.activeWindow : workspace.activeClient; }
    function uuid(window) { return String(window.internalId).replace(/[{}]/g, ""); }

    function isOnCurrentDesktop(window) {
        if (window.onAllDesktops) return true;
        if (plasma6) {
            var current = workspace.currentDesktop;
            var desktops = window.desktops || [];
            for (var i = 0; i < desktops.length; i++) {
                if (desktops[i] === current || (current && desktops[i].id === current.id)) return true;
            }
            return false;
        }
        return window.desktop === workspace.currentDesktop;
    }

    function isOnCurrentActivity(window) {
        var activities = window.activities || [];
        if (activities.length === 0) return true;  // on every activity
        return activities.indexOf(workspace.currentActivity) >= 0;
    }

    function desktopNumber(window) {
        if (window.onAllDesktops) return null;
        if (plasma6) {
            var desktops = window.desktops || [];
            return desktops.length > 0 ? desktops[0].x11DesktopNumber : null;
        }
        return window.desktop;
    }

    function outputs() {
        var list = [];
        if (plasma6 && workspace.screens) {
            for (var i = 0; i < workspace.screens.length; i++) {
                var output = workspace.screens[i];
                var g = output.geometry;
                list.push({ name: String(output.name), x: g.x, y: g.y, width: g.width, height: g.height,
                            scale: output.devicePixelRatio || 1 });
            }
        } else {
            for (var s = 0; s < workspace.numScreens; s++) {
                var area = workspace.clientArea(KWin.ScreenArea, s, workspace.currentDesktop);
                // 5.27's scripts see no output names or scales.
                list.push({ name: "screen-" + s, x: area.x, y: area.y, width: area.width, height: area.height, scale: null });
            }
        }
        return list;
    }

    function describe(window) {
        // The content area where KWin has it apart (6.x), else the frame (5.27; without server-side
        // decorations the two are the same).
        var g = window.clientGeometry || window.frameGeometry;
        return {
            id: uuid(window),
            pid: window.pid,
            appId: String(window.desktopFileName || ""),
            resourceClass: String(window.resourceClass || ""),
            caption: String(window.caption || ""),
            x: g.x, y: g.y, width: g.width, height: g.height,
            minimized: !!window.minimized,
            onCurrentDesktop: isOnCurrentDesktop(window),
            onCurrentActivity: isOnCurrentActivity(window),
            desktop: desktopNumber(window),
            fullScreen: !!window.fullScreen,
            demandsAttention: !!window.demandsAttention,
            hidden: !!window.hidden,
            windowId: window.windowId || 0,  // the X11 id of an XWayland window
            stackingOrder: window.stackingOrder || 0
        };
    }

    function isReported(window) {
        return window && !window.deleted && (window.normalWindow || window.dialog) && !window.specialWindow;
    }

    var watched = [];

    function report(leaving) {
        var windows = [];
        var list = windowList();
        for (var i = 0; i < list.length; i++) {
            var window = list[i];
            if (window === leaving || !isReported(window)) continue;
            windows.push(describe(window));
        }
        var active = activeWindow();
        var state = {
            version: 1,
            api: plasma6 ? 6 : 5,
            windows: windows,
            active: isReported(active) && active !== leaving ? uuid(active) : null,
            outputs: outputs()
        };
        callDBus(service, "/org/scenesound/KWin", "org.scenesound.KWin1", "Report", JSON.stringify(state));
    }

    function onChange() { report(null); }

    function connect(object, signalName, handler) {
        var signal = object[signalName];
        if (signal && typeof signal.connect === "function") signal.connect(handler);
    }

    var windowSignals = ["frameGeometryChanged", "minimizedChanged",
                         "desktopChanged", "desktopsChanged", "activitiesChanged", "captionChanged",
                         "stackingOrderChanged", "fullScreenChanged", "demandsAttentionChanged", "desktopFileNameChanged",
                         "hiddenChanged", "outputChanged", "screenChanged", "windowShown", "windowHidden"];

    function watch(window) {
        if (!window || watched.indexOf(window) >= 0) return;
        watched.push(window);
        for (var i = 0; i < windowSignals.length; i++) connect(window, windowSignals[i], onChange);
    }

    function added(window) {
        watch(window);
        report(null);
    }

    function removed(window) {
        var index = watched.indexOf(window);
        if (index >= 0) watched.splice(index, 1);
        report(window);
    }

    connect(workspace, plasma6 ? "windowAdded" : "clientAdded", added);
    connect(workspace, plasma6 ? "windowRemoved" : "clientRemoved", removed);
    connect(workspace, plasma6 ? "windowActivated" : "clientActivated", onChange);
    var workspaceSignals = ["currentDesktopChanged", "currentActivityChanged", "numberScreensChanged", "screenResized",
                            "screensChanged", "virtualScreenGeometryChanged", "virtualScreenSizeChanged"];
    for (var s = 0; s < workspaceSignals.length; s++) connect(workspace, workspaceSignals[s], onChange);

    var initial = windowList();
    for (var i = 0; i < initial.length; i++) watch(initial[i]);
    report(null);
})();
