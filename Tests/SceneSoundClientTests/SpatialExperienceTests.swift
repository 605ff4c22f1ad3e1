import Foundation
import SceneSoundClient
import SceneSoundProtocol
import Testing

/// The idioms against a real daemon share the process-wide default connection and
/// $SCENESOUND_SOCKET: one suite, serialized.
@Suite(.serialized) struct IdiomTests {
    @Test func spatialExperiencesNameTheWireModeAndScene() {
        let cases: [(SpatialExperience, SpatialMode, String)] = [
            (.headTracked(.automatic), .anchored, ""),
            (.headTracked(.front), .anchored, SpatialExperience.frontSceneIdentifier),
            (.headTracked(.scene(identifier: "x11:0x3a00007")), .anchored, "x11:0x3a00007"),
            (.fixed, .headLocked, ""),
            (.bypassed, .off, ""),
        ]
        for (experience, mode, scene) in cases {
            #expect(experience.spatialMode == mode, "\(experience)")
            #expect(experience.sceneIdentifier == scene, "\(experience)")
        }
    }

    /// Each experience opens a stream the server plays in that mode at that scene, over the
    /// default connection, which is made once and made again for another socket.
    @Test func defaultConnectionOpensStreamsInEachExperience() throws {
        let daemon = try RealDaemon()
        daemon.becomeDefault()
        let connection = try SceneSound.defaultConnection()
        #expect(try SceneSound.defaultConnection() === connection)
        let format = AudioFormat(sampleFormat: .f32le, rateHz: 48000, channels: 1)
        let experiences: [SpatialExperience] = [.headTracked(.automatic), .headTracked(.front), .headTracked(.scene(identifier: "editor")),
                                               .fixed, .bypassed]
        var streams: [ClientStream] = []
        for experience in experiences {
            streams.append(try connection.openStream(StreamOpen(kind: .playback, format: format, spatialExperience: experience)))
        }
        let status = try daemon.status()
        let client = try #require(status.clients.first { $0.name == SharedProgramName.value })
        let listed = status.streams.filter { $0.clientID == client.id }.sorted { $0.id < $1.id }
        #expect(listed.map(\.spatial) == ["anchored", "anchored", "anchored", "head-locked", "off"])
        #expect(listed.map(\.scene)[1...2] == [SpatialExperience.frontSceneIdentifier, "editor"])
        for stream in streams { try stream.close() }

        let second = try RealDaemon()
        second.becomeDefault()
        let reconnected = try SceneSound.defaultConnection()
        #expect(reconnected !== connection)
        #expect(reconnected.socketPath == second.socketPath)
        #expect(try second.status().clients.contains { $0.name == SharedProgramName.value })
    }
}

/// The name the default connection gives the server: the test binary's.
enum SharedProgramName {
    static var value: String { String(CommandLine.arguments[0].split(separator: "/").last ?? "") }
}
