import Foundation
import SceneSoundClient
import SceneSoundProtocol
import Testing

/// Replies are matched to requests by id, whatever their order; a vanished server fails
/// every waiter instead of leaving it hanging.
@Suite(.serialized) struct RequestRoutingTests {
    @Test func repliesOutOfOrderReachTheirRequests() throws {
        let scenes = [SceneListEntry(sceneID: "music", anchor: .position, windowID: 0,
                                     position: ScenePosition(azimuthDegrees: 30, elevationDegrees: 0, distanceMetres: 1))]
        let arrived = Recorder<MessageType>()
        let peer = try ScriptedPeer { peer in
            try peer.handshake()
            let status = try peer.expect(.statusRequest)
            arrived.record(.statusRequest)
            let list = try peer.expect(.sceneList)
            arrived.record(.sceneList)
            let place = try peer.expect(.scenePlace)
            // Answer the last first, the first last.
            peer.send(.ok, requestID: place.requestID)
            peer.send(.sceneListReply(SceneListReply(entries: scenes)), requestID: list.requestID)
            peer.send(.statusReply(StatusReply(json: #"{"server":{}}"#)), requestID: status.requestID)
            _ = try? peer.receive()
        }
        let connection = try ClientConnection(socketPath: peer.socketPath, clientName: "tests")
        let order = Recorder<String>()
        // Each request is sent once the peer has the one before: this order on the wire.
        let statusCall = BackgroundCall { () throws(ClientError) in try connection.status() }
        #expect(arrived.wait(for: 1))
        let listCall = BackgroundCall { () throws(ClientError) in try connection.listScenes() }
        #expect(arrived.wait(for: 2))
        connection.perform(.placeScene("music", at: ScenePosition(azimuthDegrees: 30, elevationDegrees: 0, distanceMetres: 1))) {
            order.record((try? $0.get()) != nil ? "place ok" : "place failed")
        }
        #expect(try #require(statusCall.result(waitingSeconds: 5)).get() == #"{"server":{}}"#)
        #expect(try #require(listCall.result(waitingSeconds: 5)).get() == scenes)
        #expect(order.wait(for: 1))
        #expect(order.all == ["place ok"])
        connection.close()
        try peer.finish()
    }

    @Test func errorReplyCarriesTheServersCode() throws {
        let peer = try ScriptedPeer { peer in
            try peer.handshake()
            let (_, requestID) = try peer.expect(.sceneUnbind)
            peer.send(.error(ErrorReply(code: .unknownScene, message: "scene \"x\" has no binding")), requestID: requestID)
            _ = try? peer.receive()
        }
        let connection = try ClientConnection(socketPath: peer.socketPath, clientName: "tests")
        do {
            try connection.unbindScene("x")
            Issue.record("unbind succeeded")
        } catch {
            #expect(error.serverCode == .unknownScene)
            #expect(error.serverMessage == "scene \"x\" has no binding")
            #expect(error.description == "the server refused: scene \"x\" has no binding (unknown_scene)")
        }
        connection.close()
        try peer.finish()
    }

    @Test func invalidValuesAreRejectedBeforeSending() throws {
        let peer = try ScriptedPeer { peer in
            try peer.handshake()
            #expect(try peer.staysQuiet(forSeconds: 0.3))
        }
        let connection = try ClientConnection(socketPath: peer.socketPath, clientName: "tests")
        #expect(throws: ClientError.self) {
            try connection.placeScene("music", at: ScenePosition(azimuthDegrees: 500, elevationDegrees: 0, distanceMetres: 1))
        }
        #expect(throws: ClientError.self) { try connection.bindScene("main", toWindow: 0) }
        try peer.finish()
        connection.close()
    }

    @Test func serverClosingMidRequestFailsEveryWaiter() throws {
        let arrived = Recorder<MessageType>()
        let peer = try ScriptedPeer { peer in
            try peer.handshake()
            _ = try peer.expect(.statusRequest)
            arrived.record(.statusRequest)
            _ = try peer.expect(.sceneList)
            peer.close()  // gone without a word
        }
        let connection = try ClientConnection(socketPath: peer.socketPath, clientName: "tests")
        let events = Recorder<ClientEvent>()
        connection.setEventHandler { events.record($0) }
        let callback = Recorder<Result<[SceneListEntry], ClientError>>()
        let statusCall = BackgroundCall { () throws(ClientError) in try connection.status(timeoutSeconds: nil) }
        #expect(arrived.wait(for: 1))  // the status request goes out first
        connection.perform(.listScenes()) { callback.record($0) }

        let statusResult = statusCall.result(waitingSeconds: 5)
        #expect(statusResult != nil, "the blocked request must not hang")
        guard case .failure(.disconnected)? = statusResult else { Issue.record("got \(String(describing: statusResult))"); return }
        #expect(callback.wait(for: 1))
        guard case .failure(.disconnected)? = callback.all.first else { Issue.record("got \(callback.all)"); return }
        #expect(events.wait(for: 1))
        #expect(events.all.count == 1)
        // Everything later fails at once too.
        #expect(throws: ClientError.disconnected(reason: "the server closed the connection")) { try connection.status() }
        try peer.finish()
    }

    @Test func theServersLastErrorIsTheDisconnectReason() throws {
        let peer = try ScriptedPeer { peer in
            try peer.handshake()
            _ = try peer.expect(.statusRequest)
            peer.send(.error(ErrorReply(code: .limitExceeded, message: "too many clients")))
            peer.close()
        }
        let connection = try ClientConnection(socketPath: peer.socketPath, clientName: "tests")
        #expect(throws: ClientError.disconnected(reason: "the server closed the connection: too many clients (limit_exceeded)")) {
            try connection.status()
        }
        try peer.finish()
    }

    @Test func timeoutLeavesTheConnectionUsableAndDropsTheLateReply() throws {
        let peer = try ScriptedPeer { peer in
            try peer.handshake()
            let slow = try peer.expect(.statusRequest)
            let next = try peer.expect(.sceneList, timeoutSeconds: 5)
            peer.send(.statusReply(StatusReply(json: "{}")), requestID: slow.requestID)  // too late
            peer.send(.sceneListReply(SceneListReply(entries: [])), requestID: next.requestID)
            _ = try? peer.receive()
        }
        let connection = try ClientConnection(socketPath: peer.socketPath, clientName: "tests")
        #expect(throws: ClientError.timedOut(operation: "STATUS_REQUEST", seconds: 0.2)) { try connection.status(timeoutSeconds: 0.2) }
        #expect(try connection.listScenes() == [])
        #expect(connection.disconnection == nil)
        connection.close()
        try peer.finish()
    }

    @Test func closeFailsPendingRequestsAndIsIdempotent() throws {
        let arrived = Recorder<MessageType>()
        let peer = try ScriptedPeer { peer in
            try peer.handshake()
            _ = try peer.expect(.statusRequest)
            arrived.record(.statusRequest)
            _ = try? peer.receive()
        }
        let connection = try ClientConnection(socketPath: peer.socketPath, clientName: "tests")
        let call = BackgroundCall { () throws(ClientError) in try connection.status(timeoutSeconds: nil) }
        #expect(arrived.wait(for: 1))  // pending at the server when the connection closes
        connection.close()
        connection.close()
        guard case .failure(.disconnected)? = call.result(waitingSeconds: 5) else { Issue.record("the request was not failed"); return }
        #expect(connection.waitUntilDisconnected(timeoutSeconds: 1) != nil)
        try peer.finish()
    }

    @Test func blockingInsideACompletionIsRefusedNotDeadlocked() throws {
        let peer = try ScriptedPeer { peer in
            try peer.handshake()
            let (_, requestID) = try peer.expect(.headRecenter)
            peer.send(.ok, requestID: requestID)
            _ = try? peer.receive()
        }
        let connection = try ClientConnection(socketPath: peer.socketPath, clientName: "tests")
        let inner = Recorder<String>()
        connection.perform(.recenterHead()) { _ in
            do { _ = try connection.status() } catch { inner.record("\(error)") }
        }
        #expect(inner.wait(for: 1))
        #expect(inner.all.first?.contains("reader thread") == true)
        connection.close()
        try peer.finish()
    }
}
