// SceneSound Windows, GNOME Shell 43-44 (legacy extension: imports, init/enable/disable).
// The work is in windowsService.js, shared with the 45+ variant.
'use strict';

const {Gio, GLib, Meta} = imports.gi;
const Main = imports.ui.main;
const Config = imports.misc.config;
const Me = imports.misc.extensionUtils.getCurrentExtension();
const {WindowsService} = Me.imports.windowsService;

class SceneSoundWindowsExtension {
    enable() {
        this._service = new WindowsService({
            Gio, GLib, Meta, global, layoutManager: Main.layoutManager, shellVersion: Config.PACKAGE_VERSION,
        });
        this._service.start();
    }

    disable() {
        this._service?.stop();
        this._service = null;
    }
}

function init() {
    return new SceneSoundWindowsExtension();
}
