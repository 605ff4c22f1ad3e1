import SceneSoundTestSupport
import Foundation
import SceneSoundProtocol
@testable import SceneSoundServer
import Testing

/// HEADPHONE_EQ_USE on a session: the EQ switches, `status` shows it, and a malformed file is
/// refused naming its line with the EQ in use kept.
@Suite struct HeadphoneEQSessionTests {
    static func file(_ text: String) throws -> String {
        let path = NSTemporaryDirectory() + "scenesound-eq-\(UUID().uuidString).txt"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func aMalformedFileIsRefusedNamingItsLineAndTheEQInUseStays() throws {
        let server = InProcessServer()
        let client = try server.connect()
        let good = try Self.file("Preamp: -6.2 dB\nFilter 1: ON PK Fc 1000 Hz Gain 6 dB Q 1.41\nFilter 2: ON LSC Fc 105 Hz Gain 3 dB Q 0.7\n")
        let bad = try Self.file("Preamp: -6.2 dB\nFilter 1: ON PK Fc 1000 Hz Gain 6 dB Q 1.41\nFilter 2: ON PK Fc 2000 Hz Gain six dB Q 1\n")
        defer { try? FileManager.default.removeItem(atPath: good); try? FileManager.default.removeItem(atPath: bad) }
        #expect(try server.status().headphoneEQ == nil)

        #expect(try client.request(.headphoneEQUse(HeadphoneEQUse(path: good))) == .ok)
        server.render(blocks: 2)
        let inUse = StatusDocument.HeadphoneEQ(path: good, preampDecibels: -6.2, filters: 2)
        #expect(try server.status().headphoneEQ == inUse)
        #expect(server.engine.renderer.headphoneEQ.current?.sourcePath == good)

        let reply = try client.request(.headphoneEQUse(HeadphoneEQUse(path: bad)))
        guard case .error(let error) = reply else { throw TestFailure("a malformed file was accepted: \(reply)") }
        #expect(error.code == .invalidArgument)
        #expect(error.message == "\(bad): line 3: Gain 'six' is not a number (expected 'Filter N: ON|OFF PK|LSC|HSC Fc F Hz Gain G dB Q Q')")
        server.render(blocks: 2)
        #expect(try server.status().headphoneEQ == inUse)
        #expect(server.engine.renderer.headphoneEQ.current?.sourcePath == good)

        let missing = try client.request(.headphoneEQUse(HeadphoneEQUse(path: "/nonexistent/eq.txt")))
        #expect(errorCode(missing) == .invalidArgument)
        #expect(try server.status().headphoneEQ == inUse)

        #expect(try client.request(.headphoneEQUse(HeadphoneEQUse(path: ""))) == .ok)
        server.render(blocks: 4)
        #expect(try server.status().headphoneEQ == nil)
        #expect(server.engine.renderer.headphoneEQ.current == nil)
    }

    @Test func aRelativePathIsRefused() throws {
        let server = InProcessServer()
        let client = try server.connect()
        #expect(errorCode(try client.request(.headphoneEQUse(HeadphoneEQUse(path: "eq.txt")))) == .invalidArgument)
    }
}
