import Foundation
import Testing
import SceneSoundTestSupport
import SceneSoundWindows
import SceneSoundX11

/// A tracker on a fixture's display, recording every snapshot.
final class TrackerHarness {
    let log = SnapshotLog()
    let tracker: WindowTracker
    let fixture: XDisplayFixture

    init(_ fixture: XDisplayFixture, monitorPollIntervalSeconds: Double = 1.0) {
        self.fixture = fixture
        let log = self.log
        tracker = WindowTracker(
            configuration: .init(displayName: fixture.display, monitorPollIntervalSeconds: monitorPollIntervalSeconds),
            onSnapshot: { log.append($0) })
        tracker.start()
    }

    deinit { tracker.stop() }

    /// The visible window of a process, as tracked (found by `_NET_WM_PID`).
    func window(ofPID pid: Int32, timeoutSeconds: Double = 5) -> TrackedWindow? {
        let found = log.wait(timeoutSeconds: timeoutSeconds) { snapshot in
            snapshot.windows(pid: pid).contains { $0.visibility == .visible }
        }?.windows(pid: pid).first { $0.visibility == .visible }
        if found == nil {
            // What the tracker did see, for the failure report.
            print("no visible window of pid \(pid); latest snapshot: \(String(describing: log.latest))")
        }
        return found
    }

    struct Comparison: CustomStringConvertible {
        var oracle: XWinInfo
        var tracked: TrackedWindow?
        var centreErrorPixels: Double {
            guard let tracked else { return .infinity }
            return max(abs(tracked.rectPixels.centreXPixels - oracle.centreX),
                       abs(tracked.rectPixels.centreYPixels - oracle.centreY))
        }
        var sizeMatches: Bool {
            tracked?.rectPixels.widthPixels == oracle.width && tracked?.rectPixels.heightPixels == oracle.height
        }
        var description: String { "xwininfo \(oracle) vs tracked \(tracked.map { "\($0.rectPixels)" } ?? "none")" }
    }

    /// Waits until the oracle shows a geometry other than `previous` (the action took effect)
    /// and the tracker agrees with it within 1 px; returns the last comparison either way.
    func settle(window id: UInt32, changedFrom previous: XWinInfo?, timeoutSeconds: Double = 5) throws -> Comparison {
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        var comparison = Comparison(oracle: try XWinInfo.read(window: id, display: fixture.display), tracked: nil)
        while Date() < deadline {
            comparison.oracle = try XWinInfo.read(window: id, display: fixture.display)
            comparison.tracked = tracker.latestSnapshot?.window(id: id)
            if comparison.oracle != previous, comparison.centreErrorPixels <= 1, comparison.sizeMatches {
                // Stable: the manager may still be applying a second step (e.g. fullscreen).
                Thread.sleep(forTimeInterval: 0.05)
                let again = try XWinInfo.read(window: id, display: fixture.display)
                if again == comparison.oracle { return comparison }
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return comparison
    }
}

/// The common set-up of these tests: a display (with or without openbox), a tracker on it, and
/// one xterm it has found. `stop()` ends all of them.
struct TrackedXTerm {
    let fixture: XDisplayFixture
    let harness: TrackerHarness
    let xterm: ChildProcess
    let window: TrackedWindow

    init(windowManager: Bool, geometry: String, title: String? = nil) throws {
        fixture = try XDisplayFixture(windowManager: windowManager)
        harness = TrackerHarness(fixture)
        do {
            xterm = try fixture.openXTerm(geometry: geometry, title: title)
            window = try #require(harness.window(ofPID: xterm.pid))
        } catch {
            harness.tracker.stop()
            fixture.stopAll()
            throw error
        }
    }

    func stop() {
        harness.tracker.stop()
        fixture.stopAll()
    }
}
