import Foundation
import SceneSoundClient
import SceneSoundProtocol
import Testing

@Suite(.serialized) struct SampleAndHeadTests {
    @Test func sampleUploadIsChunkedInOrderThenPlayedUntilItEnds() throws {
        let pcm = pattern(10_000)  // mono s16: 5000 frames
        let maxFrameBytes = 4096
        let uploads = Recorder<SampleUpload>()
        let peer = try ScriptedPeer { peer in
            try peer.handshake(maxFrameBytes: UInt32(maxFrameBytes))
            var total = 0
            while total < pcm.count {
                let frame = try peer.receiveFrame()
                try require(FrameHeader.byteCount + frame.payload.count <= maxFrameBytes, "chunk frame over the maximum")
                guard case .sampleUpload(let chunk) = try Message.decode(frame: frame) else {
                    throw ScriptedPeer.ScriptFailure(description: "expected SAMPLE_UPLOAD")
                }
                uploads.record(chunk)
                total += chunk.pcm.count
                peer.send(.ok, requestID: frame.requestID)
            }
            let (play, playID) = try peer.expect(.samplePlay)
            try require(play == .samplePlay(SamplePlay(name: "bell", kind: .alert, sceneID: "x11:0x3a00007")), "play request")
            peer.send(.samplePlaying(SamplePlaying(playID: 5)), requestID: playID)
            peer.send(.playbackEnded(PlaybackEnded(playID: 5, reason: .completed)))  // before anyone waits
            _ = try? peer.receive()
        }
        let connection = try ClientConnection(socketPath: peer.socketPath, clientName: "tests")
        try connection.uploadSample(name: "bell", format: monoS16, pcm: pcm)
        let playID = try connection.playSample(SamplePlay(name: "bell", kind: .alert, sceneID: SceneID.forX11Window(0x3a00007)))
        #expect(playID == 5)
        #expect(try connection.waitForPlaybackEnd(playID: 5, timeoutSeconds: 5) == .completed)
        connection.close()
        try peer.finish()

        let chunks = uploads.all
        #expect(chunks.count == 3)
        #expect(chunks.map(\.offsetBytes) == [0, 4064, 8128])  // 4096 − 12 − 19 header bytes, in whole frames
        #expect(chunks.allSatisfy { $0.totalBytes == 10_000 && $0.name == "bell" && $0.format == monoS16 })
        #expect(chunks.flatMap(\.pcm) == pcm)
    }

    @Test func sampleOverTheServersLimitIsRefusedLocally() throws {
        let peer = try ScriptedPeer { peer in
            try peer.handshake()
            try require(try peer.staysQuiet(forSeconds: 0.2), "oversized sample sent")
        }
        let connection = try ClientConnection(socketPath: peer.socketPath, clientName: "tests")
        #expect(throws: ClientError.self) { try connection.uploadSample(name: "big", format: monoS16, pcm: pattern((1 << 20) + 2)) }
        try peer.finish()
        connection.close()
    }

    @Test func headPoseIsOneWayAndRecenterIsARequest() throws {
        let pose = HeadPose(timestampNanoseconds: 0, orientation: Quaternion(w: 0.9238795, x: 0, y: 0.38268343, z: 0))
        let received = Recorder<Message>()
        let peer = try ScriptedPeer { peer in
            try peer.handshake()
            let (message, poseID) = try peer.expect(.headPose)
            try require(poseID == 0, "HEAD_POSE carries request id 0")
            received.record(message)
            let (_, recenterID) = try peer.expect(.headRecenter)
            peer.send(.ok, requestID: recenterID)
            _ = try? peer.receive()
        }
        let connection = try ClientConnection(socketPath: peer.socketPath, clientName: "tests")
        try connection.sendHeadPose(pose)
        try connection.recenterHead()
        connection.close()
        try peer.finish()
        #expect(received.all == [.headPose(pose)])
    }
}
