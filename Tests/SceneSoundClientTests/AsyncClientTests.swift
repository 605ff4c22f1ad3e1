import Foundation
import SceneSoundClient
import SceneSoundProtocol
import Testing

@Suite(.serialized) struct AsyncClientTests {
    @Test func requestsAndAStreamWithCredit() async throws {
        let audio = pattern(64)
        let received = Recorder<[UInt8]>()
        let peer = try ScriptedPeer { peer in
            try peer.handshake()
            let (_, statusID) = try peer.expect(.statusRequest)
            peer.send(.statusReply(StatusReply(json: #"{"render":{"load":0.05}}"#)), requestID: statusID)
            let (_, openID) = try peer.expect(.streamOpen)
            peer.send(.streamOpened(StreamOpened(streamID: 3, creditBytes: 16)), requestID: openID)
            var bytes: [UInt8] = []
            while bytes.count < 64 {
                if bytes.count == 16 {
                    try require(try peer.staysQuiet(forSeconds: 0.2), "sent beyond credit")
                    peer.send(.creditGranted(CreditGranted(streamID: 3, bytes: 48)))
                }
                guard case .streamData(let data) = try peer.receive().message else {
                    throw ScriptedPeer.ScriptFailure(description: "expected STREAM_DATA")
                }
                bytes += data.pcm
            }
            received.record(bytes)
            let (_, drainID) = try peer.expect(.streamDrain)
            peer.send(.ok, requestID: drainID)
            let (_, closeID) = try peer.expect(.streamClose)
            peer.send(.ok, requestID: closeID)
            _ = try? peer.receive()
        }
        let client = try await SceneSoundClient.connect(socketPath: peer.socketPath, clientName: "async-tests")
        #expect(client.server.serverName == "scripted-peer")
        #expect(try await client.status() == #"{"render":{"load":0.05}}"#)
        let stream = try await client.openStream(playbackOptions(monoS16))
        try await stream.write(audio)
        try await stream.drain()
        try await stream.close()
        client.close()
        try peer.finish()
        #expect(received.all == [audio])
    }

    @Test func cancellingTheTaskWithdrawsTheWait() async throws {
        let arrived = Recorder<MessageType>()
        let peer = try ScriptedPeer { peer in
            try peer.handshake()
            _ = try peer.expect(.statusRequest)
            arrived.record(.statusRequest)
            _ = try? peer.receive()
        }
        let client = try await SceneSoundClient.connect(socketPath: peer.socketPath, clientName: "async-tests")
        let task = Task { () async throws(ClientError) -> String in try await client.status() }
        #expect(arrived.wait(for: 1))  // the request is out: the task is waiting for its reply
        task.cancel()
        let result = await task.result
        #expect(throws: ClientError.cancelled(operation: "STATUS_REQUEST")) { try result.get() }
        client.close()
        try peer.finish()
    }

    @Test func connectingToNothingFails() async {
        let path = NSTemporaryDirectory() + "scenesound-nobody-\(UUID().uuidString)"
        await #expect(throws: ClientError.self) { try await SceneSoundClient.connect(socketPath: path, clientName: "x") }
    }
}
