import SceneSoundTestSupport
import Foundation
import Testing
import SceneSoundDSP
import SceneSoundEngine
import SceneSoundProtocol
import SceneSoundWindows
@testable import SceneSoundServer

/// Scenes hold one of the engine's slots only while something needs them: a stream or play at
/// them (until the render thread hands it back), a hand placement or a binding (until unbound),
/// an open window. Then the slot is freed and reused; status counts it. In process, on a real
/// engine whose blocks the tests render.
@Suite struct SceneLifetimeTests {
    static let mono = AudioFormat(sampleFormat: .s16le, rateHz: 48000, channels: 1)

    /// The status's scene slots; the server must report them.
    /// The scene registry's clock, moved by hand.
    final class ManualClock: @unchecked Sendable { var seconds = 1000.0 }

    /// An in-process server whose scenes follow windows (given as snapshots) and whose scene
    /// registry reads a clock the test moves.
    static func serverFollowingWindows() -> (InProcessServer, ManualClock, WindowAnchoring) {
        let server = InProcessServer()
        let clock = ManualClock()
        server.core.scenes.registry.nowSeconds = { clock.seconds }
        return (server, clock, server.core.anchorToWindows(settings: .init()))
    }

    static func slots(_ server: InProcessServer) throws -> StatusDocument.SceneSlots {
        guard let slots = try server.status().sceneSlots else { throw TestFailure("the status has no scene_slots") }
        return slots
    }

    static func scene(_ server: InProcessServer, _ id: String) throws -> StatusDocument.Scene? {
        try server.status().scenes.first { $0.id == id }
    }

    static func slotIndex(_ server: InProcessServer, _ id: String) -> Int? { server.core.scenes.registry.scenes[id]?.index }

    static func place(_ client: EmbeddedClient, _ id: String, azimuthDegrees: Float) throws -> Message {
        try client.request(.scenePlace(ScenePlace(sceneID: id, position: ScenePosition(
            azimuthDegrees: azimuthDegrees, elevationDegrees: 0, distanceMetres: 1.5))))
    }

    @Test func aSceneIsFreedOnceTheRenderThreadHandsItsLastStreamBackAndItsSlotIsReused() throws {
        let server = InProcessServer()
        let client = try server.connect()
        let stream = try client.openStream(Self.mono, scene: "first")
        try client.write(stream: stream, bytes: 960)
        server.render(blocks: 2)
        let first = try #require(Self.slotIndex(server, "first"))
        let entry = try #require(try Self.scene(server, "first"))
        #expect(entry.streams == 1 && entry.kept == nil, "\(entry)")
        #expect(try Self.slots(server).inUse == 1)

        // Closed, but the render thread still fades it out at its slot: the scene stays, and a
        // scene made meanwhile gets another slot.
        #expect(try client.request(.streamClose(StreamReference(streamID: stream))) == .ok)
        #expect(try Self.scene(server, "first") != nil, "freed before the render thread let go of its stream")
        #expect(try Self.place(client, "meanwhile", azimuthDegrees: 30) == .ok)
        #expect(Self.slotIndex(server, "meanwhile") != first)

        server.render(blocks: 2)
        #expect(try Self.scene(server, "first") == nil, "the scene outlived its last stream")
        var slots = try Self.slots(server)
        #expect(slots.inUse == 1 && slots.created == 2 && slots.freed == 1 && slots.refused == 0, "\(slots)")

        // The next scene takes the freed slot.
        let next = try client.openStream(Self.mono, scene: "second")
        #expect(Self.slotIndex(server, "second") == first)
        // A stream moved to another scene lets go of its old one at once.
        #expect(try client.request(.streamSetScene(StreamSetScene(streamID: next, sceneID: "third"))) == .ok)
        #expect(try Self.scene(server, "second") == nil)
        #expect(try Self.scene(server, "third")?.streams == 1)
        slots = try Self.slots(server)
        #expect(slots.inUse == 2 && slots.freed == 2, "\(slots)")
    }

    @Test func twoThousandShortLivedScenesNeverExhaustTheSlots() throws {
        // The loop's clock stands still here: the message rate limit would count all 6000 requests as one second's.
        let server = InProcessServer { $0.maximumMessagesPerSecond = 1_000_000 }
        let client = try server.connect()
        #expect(try client.request(.sampleUpload(SampleUpload(name: "tick", format: Self.mono, totalBytes: 200, offsetBytes: 0,
                                                               pcm: ArraySlice(repeating: 1, count: 200)))) == .ok)
        for index in 0..<2000 {
            if index.isMultiple(of: 2) {
                let stream = try client.openStream(Self.mono, scene: "stream-\(index)")
                try client.write(stream: stream, bytes: 512)
                #expect(try client.request(.streamClose(StreamReference(streamID: stream))) == .ok)
            } else {
                let reply = try client.request(.samplePlay(SamplePlay(name: "tick", kind: .system, sceneID: "play-\(index)")))
                guard case .samplePlaying = reply else {
                    Issue.record("play \(index): \(reply); \(try Self.slots(server))")
                    return
                }
            }
            server.render(blocks: 2)
        }
        server.render(blocks: 4)
        let slots = try Self.slots(server)
        #expect(slots.capacity == 1023)
        #expect(slots.created == 2000 && slots.freed == 2000 && slots.inUse == 0 && slots.refused == 0, "\(slots)")
        #expect(server.core.engineStreams.count == 0)
    }

    @Test func aHandPlacedSceneOutlivesItsStreamsUntilUnbound() throws {
        let server = InProcessServer()
        let client = try server.connect()
        #expect(try Self.place(client, "radio", azimuthDegrees: 40) == .ok)
        for _ in 0..<2 {
            let stream = try client.openStream(Self.mono, scene: "radio")
            try client.write(stream: stream, bytes: 960)
            server.render(blocks: 2)
            #expect(try client.request(.streamClose(StreamReference(streamID: stream))) == .ok)
            server.render(blocks: 2)
            // Still where the user put it, for the next sound.
            let radio = try #require(try Self.scene(server, "radio"))
            #expect(radio.kept == "placed" && radio.streams == 0, "\(radio)")
            #expect(abs(radio.azimuthDegrees - 40) < 1e-3, "\(radio)")
        }
        // Unbound while a stream plays: freed when that stream ends, not before.
        let stream = try client.openStream(Self.mono, scene: "radio")
        #expect(try client.request(.sceneUnbind(SceneUnbind(sceneID: "radio"))) == .ok)
        #expect(try Self.scene(server, "radio")?.kept == nil)
        #expect(try client.request(.streamClose(StreamReference(streamID: stream))) == .ok)
        server.render(blocks: 2)
        #expect(try Self.scene(server, "radio") == nil)
        // Unbound with nothing playing: freed at once.
        #expect(try Self.place(client, "kitchen", azimuthDegrees: -40) == .ok)
        #expect(try client.request(.sceneUnbind(SceneUnbind(sceneID: "kitchen"))) == .ok)
        let slots = try Self.slots(server)
        #expect(slots.inUse == 0 && slots.freed == 2, "\(slots)")
    }

    /// An `x11:` scene and a program's scene last while their window is open; a name bound to a
    /// window, until the window is seen to close; then each keeps the window's last place for a
    /// minute, and a window closing while its app plays keeps the scene until the sound ends.
    @Test func windowScenesLastAsLongAsTheirWindowAndAMinuteAfter() throws {
        let (server, clock, anchoring) = Self.serverFollowingWindows()
        anchoring.apply(WindowSessionTests.snapshot)
        let program = try server.connect(peerPID: 4242)
        let windowScene = SceneID.forX11Window(WindowSessionTests.window.id)
        #expect(try program.request(.sceneBindWindow(SceneBindWindow(sceneID: "editor", windowID: WindowSessionTests.window.id))) == .ok)
        #expect(try program.request(.sceneBindWindow(SceneBindWindow(sceneID: "later", windowID: 0x500001))) == .ok)
        for scene in [windowScene, ""] {
            let stream = try program.openStream(Self.mono, scene: scene)
            #expect(try program.request(.streamClose(StreamReference(streamID: stream))) == .ok)
        }
        server.render(blocks: 2)
        #expect(try Self.scene(server, windowScene)?.kept == "window")
        #expect(try Self.scene(server, "pid:4242")?.kept == "window")
        #expect(try Self.scene(server, "editor")?.kept == "bound")

        // The window closes while a sound plays at it.
        let playing = try program.openStream(Self.mono, scene: windowScene)
        var closed = WindowSessionTests.snapshot
        closed.windows = []
        closed.activeWindowID = nil
        closed.sequence = 2
        anchoring.apply(closed)
        let gone = try #require(try Self.scene(server, windowScene))
        #expect(gone.state == "gone" && gone.streams == 1, "\(gone)")
        // With nothing playing, where the window was for a minute (a late sound still plays there).
        for id in ["editor", "pid:4242"] {
            let scene = try #require(try Self.scene(server, id))
            #expect(scene.kept == "closed_window" && scene.state == "gone", "\(scene)")
            #expect(scene.azimuthDegrees > 10, "\(scene)")
        }
        // A binding whose window was never seen stays (the window may not be mapped yet).
        #expect(try Self.scene(server, "later")?.kept == "bound")

        #expect(try program.request(.streamClose(StreamReference(streamID: playing))) == .ok)
        server.render(blocks: 2)
        #expect(try Self.scene(server, windowScene)?.kept == "closed_window")
        clock.seconds += 59
        server.render()
        #expect(try Self.slots(server).inUse == 4)
        clock.seconds += 1
        server.render()
        for id in [windowScene, "editor", "pid:4242"] { #expect(try Self.scene(server, id) == nil, "\(id) outlived its window's minute") }
        let slots = try Self.slots(server)
        #expect(slots.inUse == 1 && slots.freed == 3, "\(slots)")
    }

    /// The render thread resets a freed slot: a scene that reuses the slot of a minimized
    /// window's scene (muffled, 12 dB down) sounds as loud as one in a slot never used.
    @Test func aReusedSlotStartsUnmuffled() throws {
        let (server, clock, anchoring) = Self.serverFollowingWindows()
        var minimized = WindowSessionTests.snapshot
        minimized.windows[0].isMinimized = true
        anchoring.apply(minimized)
        let client = try server.connect()
        let windowScene = SceneID.forX11Window(WindowSessionTests.window.id)
        let muffled = try client.openStream(Self.mono, scene: windowScene)
        try client.write(stream: muffled, bytes: 4800)
        server.render(blocks: 12)  // the muffling glides in over about 30 ms
        let slot = Self.slotIndex(server, windowScene)
        var closed = minimized
        closed.windows = []
        anchoring.apply(closed)
        #expect(try client.request(.streamClose(StreamReference(streamID: muffled))) == .ok)
        clock.seconds += SceneRegistry.closedWindowKeepSeconds
        server.render(blocks: 2)
        #expect(try Self.scene(server, windowScene) == nil)

        /// RMS of a 0.1 s tone played at `scene`, from its third block on.
        func level(_ scene: String) throws -> (decibels: Double, slot: Int?) {
            let stream = try client.openStream(Self.mono, scene: scene)
            let slot = Self.slotIndex(server, scene)
            let tone = (0..<4800).flatMap { i -> [UInt8] in
                let value = Int16(8000 * sin(2 * Double.pi * 500 * Double(i) / 48000))
                return [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8)]
            }
            try client.send(.streamData(StreamData(streamID: stream, pcm: ArraySlice(tone))))
            var sum = 0.0, count = 0
            for block in 0..<16 {
                server.render()
                if block >= 2 { for sample in server.block { sum += Double(sample * sample); count += 1 } }
            }
            #expect(try client.request(.streamClose(StreamReference(streamID: stream))) == .ok)
            server.render(blocks: 2)
            return (10 * log10(sum / Double(count)), slot)
        }
        let reused = try level("reuses-the-slot")
        #expect(reused.slot == slot && slot != nil)
        // The freed slot is taken again by a placed scene; the next one is a slot never used.
        #expect(try client.request(.scenePlace(ScenePlace(sceneID: "holder", position: ScenePosition(
            azimuthDegrees: 90, elevationDegrees: 0, distanceMetres: 1)))) == .ok)
        let untouched = try level("never-used")
        #expect(untouched.slot != slot)
        #expect(abs(reused.decibels - untouched.decibels) < 0.5,
                "reused slot \(reused.decibels) dB, never-used slot \(untouched.decibels) dB")
    }

    @Test func whenEverySlotIsTakenNamedScenesAreRefusedClearlyAndCounted() throws {
        let server = InProcessServer(maximumScenes: 4)
        let client = try server.connect()
        for id in ["a", "b", "c"] { #expect(try Self.place(client, id, azimuthDegrees: 10) == .ok) }
        let refused = try Self.place(client, "d", azimuthDegrees: 10)
        guard case .error(let error) = refused else { throw TestFailure("SCENE_PLACE with every slot taken: \(refused)") }
        #expect(error.code == .limitExceeded)
        #expect(error.message == "scene 'd': every scene slot is in use (3 scenes); unbind placed scenes or stop sounds playing at other scenes")
        #expect(errorCode(try client.request(.streamOpen(StreamOpen(kind: .playback, format: Self.mono, sceneID: "d")))) == .limitExceeded)
        #expect(errorCode(try client.request(.sceneBindWindow(SceneBindWindow(sceneID: "d", windowID: 7)))) == .limitExceeded)
        // Scenes that exist still play, and "no scene" plays straight ahead.
        _ = try client.openStream(Self.mono, scene: "a")
        _ = try client.openStream(Self.mono, scene: "")
        var slots = try Self.slots(server)
        #expect(slots.refused == 3 && slots.inUse == 3 && slots.capacity == 3, "\(slots)")

        #expect(try client.request(.sceneUnbind(SceneUnbind(sceneID: "b"))) == .ok)
        #expect(try Self.place(client, "d", azimuthDegrees: 10) == .ok)
        slots = try Self.slots(server)
        #expect(slots.refused == 3 && slots.inUse == 3 && slots.freed == 1, "\(slots)")
    }

    /// Behind a full queue, a freed slot's reset stays after its old scene's commands, and the
    /// next scene's placement after the reset: a waiting command for the same slot must not take
    /// the new placement ahead of the reset (the slot would end up straight ahead).
    @Test func aReusedSlotsPlacementIsNeverQueuedAheadOfItsReset() {
        let queue = SPSCQueue<EngineCommand>(capacity: 4)
        let commands = EngineCommandQueue(queue: queue, refusalThreshold: 100)
        while queue.push(.setDucking(DuckingParameters())) {}
        let old = Vector3(x: -1, y: 0, z: 0), new = Vector3(x: 1, y: 0, z: 0)
        commands.push(.placeScene(index: 5, position: old, widthMetres: 0))
        commands.push(.resetScene(index: 5))
        commands.push(.placeScene(index: 5, position: new, widthMetres: 0))
        var seen: [String] = []
        while commands.waitingCount > 0 || queue.count > 0 {
            while let command = queue.pop() {
                switch command {
                case .placeScene(5, let position, _): seen.append(position == new ? "new" : "old")
                case .resetScene(5): seen.append("reset")
                default: break
                }
            }
            commands.flush()
        }
        #expect(seen == ["old", "reset", "new"])
    }
}
