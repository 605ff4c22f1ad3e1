import Foundation
import Synchronization
import SceneSoundCapture
import Testing

@Suite struct CaptureDecisionTests {
    static let context = CaptureDecision.Context(
        ownProcessID: 100, defaultSinkIndex: 1, captureSinkIndex: 9, excludedBinaries: ["firefox"])

    /// A client's stream (on PulseAudio its owner module is the native protocol's).
    static func stream(sink: UInt32 = 1, module: UInt32? = 2, client: UInt32? = 4, pcm: Bool = true,
                       _ properties: [String: String] = [:]) -> SinkInputFacts {
        SinkInputFacts(index: 5, ownerModule: module, clientIndex: client, sinkIndex: sink, isPCM: pcm,
                       properties: ["application.process.id": "200", "application.process.binary": "mpv"].merging(properties) { $1 })
    }

    @Test func anAppOnTheDefaultSinkIsTaken() {
        #expect(CaptureDecision.decide(Self.stream(), in: Self.context) == .take)
    }

    @Test func aClientWithoutAnOwnerModuleIsTaken() {  // PipeWire reports none for clients
        #expect(CaptureDecision.decide(Self.stream(module: nil), in: Self.context) == .take)
    }

    @Test func anAppAlreadyOnTheCaptureSinkIsTaken() {
        #expect(CaptureDecision.decide(Self.stream(sink: 9), in: Self.context) == .take)
    }

    @Test(arguments: [
        (stream(["application.process.id": "100"]), CaptureDecision.LeaveReason.ownOutput),
        (stream(module: 3, client: nil), .moduleStream),
        (stream(pcm: false), .passthrough),
        (stream(["media.role": "phone"]), .phone),
        (stream(["application.process.binary": "firefox"]), .excluded),
        (stream(["application.process.binary": "", "application.name": "firefox"]), .excluded),
        (stream(sink: 2), .notOnDefaultSink),
    ])
    func streamsLeftAlone(stream: SinkInputFacts, reason: CaptureDecision.LeaveReason) {
        #expect(CaptureDecision.decide(stream, in: Self.context) == .leave(reason))
    }

    @Test func anExcludedAppOnTheCaptureSinkGoesBack() {
        let excluded = Self.stream(sink: 9, ["application.process.binary": "firefox"])
        #expect(CaptureDecision.decide(excluded, in: Self.context) == .returnToDefaultSink(.excluded))
    }

    @Test func withoutADefaultSinkNothingIsTaken() {
        var context = Self.context
        context.defaultSinkIndex = nil
        #expect(CaptureDecision.decide(Self.stream(), in: context) == .leave(.notOnDefaultSink))
    }

    @Test func identityReadsTheStreamsProperties() {
        let identity = CapturedStreamIdentity(streamIndex: 7, properties: [
            "application.name": "Firefox", "application.process.binary": "firefox", "application.process.id": "4242",
            "window.x11.xid": "62914567", "media.role": "event", "event.id": "bell",
        ])
        #expect(identity.applicationName == "Firefox")
        #expect(identity.binary == "firefox")
        #expect(identity.processID == 4242)
        #expect(identity.windowID == 62_914_567)
        #expect(identity.isEventSound)
        #expect(CapturedStreamIdentity(streamIndex: 1, properties: ["window.x11.xid": "0x3c00007"]).windowID == 0x3C0_0007)
        #expect(CapturedStreamIdentity(streamIndex: 1, properties: ["window.x11.xid": "0"]).windowID == nil)
        #expect(!CapturedStreamIdentity(streamIndex: 1, properties: ["media.role": "music"]).isEventSound)
    }
}

@Suite struct CaptureGuardOptionsTests {
    @Test func parsesItsArguments() throws {
        let options = try CaptureGuard.Options.parse(["--session", "12-1-ab", "--server", "unix:/x", "--hang-seconds", "1.5"]).get()
        #expect(options.session == "12-1-ab")
        #expect(options.serverAddress == "unix:/x")
        #expect(options.hangSeconds == 1.5)
    }

    @Test(arguments: [
        ([], "--session TOKEN is required"),
        (["--session"], "--session needs a value"),
        (["--session", "a", "--hang-seconds", "-1"], "--hang-seconds: '-1' is not a number of seconds in (0, 60]"),
        (["--session", "a", "--bogus", "1"], "unknown option '--bogus' (accepted: --session, --server, --hang-seconds)"),
    ])
    func refusesBadArguments(arguments: [String], message: String) {
        guard case .failure(let error) = CaptureGuard.Options.parse(arguments) else {
            Issue.record("accepted \(arguments)")
            return
        }
        #expect(error.message == message)
    }

    @Test func aHeartbeatKeepsItWaitingAndSilenceEndsIt() throws {
        var ends: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0)
        defer { close(ends[1]) }
        // Silent for 0.3 s: hung.
        let start = Date()
        #expect(CaptureGuard.waitForDaemon(descriptor: ends[1], hangSeconds: 0.3) == .daemonHung)
        #expect(Date().timeIntervalSince(start) >= 0.3)
        // Closed: ended, at once.
        close(ends[0])
        #expect(CaptureGuard.waitForDaemon(descriptor: ends[1], hangSeconds: 5) == .daemonEnded)
    }

    /// While the capture rests (`r`), no heartbeat comes and none is missed: only the socket's
    /// end counts; the next beat expects heartbeats again.
    @Test func aRestingDaemonIsWaitedForOnItsSocketAlone() throws {
        var ends: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0)
        defer { close(ends[1]) }
        let rest = Array("hr".utf8)
        #expect(rest.withUnsafeBytes { write(ends[0], $0.baseAddress, $0.count) } == rest.count)
        // Resting 0.8 s, four times the hang limit, then a beat, then silence: hung, and only
        // once the limit has passed after that beat.
        let beatAt = Date().addingTimeInterval(0.8)
        let writer = Thread { [ours = ends[0]] in
            Thread.sleep(until: beatAt)
            var beat = UInt8(ascii: "h")
            _ = write(ours, &beat, 1)
        }
        writer.start()
        #expect(CaptureGuard.waitForDaemon(descriptor: ends[1], hangSeconds: 0.2) == .daemonHung)
        #expect(Date().timeIntervalSince(beatAt) >= 0.2, "hung \(Date().timeIntervalSince(beatAt)) s after the beat")
        // Resting again, then gone: ended, at once.
        var restAgain = UInt8(ascii: "r")
        #expect(write(ends[0], &restAgain, 1) == 1)
        close(ends[0])
        let start = Date()
        #expect(CaptureGuard.waitForDaemon(descriptor: ends[1], hangSeconds: 5) == .daemonEnded)
        #expect(Date().timeIntervalSince(start) < 1)
    }

    /// An app that starts just as the daemon goes to rest and hangs: the server's event and the
    /// daemon's `r` reach the guard in the same round. The guard still asks the daemon, and
    /// with no answer within the limit it is hung (before, the guard rested on and the app
    /// stayed silent on our sink until some other event).
    @Test func aServerEventArrivingWithTheRestIsAskedAbout() throws {
        var ends: [Int32] = [-1, -1], events: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0)
        #expect(pipe(&events) == 0)
        defer { [ends[1], events[0], events[1]].forEach { close($0) } }
        var rest = UInt8(ascii: "r"), event = UInt8(1)
        #expect(write(ends[0], &rest, 1) == 1 && write(events[1], &event, 1) == 1)
        let ended = DispatchSemaphore(value: 0)
        let result = Mutex<CaptureGuard.Ending?>(nil)
        let guardSide = ends[1], eventSide = events[0]
        Thread {
            let ending = CaptureGuard.waitForDaemon(descriptor: guardSide, hangSeconds: 0.3, serverEvents: eventSide,
                                                    drainServerEvents: { var byte = UInt8(0); _ = read(eventSide, &byte, 1) })
            result.withLock { $0 = ending }
            ended.signal()
        }.start()
        let returned = ended.wait(timeout: .now() + 3) == .success
        var asked = UInt8(0)
        let readAsked = returned ? read(ends[0], &asked, 1) : 0
        // The daemon's end closed: a guard still resting wakes up (ended) and the thread finishes.
        close(ends[0])
        if !returned { _ = ended.wait(timeout: .now() + 3) }
        #expect(returned, "the guard rested on with the event unasked")
        #expect(result.withLock { $0 } == .daemonHung)
        #expect(readAsked == 1 && asked == UInt8(ascii: "p"), "the guard asked the daemon")
    }

    @Test func theDaemonNamesTheRealSinkToItsGuard() throws {
        var ends: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0)
        defer { close(ends[1]) }
        let messages = Array("hhsout\nhshead set\nh".utf8)
        #expect(messages.withUnsafeBytes { write(ends[0], $0.baseAddress, $0.count) } == messages.count)
        close(ends[0])
        var named: [String] = []
        #expect(CaptureGuard.waitForDaemon(descriptor: ends[1], hangSeconds: 5) { named.append($0) } == .daemonEnded)
        #expect(named == ["out", "head set"])
    }
}
