import SceneSoundTestSupport
import SceneSoundDSP
import Testing
import SceneSoundProtocol
@testable import SceneSoundWindows

@Suite struct ScreenSpaceTests {
    /// 1920x1080 at 96 dpi: 25.4/96 mm per pixel, 508 x 285.75 mm.
    static let single = MonitorLayout.resolve(
        randrMonitors: [],
        coreScreen: .init(widthPixels: 1920, heightPixels: 1080, widthMillimetres: 0, heightMillimetres: 0))
    static let millimetresPerPixel = 25.4 / 96

    @Test func screenCentreIsStraightAheadAtListenerDistance() {
        let space = ScreenSpace(monitors: Self.single)
        let centre = space.position(xPixels: 960, yPixels: 540)
        #expect(abs(centre.x) < 1e-12 && abs(centre.y) < 1e-12)
        #expect(centre.z == -0.6)
    }

    @Test func edgesAreHalfTheScreenAway() {
        let space = ScreenSpace(monitors: Self.single)
        #expect(abs(space.position(xPixels: 0, yPixels: 540).x - -0.254) < 1e-12)
        #expect(abs(space.position(xPixels: 1920, yPixels: 540).x - 0.254) < 1e-12)
        // Pixel y grows downwards, space y upwards.
        #expect(abs(space.position(xPixels: 960, yPixels: 0).y - 0.142875) < 1e-12)
        #expect(abs(space.position(xPixels: 960, yPixels: 1080).y - -0.142875) < 1e-12)
    }

    @Test func listenerDistanceIsConfigurable() {
        #expect(ScreenSpace(monitors: Self.single, listenerDistanceMetres: 0.8).position(xPixels: 0, yPixels: 0).z == -0.8)
    }

    @Test func windowCentreWidthAndStereoThirds() {
        let space = ScreenSpace(monitors: Self.single)
        // 600 px wide at the left edge: centre 300 px, i.e. 660 px left of the screen centre.
        let rect = PixelRect(xPixels: 0, yPixels: 240, widthPixels: 600, heightPixels: 600)
        let centre = space.position(of: rect)
        #expect(abs(centre.x - -660 * Self.millimetresPerPixel / 1000) < 1e-12)
        #expect(abs(centre.y) < 1e-12)
        #expect(abs(space.widthMetres(of: rect) - 0.15875) < 1e-12)
        let (left, right) = space.stereoPositions(of: rect)
        #expect(abs((right.x - left.x) - 2 * 0.15875 / 3) < 1e-12)
        #expect(abs((left.x + right.x) / 2 - centre.x) < 1e-12)
    }

    @Test func secondMonitorLandsWhereItPhysicallyIs() {
        // Primary 1920 px / 508 mm; to its right a 2560x1440 27" (597 x 336 mm) monitor.
        let monitors = MonitorLayout.resolve(randrMonitors: [
            Monitor(name: "A", rectPixels: .init(xPixels: 0, yPixels: 0, widthPixels: 1920, heightPixels: 1080),
                    widthMillimetres: 508, heightMillimetres: 285.75, isPrimary: true),
            Monitor(name: "B", rectPixels: .init(xPixels: 1920, yPixels: 0, widthPixels: 2560, heightPixels: 1440),
                    widthMillimetres: 597, heightMillimetres: 336, isPrimary: false),
        ], coreScreen: .init(widthPixels: 4480, heightPixels: 1440, widthMillimetres: 0, heightMillimetres: 0))
        let space = ScreenSpace(monitors: monitors)
        // B's left edge touches A's right edge: 254 mm right of the listener.
        #expect(abs(space.position(xPixels: 1920, yPixels: 100).x - 0.254) < 1e-12)
        // B's centre: A's half width plus half of B's 597 mm.
        #expect(abs(space.position(xPixels: 3200, yPixels: 720).x - (0.254 + 0.2985)) < 1e-12)
        // Vertically B is scaled by its own 336/1440 mm per pixel from the common top edge.
        let bScaleY = 336.0 / 1440
        #expect(abs(space.position(xPixels: 3200, yPixels: 720).y - (142.875 - 720 * bScaleY) / 1000) < 1e-12)
        // The same window is wider in metres on the coarser monitor.
        let rect = PixelRect(xPixels: 3000, yPixels: 100, widthPixels: 400, heightPixels: 300)
        #expect(abs(space.widthMetres(of: rect) - 400 * 597.0 / 2560 / 1000) < 1e-12)
    }

    @Test func monitorLeftOfPrimaryIsToTheLeft() {
        // Primary at x 1920; a 1280 px / 340 mm monitor to its left.
        let monitors = [
            Monitor(name: "L", rectPixels: .init(xPixels: 0, yPixels: 0, widthPixels: 1280, heightPixels: 1024),
                    widthMillimetres: 340, heightMillimetres: 272, isPrimary: false),
            Monitor(name: "P", rectPixels: .init(xPixels: 1280, yPixels: 0, widthPixels: 1920, heightPixels: 1080),
                    widthMillimetres: 508, heightMillimetres: 285.75, isPrimary: true),
        ]
        let space = ScreenSpace(monitors: monitors)
        #expect(abs(space.position(xPixels: 2240, yPixels: 540).x) < 1e-12)
        #expect(abs(space.position(xPixels: 640, yPixels: 512).x - -(0.254 + 0.170)) < 1e-12)
    }

    @Test func pointOffEveryMonitorUsesTheNearestOnesScale() {
        let space = ScreenSpace(monitors: Self.single)
        #expect(abs(space.position(xPixels: -96, yPixels: 540).x - -(0.254 + 0.0254)) < 1e-12)
    }
}

@Suite struct MonitorLayoutTests {
    static let core = MonitorLayout.CoreScreen(widthPixels: 1920, heightPixels: 1080,
                                               widthMillimetres: 508, heightMillimetres: 286)

    @Test func randrSizesAreKept() {
        let randr = [Monitor(name: "DP-1", rectPixels: .init(xPixels: 0, yPixels: 0, widthPixels: 1920, heightPixels: 1080),
                             widthMillimetres: 600, heightMillimetres: 340, isPrimary: true)]
        let resolved = MonitorLayout.resolve(randrMonitors: randr, coreScreen: Self.core)
        #expect(resolved == randr)
    }

    @Test func monitorWithoutMillimetresTakesTheCoreScreensScale() {
        let randr = [Monitor(name: "R", rectPixels: .init(xPixels: 0, yPixels: 0, widthPixels: 960, heightPixels: 1080),
                             widthMillimetres: 0, heightMillimetres: 0, isPrimary: false)]
        let resolved = MonitorLayout.resolve(randrMonitors: randr, coreScreen: Self.core)
        #expect(resolved[0].widthMillimetres == 254)
        #expect(resolved[0].heightMillimetres == 286)
        #expect(resolved[0].physicalSizeSource == .coreScreen)
        #expect(resolved[0].isPrimary, "the only monitor becomes primary")
    }

    @Test func noRandRMeansTheCoreScreen() {
        let resolved = MonitorLayout.resolve(randrMonitors: [], coreScreen: Self.core)
        #expect(resolved.count == 1)
        #expect(resolved[0].rectPixels == PixelRect(xPixels: 0, yPixels: 0, widthPixels: 1920, heightPixels: 1080))
        #expect(resolved[0].widthMillimetres == 508 && resolved[0].physicalSizeSource == .coreScreen)
    }

    @Test func noMillimetresAnywhereMeans96DPI() {
        let resolved = MonitorLayout.resolve(
            randrMonitors: [],
            coreScreen: .init(widthPixels: 1920, heightPixels: 1080, widthMillimetres: 0, heightMillimetres: 0))
        #expect(abs(resolved[0].widthMillimetres - 508) < 1e-9)
        #expect(abs(resolved[0].heightMillimetres - 285.75) < 1e-9)
        #expect(resolved[0].physicalSizeSource == .assumed96DPI)
    }

    @Test func exactlyOnePrimary() {
        let make = { (name: String, x: Int, primary: Bool) in
            Monitor(name: name, rectPixels: .init(xPixels: x, yPixels: 0, widthPixels: 100, heightPixels: 100),
                    widthMillimetres: 10, heightMillimetres: 10, isPrimary: primary)
        }
        let resolved = MonitorLayout.resolve(randrMonitors: [make("a", 0, false), make("b", 100, true), make("c", 200, true)],
                                             coreScreen: Self.core)
        #expect(resolved.map(\.isPrimary) == [false, true, false])
    }
}

@Suite struct SchedulingTests {
    @Test func publishesAtOnceThenAtMostOncePerInterval() {
        var schedule = PublishSchedule(minimumIntervalNanoseconds: 10_000_000)
        #expect(schedule.nanosecondsUntilAllowed(now: 5) == 0)
        schedule.didPublish(now: 1_000_000)
        #expect(schedule.nanosecondsUntilAllowed(now: 4_000_000) == 7_000_000)
        #expect(schedule.nanosecondsUntilAllowed(now: 11_000_000) == 0)
    }

    @Test func sceneIDsNameTheirWindows() {
        let x11 = TrackedWindow(id: 0x1a0_0003, frameID: 0x1a0_0003, rectPixels: PixelRect(xPixels: 0, yPixels: 0, widthPixels: 1, heightPixels: 1),
                                isViewable: true, isMinimized: false, isFullscreen: false, demandsAttention: false,
                                desktop: nil, isOnCurrentDesktop: true, pid: nil, stackingIndex: 0)
        #expect(x11.sceneID == "x11:0x1a00003")
        var native = x11
        native.nativeID = "42"
        native.id = SceneID.nativeWindowHandle("42")
        #expect(native.sceneID == "wayland:42")
        #expect(SceneID.windowID("wayland:42") == native.id)
    }
}

@Suite struct WindowBackendChoiceTests {
    @Test func autoPicksTheSessionsCompositorElseX11() {
        #expect(WindowBackendChoice.detect(environment: ["SWAYSOCK": "/run/user/1000/sway-ipc.sock", "DISPLAY": ":0"]).choice == .sway)
        #expect(WindowBackendChoice.detect(environment: ["HYPRLAND_INSTANCE_SIGNATURE": "abc_1_2"]).choice == .hyprland)
        #expect(WindowBackendChoice.detect(environment: ["DISPLAY": ":0", "SWAYSOCK": ""]).choice == .x11)
        #expect(WindowBackendChoice.detect(environment: [:]).choice == .none)
        #expect(WindowBackendChoice.acceptedValues == "auto, x11, sway, hyprland, kwin, gnome, none")
    }

    /// KWin and GNOME Shell announce themselves by their names on the session bus, after the
    /// variables of sway and Hyprland and before X11 (both run XWayland with a DISPLAY), in a
    /// Wayland session; on Xorg their windows are X11 windows.
    @Test func autoFindsKWinAndGNOMEShellOnTheSessionBus() {
        let wayland = ["DISPLAY": ":1", "WAYLAND_DISPLAY": "wayland-0"]
        let kwin = WindowBackendChoice.detect(environment: wayland) { $0 == "org.kde.KWin" }
        #expect(kwin.choice == .kwin && kwin.reason == "org.kde.KWin is on the session bus")
        #expect(WindowBackendChoice.detect(environment: wayland) { $0 == "org.gnome.Shell" }.choice == .gnome)
        #expect(WindowBackendChoice.detect(environment: ["XDG_SESSION_TYPE": "wayland"]) { $0 == "org.gnome.Shell" }.choice == .gnome)
        #expect(WindowBackendChoice.detect(environment: ["SWAYSOCK": "/s"]) { _ in true }.choice == .sway)
        #expect(WindowBackendChoice.detect(environment: wayland) { $0 == "org.kde.plasmashell" }.choice == .x11)
        let xorg = WindowBackendChoice.detect(environment: ["DISPLAY": ":0", "XDG_SESSION_TYPE": "x11"]) { $0 == "org.gnome.Shell" }
        #expect(xorg.choice == .x11 && xorg.reason == "DISPLAY is :0 (org.gnome.Shell is on the session bus, in an X11 session)")
        #expect(WindowBackendChoice.detect(environment: ["DISPLAY": ":0"]) { $0 == "org.kde.KWin" }.choice == .x11)
    }
}
