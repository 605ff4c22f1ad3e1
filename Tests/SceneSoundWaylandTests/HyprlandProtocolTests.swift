import SceneSoundTestSupport
import Foundation
import Synchronization
import Testing
import SceneSoundProtocol
import SceneSoundWindows
@testable import SceneSoundWayland

/// Hyprland is not in Debian, so its backend is tested against its *protocol*, not the program:
/// a stand-in here serves `.socket.sock` (one request per connection, answered with the JSON
/// `hyprctl -j` prints, then closed) and `.socket2.sock` (event lines `EVENT>>DATA`), in the
/// documented formats (wiki.hyprland.org, IPC).
@Suite(.serialized) struct HyprlandProtocolTests {
    /// The fake compositor: its replies are set by the test; it counts the requests it served.
    final class FakeHyprland: @unchecked Sendable {
        let directory: String
        private let lock = NSLock()
        private var replies: [String: String] = [:]
        private(set) var requestCount = 0
        private var listeners: [Int32] = []
        private var eventClients: [Int32] = []
        private var threads: [Thread] = []
        private var running = true

        init() throws {
            var template = Array("/tmp/sss-hypr-XXXXXX".utf8CString)
            guard let path = mkdtemp(&template) else { throw TestFailure("mkdtemp") }
            directory = String(cString: path)
            try start()
        }

        func setReply(_ request: String, _ json: String) { lock.withLock { replies[request] = json } }
        var requests: Int { lock.withLock { requestCount } }

        func start() throws {
            lock.withLock { running = true }
            let requestListener = try Self.listen(directory + "/.socket.sock")
            let eventListener = try Self.listen(directory + "/.socket2.sock")
            lock.withLock { listeners = [requestListener, eventListener] }
            let requestThread = Thread { [self] in
                while true {
                    let client = accept(requestListener, nil, nil)
                    guard client >= 0 else { return }
                    var buffer = [UInt8](repeating: 0, count: 256)
                    let got = read(client, &buffer, buffer.count)
                    let request = got > 0 ? String(decoding: buffer[0..<got], as: UTF8.self) : ""
                    let reply = lock.withLock { () -> String in
                        requestCount += 1
                        return replies[request] ?? "unknown request"
                    }
                    _ = Array(reply.utf8).withUnsafeBytes { write(client, $0.baseAddress, $0.count) }
                    close(client)
                }
            }
            let eventThread = Thread { [self] in
                while true {
                    let client = accept(eventListener, nil, nil)
                    guard client >= 0 else { return }
                    lock.withLock { eventClients.append(client) }
                }
            }
            threads = [requestThread, eventThread]
            threads.forEach { $0.start() }
        }

        /// Sent to every event connection, once the source's is accepted (the kernel completes
        /// a connection before the stand-in's thread accepts it).
        func sendEvent(_ line: String) {
            _ = try? waitUntil(timeoutSeconds: 2, "the event connection") { lock.withLock { !eventClients.isEmpty } }
            let bytes = Array((line + "\n").utf8)
            lock.withLock { for client in eventClients { _ = bytes.withUnsafeBytes { write(client, $0.baseAddress, $0.count) } } }
        }

        /// Hyprland gone: its sockets closed and removed.
        func stop() {
            lock.withLock {
                for fd in listeners { shutdown(fd, Int32(SHUT_RDWR)); close(fd) }
                for fd in eventClients { shutdown(fd, Int32(SHUT_RDWR)); close(fd) }
                listeners = []
                eventClients = []
            }
            unlink(directory + "/.socket.sock")
            unlink(directory + "/.socket2.sock")
        }

        /// Stops it and removes its directory; its threads end with their listening sockets.
        func tearDown() {
            stop()
            rmdir(directory)
        }

        private static func listen(_ path: String) throws -> Int32 {
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                raw.copyBytes(from: path.utf8)
                raw[path.utf8.count] = 0
            }
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            guard bound == 0, Glibc.listen(fd, 16) == 0 else { throw TestFailure("cannot listen on \(path)") }
            return fd
        }
    }

    /// Everything a source published and logged.
    final class Recorder: @unchecked Sendable {
        private let lock = NSLock()
        private var snapshots: [WindowSnapshot] = []
        private var lines: [String] = []
        func add(_ snapshot: WindowSnapshot) { lock.withLock { snapshots.append(snapshot) } }
        func log(_ line: String) { lock.withLock { lines.append(line) } }
        var latest: WindowSnapshot? { lock.withLock { snapshots.last } }
        var count: Int { lock.withLock { snapshots.count } }
        var logLines: [String] { lock.withLock { lines } }
    }

    static let address = "0x55d0c3a4b2c0"

    /// One mpv window (Hyprland's documented `clients` fields), on workspace `workspace`.
    static func clients(x: Int, workspace: Int = 1) -> String {
        """
        [{"address": "\(address)", "mapped": true, "hidden": false, "at": [\(x), 300], "size": [400, 300],
          "workspace": {"id": \(workspace), "name": "\(workspace)"}, "floating": true, "pseudo": false, "monitor": 0,
          "class": "mpv", "title": "noise.wav - mpv", "initialClass": "mpv", "initialTitle": "mpv", "pid": 4242,
          "xwayland": false, "pinned": false, "fullscreen": 0, "fullscreenClient": 0, "grouped": [], "tags": [],
          "swallowing": "0x0", "focusHistoryID": 0}]
        """
    }

    /// A 3840x2160 monitor at scale 2: 1920x1080 logical pixels.
    static let monitors = """
        [{"id": 0, "name": "DP-1", "description": "Dell U2720Q", "make": "Dell", "model": "U2720Q", "serial": "",
          "width": 3840, "height": 2160, "refreshRate": 60.0, "x": 0, "y": 0,
          "activeWorkspace": {"id": 1, "name": "1"}, "specialWorkspace": {"id": 0, "name": ""},
          "reserved": [0, 0, 0, 0], "scale": 2.00, "transform": 0, "focused": true, "dpmsStatus": true,
          "vrr": false, "disabled": false}]
        """

    static func start(_ fake: FakeHyprland, _ recorder: Recorder) -> CompositorWindowSource {
        let source = HyprlandWindowSource.make(
            socketDirectory: fake.directory,
            configuration: .init(pollWhilePlayingSeconds: 0.05, reconnectInitialDelaySeconds: 0.05, reconnectMaximumDelaySeconds: 0.2),
            log: { recorder.log($0) }, onSnapshot: { recorder.add($0) })
        source.start()
        return source
    }

    static func fake() throws -> FakeHyprland {
        let fake = try FakeHyprland()
        fake.setReply("j/clients", clients(x: 40))
        fake.setReply("j/monitors", monitors)
        fake.setReply("j/activewindow", #"{"address": "\#(address)", "class": "mpv"}"#)
        return fake
    }

    @Test func windowsMonitorsAndTheActiveWindowAreRead() throws {
        let fake = try Self.fake()
        defer { fake.tearDown() }
        let recorder = Recorder()
        let source = Self.start(fake, recorder)
        defer { source.stop() }
        try waitUntil(timeoutSeconds: 5, "the first snapshot") { recorder.latest != nil }
        let snapshot = try #require(recorder.latest)
        let window = try #require(snapshot.windows.first)
        #expect(window.nativeID == Self.address && window.sceneID == "wayland:" + Self.address)
        #expect(window.id == SceneID.nativeWindowHandle(Self.address))
        #expect(window.rectPixels == PixelRect(xPixels: 40, yPixels: 300, widthPixels: 400, heightPixels: 300))
        #expect(window.pid == 4242 && window.applicationName == "mpv" && window.title == "noise.wav - mpv")
        #expect(window.visibility == .visible)
        #expect(snapshot.activeWindowID == window.id)
        let monitor = try #require(snapshot.monitors.first)
        #expect(monitor.rectPixels == PixelRect(xPixels: 0, yPixels: 0, widthPixels: 1920, heightPixels: 1080))
        // 96 dpi of the monitor's own 3840 pixels.
        #expect(abs(monitor.widthMillimetres - 3840 * 25.4 / 96) < 0.01 && monitor.isPrimary)
        // The window at the left of the screen lands left of the listener.
        #expect(snapshot.screenSpace().position(of: window.rectPixels).x < -0.1)
    }

    @Test func anEventBringsANewQueryAndTheTimerRunsOnlyWhileSoundsPlay() throws {
        let fake = try Self.fake()
        defer { fake.tearDown() }
        let recorder = Recorder()
        let source = Self.start(fake, recorder)
        defer { source.stop() }
        try waitUntil(timeoutSeconds: 5, "the first snapshot") { recorder.latest != nil }

        // Idle: no polling at all.
        let idleRequests = fake.requests
        Thread.sleep(forTimeInterval: 0.3)
        #expect(fake.requests == idleRequests, "queries while idle")

        // An event: queried at once.
        fake.setReply("j/clients", Self.clients(x: 1480))
        let moved = Date()
        fake.sendEvent("movewindowv2>>55d0c3a4b2c0,1,1")
        try waitUntil(timeoutSeconds: 1, "the move after its event") { recorder.latest?.windows.first?.rectPixels.xPixels == 1480 }
        let afterEvent = Date().timeIntervalSince(moved)

        // No event (a floating move): seen only while sounds play, within the timer's period.
        fake.setReply("j/clients", Self.clients(x: 700))
        Thread.sleep(forTimeInterval: 0.2)
        #expect(recorder.latest?.windows.first?.rectPixels.xPixels == 1480, "no event and nothing playing: not looked at")
        source.setSoundsPlaying(true)
        let playing = Date()
        try waitUntil(timeoutSeconds: 1, "the silent move while playing") { recorder.latest?.windows.first?.rectPixels.xPixels == 700 }
        let afterTimer = Date().timeIntervalSince(playing)
        source.setSoundsPlaying(false)
        print("Hyprland protocol: a move with its event followed within \(Int(afterEvent * 1000)) ms, one without within \(Int(afterTimer * 1000)) ms while playing")
        #expect(afterEvent < 0.1 && afterTimer < 0.1)
    }

    @Test func otherAndSpecialWorkspacesAreHiddenStates() throws {
        let fake = try Self.fake()
        defer { fake.tearDown() }
        fake.setReply("j/clients", Self.clients(x: 40, workspace: 2))
        let recorder = Recorder()
        let source = Self.start(fake, recorder)
        defer { source.stop() }
        try waitUntil(timeoutSeconds: 5, "another workspace") { recorder.latest?.windows.first?.visibility == .onOtherDesktop }
        fake.setReply("j/clients", Self.clients(x: 40, workspace: -98))
        fake.sendEvent("movewindowv2>>55d0c3a4b2c0,-98,special:magic")
        try waitUntil(timeoutSeconds: 5, "the special workspace") { recorder.latest?.windows.first?.visibility == .minimized }
    }

    @Test func aMalformedReplyIsOneLoggedLineAndTheWindowsStay() throws {
        let fake = try Self.fake()
        defer { fake.tearDown() }
        let recorder = Recorder()
        let source = Self.start(fake, recorder)
        defer { source.stop() }
        try waitUntil(timeoutSeconds: 5, "the first snapshot") { recorder.latest != nil }
        fake.setReply("j/clients", #"[{"address": "0x1", "at": "left"}"#)
        for _ in 0..<3 {
            fake.sendEvent("openwindow>>1,1,mpv,mpv")
            Thread.sleep(forTimeInterval: 0.05)
        }
        try waitUntil(timeoutSeconds: 2, "the complaint") { !recorder.logLines.isEmpty }
        Thread.sleep(forTimeInterval: 0.1)
        print("Hyprland protocol: malformed replies logged as \(recorder.logLines)")
        #expect(recorder.logLines.count == 1 && recorder.logLines[0].contains("malformed"))
        #expect(recorder.latest?.windows.first?.rectPixels.xPixels == 40 && recorder.latest?.isDisplayConnected == true)
        #expect(source.isConnected)
    }

    @Test func hyprlandGoingAwayKeepsTheLastWindowsAndItsReturnIsPickedUp() throws {
        let fake = try Self.fake()
        defer { fake.tearDown() }
        let recorder = Recorder()
        let source = Self.start(fake, recorder)
        defer { source.stop() }
        try waitUntil(timeoutSeconds: 5, "the first snapshot") { recorder.latest?.isDisplayConnected == true }
        fake.stop()
        try waitUntil(timeoutSeconds: 5, "the loss") { recorder.latest?.isDisplayConnected == false }
        #expect(recorder.latest?.windows.first?.rectPixels.xPixels == 40, "the last windows kept")
        fake.setReply("j/clients", Self.clients(x: 1480))
        try fake.start()
        try waitUntil(timeoutSeconds: 5, "the reconnection") {
            recorder.latest?.isDisplayConnected == true && recorder.latest?.windows.first?.rectPixels.xPixels == 1480
        }
    }
}

