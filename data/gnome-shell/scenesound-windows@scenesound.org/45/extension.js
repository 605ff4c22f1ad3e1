// SceneSound Windows, GNOME Shell 45 and later (an ES module).
// The work is in windowsService.js, shared with the 43-44 variant.
import Gio from 'gi://Gio';
import GLib from 'gi://GLib';
import Meta from 'gi://Meta';
import * as Main from 'resource:///org/gnome/shell/ui/main.js';
import * as Config from 'resource:///org/gnome/shell/misc/config.js';
import {Extension} from 'resource:///org/gnome/shell/extensions/extension.js';
import {WindowsService} from './windowsService.js';

export default class SceneSoundWindowsExtension extends Extension {
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
