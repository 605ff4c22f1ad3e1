import Foundation
import SceneSoundTestSupport
import Testing
import SceneSoundDSP
import SceneSoundWindows
import SceneSoundX11

extension X11DisplayTests {
    /// Losing the X server, RandR monitors, and coalescing under a burst of moves.
    @Suite struct DisplayLifecycleTests {
        @Test func keepsLastSnapshotAndReconnectsToANewServer() throws {
            let setup = try TrackedXTerm(windowManager: false, geometry: "80x24+300+200")
            defer { setup.stop() }
            let (fixture, harness, xterm, window) = (setup.fixture, setup.harness, setup.xterm, setup.window)

            fixture.killServer()
            let lost = harness.log.wait { !$0.isDisplayConnected }
            #expect(lost?.window(id: window.id)?.rectPixels == window.rectPixels, "last positions kept")
            #expect(harness.tracker.latestSnapshot?.isDisplayConnected == false)
            #expect(!harness.tracker.isConnected)
            xterm.kill()

            let restarted = Date()
            try fixture.restartServer()
            let back = harness.log.wait(timeoutSeconds: 5) { $0.isDisplayConnected }
            #expect(back != nil)
            #expect(back?.window(id: window.id) == nil, "rescanned: the old server's windows are gone")
            print("reconnected \(Int(Date().timeIntervalSince(restarted) * 1000)) ms after the new Xvfb accepted connections")

            let newXTerm = try fixture.openXTerm(geometry: "80x24+50+60")
            #expect(harness.window(ofPID: newXTerm.pid) != nil, "tracks windows of the new server")
        }

        @Test func twoRandRMonitorsPlaceTheRightOneFurtherRight() throws {
            let fixture = try XDisplayFixture(windowManager: false)
            defer { fixture.stopAll() }
            let harness = TrackerHarness(fixture)
            defer { harness.tracker.stop() }
            #expect(harness.log.wait { $0.monitors.count == 1 }?.monitors.first?.widthMillimetres == 508)

            // Split the 1920-pixel screen in two RandR monitors: a 960 px / 254 mm primary on the
            // left (it takes over the "screen" output) and a larger 960 px / 400 mm one on the right.
            try fixture.tool("xrandr", "--setmonitor", "*LEFT", "960/254x1080/286+0+0", "screen")
            try fixture.tool("xrandr", "--setmonitor", "RIGHT", "960/400x1080/450+960+0", "none")
            harness.tracker.refreshMonitors()
            let split = try #require(harness.log.wait { $0.monitors.count == 2 })
            let names = split.monitors.map(\.name)
            #expect(names.contains("LEFT") && names.contains("RIGHT"))
            #expect(split.monitors.first { $0.isPrimary }?.name == "LEFT")

            let edge = try fixture.openXTerm(geometry: "40x10+700+300")
            let right = try fixture.openXTerm(geometry: "40x10+1000+300")
            let edgeWindow = try #require(harness.window(ofPID: edge.pid))
            let rightWindow = try #require(harness.window(ofPID: right.pid))
            #expect(edgeWindow.rectPixels.xPixels + edgeWindow.rectPixels.widthPixels <= 960)
            #expect(rightWindow.rectPixels.xPixels >= 960)

            let space = try #require(harness.tracker.latestSnapshot).screenSpace()
            let edgePosition = space.position(of: edgeWindow.rectPixels)
            let rightPosition = space.position(of: rightWindow.rectPixels)
            #expect(rightPosition.x > edgePosition.x)
            // The listener faces LEFT's centre (pixel 480); RIGHT starts 127 mm to the right of it
            // and its pixels are 400/960 mm wide.
            let expectedX = (127 + (rightWindow.rectPixels.centreXPixels - 960) * 400 / 960) / 1000
            #expect(abs(rightPosition.x - expectedX) < 1e-9)
            print("edge of LEFT at x=\(edgePosition.x) m, window on RIGHT at x=\(rightPosition.x) m")
        }

        @Test func coalescesABurstAndPublishesTheFinalGeometryPromptly() throws {
            let setup = try TrackedXTerm(windowManager: false, geometry: "80x24+0+100")
            defer { setup.stop() }
            let (fixture, harness, window) = (setup.fixture, setup.harness, setup.window)
            let id = String(window.id)

            for (name, pauseSeconds) in [("burst", nil), ("drag at ~250 moves/s", "0.004")] as [(String, String?)] {
                let first = harness.log.all.count
                var arguments: [String] = []
                for step in 1 ... 200 {
                    if let pauseSeconds {
                        // --sync makes xdotool flush (and see) each move; without it the moves
                        // sit in Xlib's buffer through the sleeps and leave as one burst.
                        arguments += ["windowmove", "--sync", id, String(step * 5 + 1), "100", "sleep", pauseSeconds]
                    } else {
                        arguments += ["windowmove", id, String(step * 5), "100"]
                    }
                }
                let watch = MachineStallWatch(thresholdSeconds: 0.002)
                defer { watch.stop() }
                let started = Date()
                try fixture.toolOutput("xdotool", arguments)
                let sentSeconds = Date().timeIntervalSince(started)
                let oracle = try XWinInfo.read(window: window.id, display: fixture.display)
                let settled = harness.log.wait(timeoutSeconds: 2) {
                    guard let tracked = $0.window(id: window.id) else { return false }
                    return abs(tracked.rectPixels.centreXPixels - oracle.centreX) <= 1
                        && abs(tracked.rectPixels.centreYPixels - oracle.centreY) <= 1
                }
                let final = try #require(settled, "\(name): final geometry \(oracle) never published")
                let published = harness.log.all[first...].filter { $0.sequence <= final.sequence }.count
                let latencyMilliseconds = Double(final.publishedMonotonicNanoseconds - final.newestEventMonotonicNanoseconds) / 1e6
                print("\(name): 200 moves in \(Int(sentSeconds * 1000)) ms -> \(published) snapshots; final one " +
                      "published \(String(format: "%.2f", latencyMilliseconds)) ms after its newest event")
                // At most one snapshot per 10 ms interval (plus the leading one), far fewer than moves.
                #expect(published <= Int(sentSeconds * 100) + 3)
                #expect(published < 200)
                // The machine's too: a miss no longer than it stood still meanwhile is its (ci71: 16.9 ms).
                watch.stop()
                watch.expectTime(latencyMilliseconds / 1000, under: 0.015, from: Double(final.newestEventMonotonicNanoseconds) / 1e9,
                                 to: Double(final.publishedMonotonicNanoseconds) / 1e9, "\(name): the final geometry published")
            }
        }
    }
}
