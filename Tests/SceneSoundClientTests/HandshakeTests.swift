import Foundation
import SceneSoundClient
import SceneSoundProtocol
import Testing

@Suite(.serialized) struct HandshakeTests {
    @Test func welcomeParametersAreExposed() throws {
        let hellos = Recorder<Hello>()
        let peer = try ScriptedPeer { peer in
            hellos.record(try peer.handshake(maxFrameBytes: 8192))
            _ = try? peer.receive()  // until the client closes
        }
        let connection = try ClientConnection(socketPath: peer.socketPath, clientName: "tests", clientPID: 4242)
        #expect(connection.server == ServerParameters(Welcome(
            version: 1, sampleRateHz: 48000, blockFrames: 256, maxFrameBytes: 8192, maxStreams: 16,
            maxSampleBytes: 1 << 20, serverName: "scripted-peer")))
        connection.close()
        try peer.finish()
        #expect(hellos.all == [Hello(clientPID: 4242, clientName: "tests")])
    }

    @Test func refusalCarriesTheServersCodeAndMessage() throws {
        let peer = try ScriptedPeer { peer in
            let (_, requestID) = try peer.expect(.hello)
            peer.send(.error(ErrorReply(code: .unsupportedVersion, message: "server supports protocol versions 2...2")), requestID: requestID)
        }
        #expect(throws: ClientError.server(code: .unsupportedVersion, message: "server supports protocol versions 2...2")) {
            try ClientConnection(socketPath: peer.socketPath, clientName: "tests")
        }
        try peer.finish()
    }

    @Test func nobodyListeningIsCannotConnect() {
        let path = NSTemporaryDirectory() + "scenesound-nobody-\(UUID().uuidString)"
        do {
            _ = try ClientConnection(socketPath: path, clientName: "tests")
            Issue.record("connected to nothing")
        } catch {
            guard case .cannotConnect(let failedPath, _) = error else { Issue.record("got \(error)"); return }
            #expect(failedPath == path)
            #expect(error.description == "cannot reach the SceneSound server at \(path) (is scenesoundd running?)")
        }
    }

    @Test func silentServerTimesOut() throws {
        let peer = try ScriptedPeer { peer in
            _ = try peer.expect(.hello)
            _ = try? peer.receive(timeoutSeconds: 2)  // says nothing until the client gives up
        }
        let start = Date()
        #expect(throws: ClientError.timedOut(operation: "the handshake with the server", seconds: 0.3)) {
            try ClientConnection(socketPath: peer.socketPath, clientName: "tests", timeoutSeconds: 0.3)
        }
        #expect(Date().timeIntervalSince(start) < 2)
        try peer.finish()
    }
}
