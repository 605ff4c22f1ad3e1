import Foundation
import Testing
import SceneSoundTestSupport
import SceneSoundWindows
@testable import SceneSoundWayland

/// The outputs' millimetres over a Wayland connection of our own, against real compositors:
/// weston's headless output reports a physical size (1 mm per pixel), KWin's virtual one −1 mm
/// (unknown, so 96 dpi stays).
@Suite(.serialized) struct WaylandOutputsTests {
    static func monitor(name: String) -> Monitor {
        Monitor(name: name, rectPixels: PixelRect(xPixels: 0, yPixels: 0, widthPixels: 1920, heightPixels: 1080),
                widthMillimetres: MonitorLayout.assumedMillimetres(logicalPixels: 1920, scale: 1),
                heightMillimetres: MonitorLayout.assumedMillimetres(logicalPixels: 1080, scale: 1),
                isPrimary: true, physicalSizeSource: .assumed96DPI)
    }

    @Test func westonsOutputMillimetresAreRead() throws {
        var template = Array("/tmp/sss-weston-XXXXXX".utf8CString)
        let directory = String(cString: try #require(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let weston = try ChildProcess("/usr/bin/weston", ["--backend=headless-backend.so", "--socket=wayland-sss", "--width=1920",
                                                          "--height=1080", "--shell=desktop-shell.so"],
                                      display: nil, errorPath: directory + "/weston.log", environment: ["XDG_RUNTIME_DIR": directory])
        defer { weston.kill() }
        let socket = directory + "/wayland-sss"
        var outputs: [WaylandOutput]?
        #expect(waitUntil(timeoutSeconds: 15) {
            outputs = FileManager.default.fileExists(atPath: socket) ? WaylandOutputs.read(display: socket) : nil
            return (outputs?.count ?? 0) > 0 || !weston.isRunning
        })
        let output = try #require(outputs?.first, "\((try? String(contentsOfFile: directory + "/weston.log", encoding: .utf8)) ?? "")")
        print("weston headless: wl_output at (\(output.xPixels), \(output.yPixels)) \(output.widthMillimetres)×\(output.heightMillimetres) mm, mode \(output.modeWidthPixels)×\(output.modeHeightPixels), scale \(output.scale)")
        #expect(output.hasPhysicalSize && output.widthMillimetres == 1920 && output.heightMillimetres == 1080)
        #expect(output.modeWidthPixels == 1920 && output.modeHeightPixels == 1080 && output.scale == 1)

        // Matched by origin (weston 10's wl_output is version 3: no name).
        var monitors = [Self.monitor(name: "HEADLESS-1")]
        WaylandOutputs.applyPhysicalSizes([output], to: &monitors)
        #expect(monitors[0].widthMillimetres == 1920 && monitors[0].physicalSizeSource == .waylandOutput)
    }

    @Test func kwinsVirtualOutputHasNoSizeAndKeeps96DPI() throws {
        let kwin = try KWinFixture()
        defer { kwin.stopAll() }
        let outputs = try #require(WaylandOutputs.read(display: kwin.runtimeDirectory + "/" + kwin.waylandDisplay))
        let output = try #require(outputs.first)
        print("KWin virtual: wl_output \(output.name ?? "(no name)") at (\(output.xPixels), \(output.yPixels)) \(output.widthMillimetres)×\(output.heightMillimetres) mm, mode \(output.modeWidthPixels)×\(output.modeHeightPixels)")
        #expect(outputs.count == 1 && !output.hasPhysicalSize)
        #expect(output.modeWidthPixels == 1920 && output.modeHeightPixels == 1080)
        var monitors = [Self.monitor(name: "screen-0")]
        let before = monitors
        WaylandOutputs.applyPhysicalSizes(outputs, to: &monitors)
        #expect(monitors == before)
    }

    @Test func noDisplayIsNilAndNamesWinOverOrigins() {
        #expect(WaylandOutputs.read(display: "/tmp/sss-no-such-wayland-socket") == nil)
        let left = WaylandOutput(name: "DP-1", xPixels: 1920, yPixels: 0, widthMillimetres: 600, heightMillimetres: 340,
                                 modeWidthPixels: 2560, modeHeightPixels: 1440, scale: 1)
        let unknown = WaylandOutput(name: "DP-2", xPixels: 0, yPixels: 0, widthMillimetres: 0, heightMillimetres: 0,
                                    modeWidthPixels: 1920, modeHeightPixels: 1080, scale: 1)
        var monitors = [Self.monitor(name: "DP-1"), Self.monitor(name: "DP-2")]
        WaylandOutputs.applyPhysicalSizes([unknown, left], to: &monitors)
        #expect(monitors[0].widthMillimetres == 600 && monitors[0].heightMillimetres == 340 && monitors[0].physicalSizeSource == .waylandOutput)
        #expect(monitors[1].physicalSizeSource == .assumed96DPI)
    }

    /// A compositor that accepts the connection and never answers holds the reading (the window
    /// source's thread, and the daemon's exit that joins it) for one deadline, not for ever.
    @Test func aCompositorThatNeverAnswersIsGivenUpOn() throws {
        let path = "/tmp/sss-silent-wayland-\(getpid())"
        unlink(path)
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener); unlink(path) }
        try #require(withUnixSocketAddress(path) { bind(listener, $0, $1) } == 0 && listen(listener, 4) == 0)
        let started = Date()
        let outputs = WaylandOutputs.read(display: path)
        let seconds = Date().timeIntervalSince(started)
        print(String(format: "a silent compositor: given up after %.2f s", seconds))
        #expect(outputs == nil && seconds >= 1.5 && seconds < 5)
    }
}

/// The millimetres follow the desk: read again when a monitor is plugged in, and only then.
@Suite struct WaylandOutputsCacheTests {
    static func monitor(_ name: String, x: Int) -> Monitor {
        var monitor = WaylandOutputsTests.monitor(name: name)
        monitor.rectPixels.xPixels = x
        return monitor
    }

    static func output(_ name: String, x: Int, widthMillimetres: Int) -> WaylandOutput {
        WaylandOutput(name: name, xPixels: x, yPixels: 0, widthMillimetres: widthMillimetres, heightMillimetres: 300,
                      modeWidthPixels: 1920, modeHeightPixels: 1080, scale: 1)
    }

    @Test func aMonitorPluggedInIsMeasuredAndAnUnchangedDeskIsNotReadAgain() {
        final class Compositor: @unchecked Sendable { var outputs: [WaylandOutput] = [] }
        let compositor = Compositor()
        compositor.outputs = [Self.output("DP-1", x: 0, widthMillimetres: 530)]
        var cache = WaylandOutputsCache { compositor.outputs }
        var monitors = [Self.monitor("DP-1", x: 0)]
        cache.applyPhysicalSizes(to: &monitors)
        #expect(monitors[0].widthMillimetres == 530 && cache.readCount == 1)
        for _ in 0 ..< 3 {
            var again = [Self.monitor("DP-1", x: 0)]
            cache.applyPhysicalSizes(to: &again)
            #expect(again[0].widthMillimetres == 530)
        }
        #expect(cache.readCount == 1, "read \(cache.readCount) times for an unchanged desk")

        // A second monitor: its compositor reports it before its wl_output is advertised, so
        // the first reading misses it; the next query looks once more and finds it.
        var plugged = [Self.monitor("DP-1", x: 0), Self.monitor("HDMI-A-1", x: 1920)]
        cache.applyPhysicalSizes(to: &plugged)
        #expect(cache.readCount == 2 && plugged[1].physicalSizeSource == .assumed96DPI)
        compositor.outputs.append(Self.output("HDMI-A-1", x: 1920, widthMillimetres: 600))
        plugged = [Self.monitor("DP-1", x: 0), Self.monitor("HDMI-A-1", x: 1920)]
        cache.applyPhysicalSizes(to: &plugged)
        #expect(cache.readCount == 3 && plugged[1].widthMillimetres == 600 && plugged[1].physicalSizeSource == .waylandOutput)
        plugged = [Self.monitor("DP-1", x: 0), Self.monitor("HDMI-A-1", x: 1920)]
        cache.applyPhysicalSizes(to: &plugged)
        #expect(cache.readCount == 3)

        // One that never gets a wl_output (a synthetic name elsewhere) is not looked for at every query.
        var ghost = [Self.monitor("DP-1", x: 0), Self.monitor("ghost", x: 5000)]
        for _ in 0 ..< 4 { cache.applyPhysicalSizes(to: &ghost); ghost = [Self.monitor("DP-1", x: 0), Self.monitor("ghost", x: 5000)] }
        #expect(cache.readCount == 5, "read \(cache.readCount) times")
    }
}
