import SceneSoundTestSupport
import Foundation
import Testing
import SceneSoundProtocol
import SceneSoundWindows
@testable import SceneSoundServer

/// Sessions and windows in process: the tracker's snapshot is handed to the anchoring as the
/// server's event loop would, and the client's pid stands for SO_PEERCRED's.
@Suite struct WindowSessionTests {
    final class AttentionRecorder: AlertAttention {
        var flagged: [UInt32] = []
        func alertNeedsAttention(windowID: UInt32, sceneID: String) { flagged.append(windowID) }
    }

    static let window = TrackedWindow(
        id: 0x400001, frameID: 0x400000, rectPixels: PixelRect(xPixels: 100, yPixels: 400, widthPixels: 400, heightPixels: 300),
        isViewable: true, isMinimized: false, isFullscreen: false, demandsAttention: false, desktop: 0,
        isOnCurrentDesktop: true, pid: 4242, stackingIndex: 0)

    static let snapshot = WindowSnapshot(
        sequence: 1, publishedMonotonicNanoseconds: 0, newestEventMonotonicNanoseconds: 0, isDisplayConnected: true,
        windows: [window],
        monitors: [Monitor(name: "test", rectPixels: PixelRect(xPixels: 0, yPixels: 0, widthPixels: 1920, heightPixels: 1080),
                           widthMillimetres: 520, heightMillimetres: 290, isPrimary: true)],
        activeWindowID: 0x400001, currentDesktop: 0, hasEWMHWindowManager: true)

    @Test func aProgramThatNamesNoSceneFollowsItsWindowAndItsAlertsFlagIt() throws {
        let server = InProcessServer()
        server.core.anchorToWindows(settings: .init()).apply(Self.snapshot)
        let attention = AttentionRecorder()
        server.core.samples.attention = attention

        let program = try server.connect(peerPID: 4242)
        _ = try program.openStream(AudioFormat(sampleFormat: .s16le, rateHz: 48000, channels: 1))
        let scenes = try server.status().scenes
        let scene = try #require(scenes.first { $0.id == "pid:4242" }, "\(scenes)")
        #expect(scene.kind == "program" && scene.window == "0x400001")
        #expect(scene.azimuthDegrees > 10, "a window left of centre sounds from the left")

        // Its alert, naming no scene, flags its window when asked to; another program's does not.
        let format = AudioFormat(sampleFormat: .s16le, rateHz: 48000, channels: 1)
        let alert = Message.samplePlay(SamplePlay(name: "bell", kind: .alert, sceneID: "", demandAttention: true))
        for client in [program, try server.connect(peerPID: 5151)] {
            #expect(try client.request(.sampleUpload(SampleUpload(name: "bell", format: format, totalBytes: 200, offsetBytes: 0,
                                                                   pcm: ArraySlice(repeating: 1, count: 200)))) == .ok)
            guard case .samplePlaying = try client.request(alert) else { throw TestFailure("the alert did not play") }
        }
        #expect(attention.flagged == [0x400001])
    }

    /// A native Wayland window (sway's con 42) in the snapshot: its `wayland:` scene follows it,
    /// a program is found by its pid, a binding takes its handle, and the scene cannot be placed;
    /// the window source hears when the first stream starts and the last one ends.
    @Test func nativeWaylandWindowsAreScenesLikeX11Ones() throws {
        let handle = SceneID.nativeWindowHandle("42")
        var native = Self.window
        native.id = handle
        native.frameID = handle
        native.nativeID = "42"
        native.applicationName = "mpv"
        var snapshot = Self.snapshot
        snapshot.windows = [native]
        snapshot.activeWindowID = handle
        let server = InProcessServer()
        server.core.anchorToWindows(settings: .init()).apply(snapshot)
        var playing: [Bool] = []
        server.core.playingChanged = { playing.append($0) }

        let client = try server.connect(peerPID: 4242)
        let format = AudioFormat(sampleFormat: .s16le, rateHz: 48000, channels: 1)
        let stream = try client.openStream(format, scene: "wayland:42")
        _ = try client.openStream(format)  // names no scene: found by pid
        #expect(try client.request(.sceneBindWindow(SceneBindWindow(sceneID: "player", windowID: handle))) == .ok)
        server.render()
        let scenes = try server.status().scenes
        let own = try #require(scenes.first { $0.id == "wayland:42" }, "\(scenes)")
        #expect(own.kind == "window" && own.application == "mpv" && own.azimuthDegrees > 10)
        #expect(scenes.first { $0.id == "pid:4242" }?.window == "0x" + String(handle, radix: 16))
        #expect(scenes.first { $0.id == "player" }?.azimuthDegrees == own.azimuthDegrees)
        #expect(try server.status().display.activeWindowScene == "wayland:42")
        let place = ScenePosition(azimuthDegrees: 0, elevationDegrees: 0, distanceMetres: 1)
        #expect(errorCode(try client.request(.scenePlace(ScenePlace(sceneID: "wayland:42", position: place)))) == .notPermitted)
        #expect(errorCode(try client.request(.streamOpen(StreamOpen(kind: .playback, format: format, sceneID: "wayland:")))) == .invalidArgument)
        #expect(playing == [true])
        _ = stream
    }
}
