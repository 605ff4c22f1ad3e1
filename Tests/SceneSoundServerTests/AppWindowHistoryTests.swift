import Testing
import SceneSoundProtocol
import SceneSoundWindows
@testable import SceneSoundServer

/// The window history that places a captured app's sound when neither its stream nor its
/// process names a window, and the order of the rules that find a captured stream's window.
@Suite struct AppWindowHistoryTests {
    /// Processes 100, 101 run "editor" (class "Editor"), 200 runs "xterm" (class "XTerm").
    static let binaries: [Int32: String] = [100: "editor", 101: "editor", 200: "xterm"]

    static func window(_ id: UInt32, pid: Int32?, className: String?, stacking: Int) -> TrackedWindow {
        TrackedWindow(id: id, frameID: id + 0x1000, rectPixels: PixelRect(xPixels: 0, yPixels: 0, widthPixels: 100, heightPixels: 100),
                      isViewable: true, isMinimized: false, isFullscreen: false, demandsAttention: false, desktop: 0,
                      isOnCurrentDesktop: true, pid: pid, stackingIndex: stacking, applicationName: className)
    }

    static func snapshot(_ windows: [TrackedWindow], active: UInt32?) -> WindowSnapshot {
        WindowSnapshot(sequence: 1, publishedMonotonicNanoseconds: 0, newestEventMonotonicNanoseconds: 0, isDisplayConnected: true,
                       windows: windows.sorted { $0.stackingIndex < $1.stackingIndex },
                       monitors: [], activeWindowID: active, currentDesktop: 0, hasEWMHWindowManager: true)
    }

    let editorA = Self.window(0xA, pid: 100, className: "Editor", stacking: 0)
    let editorB = Self.window(0xB, pid: 101, className: "Editor", stacking: 1)
    let terminal = Self.window(0xC, pid: 200, className: "XTerm", stacking: 2)
    var all: [TrackedWindow] { [editorA, editorB, terminal] }
    let editor = AppWindowHistory.App(binary: "editor", name: nil)

    func history() -> AppWindowHistory { AppWindowHistory { Self.binaries[$0] } }

    @Test func theAppsMostRecentlyActiveWindowWinsOverAnotherAppsActiveOne() {
        var history = history()
        _ = history.record(Self.snapshot(all, active: 0xB))
        _ = history.record(Self.snapshot(all, active: 0xA))
        let now = Self.snapshot(all, active: 0xC)  // the user moved on to the terminal
        _ = history.record(now)
        #expect(history.mostRecentlyActiveWindow(of: editor, in: now)?.id == 0xA)
        _ = history.record(Self.snapshot(all, active: 0xB))
        #expect(history.mostRecentlyActiveWindow(of: editor, in: now)?.id == 0xB)
    }

    @Test func aClosedWindowIsForgottenAndTheOneActiveBeforeItTakesOver() {
        var history = history()
        _ = history.record(Self.snapshot(all, active: 0xA))
        _ = history.record(Self.snapshot(all, active: 0xB))
        let closed = Self.snapshot([editorA, terminal], active: 0xC)
        let closing = history.record(closed)
        #expect(closing)
        #expect(history.mostRecentlyActiveWindow(of: editor, in: closed)?.id == 0xA)
        // A new window reusing the closed one's id starts without its past.
        let reopened = Self.snapshot([Self.window(0xB, pid: 101, className: "Editor", stacking: 0), editorA.with(stacking: 1), terminal], active: 0xC)
        _ = history.record(reopened)
        #expect(history.mostRecentlyActiveWindow(of: editor, in: reopened)?.id == 0xA)
    }

    @Test func windowsNeverSeenActiveRankBelowActiveOnesAndByStackingAmongThemselves() {
        var history = history()
        let start = Self.snapshot(all, active: nil)
        _ = history.record(start)
        #expect(history.mostRecentlyActiveWindow(of: editor, in: start)?.id == 0xB, "topmost of the app's windows")
        _ = history.record(Self.snapshot(all, active: 0xA))
        #expect(history.mostRecentlyActiveWindow(of: editor, in: start)?.id == 0xA, "active once beats never active")
    }

    @Test func anAppIsKnownByBinaryOrByNameAgainstTheWindowsClassCaseAside() {
        let history = history()
        let cases: [(AppWindowHistory.App, UInt32?)] = [
            (.init(binary: "editor", name: nil), 0xB),        // binary to the window process's binary
            (.init(binary: "editor-helper", name: "EDITOR"), 0xB),  // name to WM_CLASS
            (.init(binary: nil, name: "xterm"), 0xC),         // name to the window process's binary
            (.init(binary: "Editor", name: nil), 0xB),        // binary to WM_CLASS
            (.init(binary: "paplay", name: "paplay"), nil),   // nothing of it has a window
            (.init(binary: nil, name: nil), nil),
            (.init(binary: "", name: ""), nil),
        ]
        for (app, expected) in cases {
            #expect(history.mostRecentlyActiveWindow(of: app, in: Self.snapshot(all, active: nil))?.id == expected, "\(app)")
        }
        // A window without a pid or a class belongs to nobody.
        let anonymous = Self.snapshot([Self.window(0xD, pid: nil, className: nil, stacking: 0)], active: 0xD)
        #expect(history.mostRecentlyActiveWindow(of: .init(binary: "", name: nil), in: anonymous) == nil)
    }

    @Test func onlyWindowsComingGoingChangingHandsOrActivationCountAsChanges() {
        var history = history()
        let first = history.record(Self.snapshot(all, active: 0xA))
        let same = history.record(Self.snapshot(all, active: 0xA))
        #expect(first && !same)
        var moved = editorA
        moved.rectPixels = PixelRect(xPixels: 500, yPixels: 0, widthPixels: 100, heightPixels: 100)
        let move = history.record(Self.snapshot([moved, editorB, terminal], active: 0xA))
        #expect(!move, "a move is not a change")
        let activation = history.record(Self.snapshot(all, active: 0xC))
        #expect(activation, "activation")
        let closing = history.record(Self.snapshot([editorA, terminal], active: 0xC))
        #expect(closing, "a window closed")
        let renamed = history.record(Self.snapshot([editorA, terminal.with(className: "Other")], active: 0xC))
        #expect(renamed, "its class changed")
    }

    // MARK: The rules in order

    static func app(windowID: UInt32? = nil, pid: Int32? = 300) -> CapturedAppStreams.App {
        CapturedAppStreams.App(key: 1, applicationName: "editor", binary: "editor", processID: pid, windowID: windowID,
                               mediaRole: nil, eventID: nil)
    }

    /// Process 300's parent is 250, whose parent is 1.
    static func placement(_ app: CapturedAppStreams.App, withWindows: Set<Int32>, recent: UInt32?) -> CapturedAppStreams.Placement {
        CapturedAppStreams.placement(for: app, ancestry: { $0 == 300 ? [300, 250] : [$0] },
                                     hasWindow: { withWindows.contains($0) }, recentlyActiveWindow: { recent.map(SceneID.forX11Window) })
    }

    @Test func theWindowIsFoundByXidThenPidThenTheAppsRecentWindowThenNotAtAll() {
        typealias P = CapturedAppStreams.Placement
        #expect(Self.placement(Self.app(windowID: 0x42), withWindows: [300], recent: 0xA)
                == P(sceneID: SceneID.forX11Window(0x42), anchorPID: nil, rule: .xid))
        #expect(Self.placement(Self.app(), withWindows: [300, 250], recent: 0xA) == P(sceneID: "", anchorPID: 300, rule: .pid))
        #expect(Self.placement(Self.app(), withWindows: [250], recent: 0xA) == P(sceneID: "", anchorPID: 250, rule: .pid),
                "a parent's window")
        #expect(Self.placement(Self.app(), withWindows: [], recent: 0xA)
                == P(sceneID: SceneID.forX11Window(0xA), anchorPID: nil, rule: .recentlyActive))
        #expect(Self.placement(Self.app(), withWindows: [], recent: nil) == P(sceneID: "", anchorPID: 300, rule: .none),
                "ahead, following its own process's window should one appear")
        #expect(Self.placement(Self.app(pid: nil), withWindows: [], recent: nil) == P(sceneID: "", anchorPID: nil, rule: .none))
    }
}

extension TrackedWindow {
    func with(stacking: Int) -> TrackedWindow {
        var copy = self
        copy.stackingIndex = stacking
        return copy
    }

    func with(className: String) -> TrackedWindow {
        var copy = self
        copy.applicationName = className
        return copy
    }
}
