// SceneSound's window geometry over D-Bus, shared by both variants of the extension.
// This file neither imports nor exports: the GNOME 43-44 variant loads it as a legacy script
// (top-level `var`s become the module's properties), and the 45+ variant is assembled from it
// with an `export` line appended (packaging/install-gnome-extension.sh), so the same code
// runs under both module systems. Everything it needs from the Shell is handed in.
//
// Read-only by design: one method that returns the state, one signal that says it changed.
// Nothing here moves, focuses or otherwise changes a window.

var INTERFACE_XML = `
<node>
  <interface name="org.scenesound.Windows1">
    <method name="GetState">
      <arg type="s" direction="out" name="state"/>
    </method>
    <signal name="Changed">
      <arg type="t" name="serial"/>
    </signal>
    <property name="InterfaceVersion" type="u" access="read"/>
  </interface>
</node>`;

var OBJECT_PATH = '/org/scenesound/Windows';
var INTERFACE_VERSION = 1;

// Changes are coalesced: one Changed signal at most this often (a window dragged moves on
// every frame; the daemon re-reads the state on each signal). The first change after a quiet
// spell is sent as soon as the main loop is idle (what one dispatch changes makes one signal).
var COALESCE_MILLISECONDS = 10;

var WindowsService = class WindowsService {
    // shell: {Gio, GLib, Meta, global, layoutManager, shellVersion}
    constructor(shell) {
        this._shell = shell;
        this._serial = 0;
        this._pendingSource = 0;
        this._lastSignalMicroseconds = 0;
        // [object, [handler ids]]: every connection made, disconnected in stop().
        this._connections = new Map();
        this._exported = null;
        this._mutterSettings = null;
    }

    start() {
        const {Gio, global, layoutManager} = this._shell;
        const display = global.display;
        this._mutterSettings = new Gio.Settings({schema_id: 'org.gnome.mutter'});
        this._connect(display, [
            ['window-created', (_display, window) => { this._watchWindow(window); this._changed(); }],
            ['notify::focus-window', () => this._changed()],
            ['restacked', () => this._changed()],
        ]);
        this._connect(global.workspace_manager, [
            ['active-workspace-changed', () => this._changed()],
            ['workspace-added', () => this._changed()],
            ['workspace-removed', () => this._changed()],
            ['workspaces-reordered', () => this._changed()],
        ]);
        this._connect(layoutManager, [['monitors-changed', () => this._changed()]]);
        for (const window of allWindows(global))
            this._watchWindow(window);

        this._exported = Gio.DBusExportedObject.wrapJSObject(INTERFACE_XML, this);
        this._exported.export(Gio.DBus.session, OBJECT_PATH);
        // Once at enable: a client waiting for the extension learns it is there.
        this._changed();
    }

    stop() {
        const {GLib} = this._shell;
        if (this._exported) {
            // Once at disable, before the object goes: a client learns it is gone.
            this._serial += 1;
            this._exported.emit_signal('Changed', new GLib.Variant('(t)', [this._serial]));
            this._exported.unexport();
            this._exported = null;
        }
        if (this._pendingSource) {
            GLib.source_remove(this._pendingSource);
            this._pendingSource = 0;
        }
        for (const [object, ids] of this._connections) {
            for (const id of ids)
                object.disconnect(id);
        }
        this._connections.clear();
        this._mutterSettings = null;
    }

    // D-Bus: the whole state as JSON (docs/GNOME-EXTENSION.md describes every field).
    GetState() {
        return JSON.stringify(this._state());
    }

    get InterfaceVersion() {
        return INTERFACE_VERSION;
    }

    _connect(object, handlers) {
        const ids = this._connections.get(object) ?? [];
        for (const [name, handler] of handlers)
            ids.push(object.connect(name, handler));
        this._connections.set(object, ids);
    }

    _watchWindow(window) {
        if (this._connections.has(window) || window.is_override_redirect())
            return;
        this._connect(window, [
            ['position-changed', () => this._changed()],
            ['size-changed', () => this._changed()],
            ['workspace-changed', () => this._changed()],
            ['notify::minimized', () => this._changed()],
            ['notify::fullscreen', () => this._changed()],
            ['notify::on-all-workspaces', () => this._changed()],
            ['notify::title', () => this._changed()],
            ['notify::wm-class', () => this._changed()],
            ['notify::gtk-application-id', () => this._changed()],
            ['unmanaged', () => { this._forgetWindow(window); this._changed(); }],
        ]);
    }

    _forgetWindow(window) {
        for (const id of this._connections.get(window) ?? [])
            window.disconnect(id);
        this._connections.delete(window);
    }

    _changed() {
        const {GLib} = this._shell;
        if (this._pendingSource)
            return;
        const send = () => {
            this._pendingSource = 0;
            this._serial += 1;
            this._lastSignalMicroseconds = GLib.get_monotonic_time();
            this._exported?.emit_signal('Changed', new GLib.Variant('(t)', [this._serial]));
            return GLib.SOURCE_REMOVE;
        };
        const sinceLast = (GLib.get_monotonic_time() - this._lastSignalMicroseconds) / 1000;
        this._pendingSource = sinceLast >= COALESCE_MILLISECONDS
            ? GLib.idle_add(GLib.PRIORITY_DEFAULT, send)
            : GLib.timeout_add(GLib.PRIORITY_DEFAULT, Math.ceil(COALESCE_MILLISECONDS - sinceLast), send);
    }

    // Mutter lays monitors out in logical pixels only on Wayland with its scale-monitor-framebuffer
    // feature (what turning on fractional scaling enables); else in physical pixels.
    _layoutPixels() {
        const {Meta} = this._shell;
        // Mutter without X11 sessions may drop the question; it then is a Wayland compositor.
        const wayland = typeof Meta.is_wayland_compositor === 'function' ? Meta.is_wayland_compositor() : true;
        const logical = wayland &&
            this._mutterSettings.get_strv('experimental-features').includes('scale-monitor-framebuffer');
        return logical ? 'logical' : 'physical';
    }

    _state() {
        const {global, Meta} = this._shell;
        const display = global.display;
        const workspaceManager = global.workspace_manager;
        const activeWorkspace = workspaceManager.get_active_workspace();
        const focused = display.focus_window;
        const windows = allWindows(global).filter(window => !window.is_override_redirect());
        const monitors = [];
        const primary = display.get_primary_monitor();
        for (let index = 0; index < display.get_n_monitors(); index++) {
            const rect = display.get_monitor_geometry(index);
            monitors.push({
                index,
                xPixels: rect.x, yPixels: rect.y, widthPixels: rect.width, heightPixels: rect.height,
                scale: display.get_monitor_scale(index),
                primary: index === primary,
            });
        }
        return {
            interfaceVersion: INTERFACE_VERSION,
            serial: this._serial,
            shellVersion: this._shell.shellVersion,
            focusedWindowId: focused ? focused.get_id() : null,
            activeWorkspace: activeWorkspace.index(),
            layoutPixels: this._layoutPixels(),
            monitors,
            // Bottom to top.
            windows: display.sort_windows_by_stacking(windows).map(window => {
                const rect = window.get_frame_rect();
                const workspace = window.get_workspace();
                const isX11 = window.get_client_type() === Meta.WindowClientType.X11;
                return {
                    id: window.get_id(),
                    xPixels: rect.x, yPixels: rect.y, widthPixels: rect.width, heightPixels: rect.height,
                    pid: window.get_pid(),
                    appId: window.get_sandboxed_app_id() || window.get_gtk_application_id() || window.get_wm_class() || null,
                    sandboxedAppId: window.get_sandboxed_app_id() || null,
                    gtkApplicationId: window.get_gtk_application_id() || null,
                    wmClass: window.get_wm_class() || null,
                    title: window.get_title() || null,
                    minimized: window.minimized,
                    fullscreen: window.is_fullscreen(),
                    workspace: window.is_on_all_workspaces() || !workspace ? -1 : workspace.index(),
                    onActiveWorkspace: window.located_on_workspace(activeWorkspace),
                    clientType: isX11 ? 'x11' : 'wayland',
                    // Mutter describes an X11 window by its id ("0x1c00003"); meta_window_get_xwindow
                    // is not introspectable in 43.
                    x11WindowId: isX11 ? x11WindowID(window.get_description()) : null,
                    monitor: window.get_monitor(),
                    windowType: windowTypeName(Meta, window.get_window_type()),
                };
            }),
        };
    }
};

// Every managed window, mapped or not yet (a window just created may have no actor yet).
function allWindows(global) {
    return global.display.list_all_windows();
}

function x11WindowID(description) {
    const match = /^0x[0-9a-fA-F]+/.exec(description ?? '');
    return match ? parseInt(match[0], 16) : null;
}

function windowTypeName(Meta, type) {
    for (const [name, value] of Object.entries(Meta.WindowType)) {
        if (value === type)
            return name.toLowerCase();
    }
    return 'unknown';
}
