import Foundation
import SceneSoundDSP
import SceneSoundTestSupport
import Testing

/// The last two of the rules that place a captured app, with real windows under openbox: the
/// app's most recently active window when neither the stream nor its process names one, and
/// alerts flagging their window as protocol alerts do.
@Suite(.serialized) struct CapturedWindowRuleTests {
    typealias Desk = DaemonCaptureTests.Desk

    @Test(arguments: PrivateSoundServer.Kind.allCases)
    func aSoundWhoseProcessHasNoWindowPlaysAtItsAppsMostRecentlyActiveWindow(kind: PrivateSoundServer.Kind) throws {
        let desk = try Desk(kind)
        let file = try DaemonCaptureTests.noiseFile()
        defer { try? FileManager.default.removeItem(at: file) }
        // An app with a window on each side (WM_CLASS "SceneSoundNotes").
        let appLeft = try desk.x.windowID(of: desk.x.openXTerm(geometry: "60x20+80+650", className: "SceneSoundNotes"))
        let rightTerm = try desk.x.openXTerm(geometry: "60x20+1450+650", className: "SceneSoundNotes")
        let appRight = try desk.x.windowID(of: rightTerm)
        // The user works in its right window, then its left one, then in another app on the right.
        for window in [appRight, appLeft, desk.rightWindow] { try desk.activate(window) }

        // Its sound comes from a process that owns no window and is no parent of one (as a
        // sandboxed or helper process would): a paplay naming itself after the app.
        try desk.start("/usr/bin/paplay", ["--client-name=SceneSoundNotes", file.path])
        #expect(desk.waitForCaptures(1), "\(desk.logText)")
        let atLeft = try DaemonCaptureTests().waitForCues(desk) { $0.itdMicroseconds > 100 }
        #expect(atLeft.itdMicroseconds > 100 && atLeft.interauralLevelDifferenceDecibels > 2,
                "at the app's last active window (left), not the active one (right): \(atLeft); \(desk.logText.suffix(1500))")
        let (status, text) = desk.cli(["apps", "--json", "--socket", desk.socket])
        #expect(status == 0 && text.contains("\"window\":\"0x\(String(appLeft, radix: 16))\"")
                && text.contains("\"window_found_by\":\"recently_active\""), "\(text)")
        let (_, summary) = desk.cli(["apps", "--socket", desk.socket])
        #expect(summary.contains("window 0x\(String(appLeft, radix: 16))") && summary.contains("(by recently active)"), "\(summary)")

        // The user goes back to the app's right window: the sound follows.
        try desk.activate(appRight)
        let atRight = try DaemonCaptureTests().waitForCues(desk) { $0.itdMicroseconds < -100 }
        #expect(atRight.itdMicroseconds < -100 && atRight.interauralLevelDifferenceDecibels < -2, "after activating its right window: \(atRight)")

        // That window closes: the one active before it takes the sound back.
        rightTerm.kill()
        #expect(waitUntil(timeoutSeconds: 5) { (try? desk.x.toolOutput("xwininfo", ["-id", String(appRight)])) == nil })
        let back = try DaemonCaptureTests().waitForCues(desk) { $0.itdMicroseconds > 100 }
        #expect(back.itdMicroseconds > 100 && back.interauralLevelDifferenceDecibels > 2, "after its right window closed: \(back)")
        #expect(desk.daemon.isRunning)
    }

    @Test(arguments: PrivateSoundServer.Kind.allCases)
    func aCapturedAlertFlagsItsWindowAndAnEventSoundDoesNot(kind: PrivateSoundServer.Kind) throws {
        // The server's rule for alerts: flag the window when configured to (or with no output).
        let desk = try Desk(kind, extraArguments: ["--flash-alert-windows"])
        // openbox never flags the focused window: focus a third one.
        let elsewhere = try desk.x.windowID(of: desk.x.openXTerm(geometry: "40x10+800+800"))
        try desk.activate(elsewhere)
        #expect(!desk.demandsAttention(desk.leftWindow) && !desk.demandsAttention(desk.rightWindow))

        try desk.start("/usr/bin/canberra-gtk-play", ["-i", "bell", "--property=window.x11.xid=\(desk.leftWindow)"])
        #expect(desk.waitForCaptures(1), "\(desk.logText)")
        try desk.start("/usr/bin/canberra-gtk-play", ["-i", "dialog-warning", "--property=window.x11.xid=\(desk.rightWindow)"])
        #expect(desk.waitForCaptures(2), "\(desk.logText)")
        #expect(waitUntil(timeoutSeconds: 10) { desk.demandsAttention(desk.rightWindow) }, "the warning's window was not flagged; \(desk.logText.suffix(1500))")
        // The bell went the same way before it (the same queue to the window manager): had it
        // asked, its window would be flagged by now.
        #expect(!desk.demandsAttention(desk.leftWindow), "an event sound flagged its window")
    }
}

extension DaemonCaptureTests.Desk {
    /// Activates a window through the window manager and waits until the daemon has seen it
    /// active (a user's switch lasts longer than the tracker takes to notice; a script's may not).
    func activate(_ window: UInt32) throws {
        let hex = "0x" + String(window, radix: 16)
        let activated = waitUntil(timeoutSeconds: 10, pollSeconds: 0.05) {
            _ = try? x.toolOutput("xdotool", ["windowactivate", String(window)])
            return (try? x.toolOutput("xprop", ["-root", "_NET_ACTIVE_WINDOW"]))?.hasSuffix(hex + "\n") == true
        }
        let seen = waitUntil(timeoutSeconds: 10, pollSeconds: 0.05) {
            let (status, text) = cli(["status", "--json", "--socket", socket])
            guard status == 0, let document = try? StatusSchema.decode(text) else { return false }
            return document.display.activeWindow == hex
        }
        guard activated, seen else {
            throw ToolFailure(command: "xdotool windowactivate \(window)", status: 1, output: activated ? "the daemon never saw it active" : "never active")
        }
    }

    /// `_NET_WM_STATE_DEMANDS_ATTENTION` is on the window.
    func demandsAttention(_ window: UInt32) -> Bool {
        (try? x.toolOutput("xprop", ["-id", String(window), "_NET_WM_STATE"]))?.contains("_NET_WM_STATE_DEMANDS_ATTENTION") == true
    }
}
