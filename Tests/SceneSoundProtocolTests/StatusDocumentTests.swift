import Foundation
import Testing
import SceneSoundProtocol

/// The status schema as a type: its keys on the wire and how scenes are named for people.
@Suite struct StatusDocumentTests {
    static func scene(_ id: String, title: String? = nil, application: String? = nil) -> StatusDocument.Scene {
        StatusDocument.Scene(id: id, kind: "window", title: title, application: application,
                             azimuthDegrees: 10, elevationDegrees: 0, distanceMetres: 0.7, positionMetres: [-0.1, 0, -0.7])
    }

    @Test func scenesAreNamedByTheirWindows() {
        #expect(Self.scene("x11:0x80000c", title: "notes.txt", application: "XTerm").label == "XTerm — notes.txt")
        #expect(Self.scene("editor", title: "notes.txt", application: "XTerm").label == "editor (XTerm — notes.txt)")
        #expect(Self.scene("x11:0x80000c", title: "firefox", application: "firefox").label == "firefox")
        #expect(Self.scene("x11:0x80000c", application: "XTerm").label == "XTerm")
        #expect(Self.scene("x11:0x80000c", title: "", application: "").label == "x11:0x80000c")
        #expect(Self.scene("radio").label == "radio")
    }

    @Test func keysAreSnakeCaseWithUnitsAndAbsentValuesAreLeftOut() throws {
        let stream = StatusDocument.Stream(id: 3, clientID: 2, kind: "playback", scene: "radio", state: "playing",
                                           spatial: "anchored", volumeDecibels: -6, levelDecibels: -15.5,
                                           format: "s16le 2ch 48000Hz", bufferedSeconds: 0.1, starvedSeconds: 0, loop: false)
        let object = try JSONSerialization.jsonObject(with: JSONEncoder().encode(stream)) as? [String: Any] ?? [:]
        #expect(Set(object.keys) == ["id", "client_id", "kind", "scene", "state", "spatial", "volume_db", "level_db", "format",
                                     "buffered_seconds", "starved_seconds", "loop"])
        let scene = try JSONSerialization.jsonObject(with: JSONEncoder().encode(Self.scene("radio"))) as? [String: Any] ?? [:]
        #expect(Set(scene.keys) == ["id", "kind", "azimuth_degrees", "elevation_degrees", "distance_metres", "position_metres"])
        let decoded = try JSONDecoder().decode(StatusDocument.Stream.self, from: JSONEncoder().encode(stream))
        #expect(decoded == stream)
    }

    @Test func capturedAppStreamsHaveTheirOwnSnakeCaseKeys() throws {
        let stream = StatusDocument.AppStream(application: "mpv", binary: "mpv", pid: 4242, kind: "playback", eventID: nil,
                                              window: "0x80000c", windowFoundBy: "pid", title: "song.flac - mpv", scene: "pid:4242",
                                              azimuthDegrees: 30, addedLatencySeconds: 0.02, starvedSeconds: 0, droppedSeconds: 0.1,
                                              slippedSeconds: -0.002,
                                              recentDrySpells: [.init(startedMonotonicSeconds: 81_234.567, seconds: 0.004)])
        let object = try JSONSerialization.jsonObject(with: JSONEncoder().encode(stream)) as? [String: Any] ?? [:]
        #expect(Set(object.keys) == ["application", "binary", "pid", "kind", "window", "window_found_by", "title", "scene", "azimuth_degrees",
                                     "added_latency_seconds", "starved_seconds", "dropped_seconds", "slipped_seconds", "recent_dry_spells"])
        let apps = StatusDocument.Apps(state: "capturing", started: 1, ended: 0, excluded: ["firefox"], streams: [stream])
        #expect(try JSONDecoder().decode(StatusDocument.Apps.self, from: JSONEncoder().encode(apps)) == apps)
    }
}
