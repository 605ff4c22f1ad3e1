import Foundation
import NIOCore
import Testing
import SceneSoundProtocol
@testable import SceneSoundServer
import SceneSoundTestSupport

/// The protocol's behaviour (SPEC.md), in process: sessions on `EmbeddedChannel`s with the real
/// framing and state machine over a real engine that the test renders itself. Every reply is
/// there when the call returns; time moves only when the test advances the loop's clock.
@Suite struct SessionProtocolTests {
    static let mono = AudioFormat(sampleFormat: .s16le, rateHz: 48000, channels: 1)

    // MARK: Handshake

    @Test func helloIsAnsweredWithTheServersFiguresAndOnlyOnce() throws {
        let server = InProcessServer { $0.maximumStreamsPerClient = 5; $0.maximumFrameBytes = 100_000; $0.serverName = "in-process 1" }
        let client = try server.connect()
        let welcome = try #require(client.welcome)
        #expect(welcome.version == ProtocolVersion.supported.upperBound)
        #expect(welcome.sampleRateHz == 48000 && welcome.blockFrames == 256)
        #expect(welcome.maxFrameBytes == 100_000 && welcome.maxStreams == 5)
        #expect(welcome.serverName == "in-process 1")
        // A second HELLO: an error with its id; the connection stays.
        #expect(errorCode(try client.request(.hello(Hello(clientPID: 1, clientName: "again")))) == .unexpectedMessage)
        #expect(client.isOpen)
        guard case .sceneListReply = try client.request(.sceneList) else { throw TestFailure("no SCENE_LIST reply") }
    }

    @Test func beforeHelloOnlyHelloIsAcceptedAndAnythingElseCloses() throws {
        let server = InProcessServer()
        let early = try server.connect(handshake: false)
        try early.send(.statusRequest, requestID: 1)
        #expect(early.takeError()?.code == .unexpectedMessage)
        #expect(!early.isOpen)

        let future = try server.connect(handshake: false)
        try future.send(.hello(Hello(minimumVersion: 5, maximumVersion: 9, clientPID: 0, clientName: "future")), requestID: 1)
        #expect(future.takeError()?.code == .unsupportedVersion)
        #expect(!future.isOpen)

        let http = try server.connect(handshake: false)
        try http.sendRaw(Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        #expect(http.takeError()?.code == .frameTooLarge)
        #expect(!http.isOpen)
        #expect(try server.health().rejectedFrames == 3)
    }

    @Test func framesAreWholeHoweverTheBytesArrive() throws {
        let server = InProcessServer()
        let client = try server.connect(handshake: false)
        // HELLO and a request, one byte per read.
        let bytes = FrameEncoder.frame(.hello(Hello(clientPID: 1, clientName: "trickle")), requestID: 1)
            + FrameEncoder.frame(.sceneList, requestID: 2)
        for byte in bytes { try client.sendRaw([byte]) }
        let replies = try client.takeAll()
        #expect(replies.map(\.requestID) == [1, 2])
        guard case .welcome(let welcome) = replies.first?.message, case .sceneListReply = replies.last?.message else {
            throw TestFailure("expected WELCOME and SCENE_LIST_REPLY, got \(replies.map(\.message.type))")
        }
        client.welcome = welcome
        // The client closes its side in the middle of a frame: nothing is answered, the
        // connection ends and its streams with it.
        _ = try client.openStream(Self.mono)
        try client.sendRaw(Array(FrameEncoder.frame(.sceneList, requestID: 3).prefix(7)))
        client.channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        #expect(try client.takeAll().isEmpty)
        #expect(!client.isOpen)
        server.render(blocks: 2)
        #expect(server.core.engineStreams.count == 0)
    }

    /// Version 2: a 4-channel stream whose channel map says 3.1 (not the standard quad) plays as
    /// three virtual speakers (the LFE is no voice), counted in status; a version 1 client still
    /// gets one or two channels only.
    @Test func surroundStreamsAreVirtualSpeakersFromVersion2() throws {
        let server = InProcessServer()
        let client = try server.connect()
        #expect(client.welcome?.version == 2)
        let surround = AudioFormat(sampleFormat: .f32le, rateHz: 48000, channels: 4)
        let open = StreamOpen(kind: .playback, format: surround, sceneID: "",
                              channelMap: [.frontLeft, .frontRight, .frontCenter, .lowFrequency])
        guard case .streamOpened(let opened) = try client.request(.streamOpen(open)) else {
            throw TestFailure("no STREAM_OPENED")
        }
        try client.write(stream: opened.streamID, bytes: 4 * 4 * 1024)
        server.render(blocks: 2)
        let status = try server.status()
        #expect(status.render.hrtfVoices == 3)
        #expect(status.streams.map(\.format) == ["f32le 4ch 48000Hz"])
        let twice = StreamOpen(kind: .playback, format: surround, sceneID: "",
                               channelMap: [.frontLeft, .frontLeft, .frontCenter, .lowFrequency])
        #expect(errorCode(try client.request(.streamOpen(twice))) == .badFormat)

        let old = try server.connect(handshake: false)
        try old.send(.hello(Hello(minimumVersion: 1, maximumVersion: 1, clientPID: 1, clientName: "v1")), requestID: 1)
        guard case .welcome(let welcome) = try old.takeAll().first?.message, welcome.version == 1 else {
            throw TestFailure("no version 1 WELCOME")
        }
        #expect(errorCode(try old.request(.streamOpen(StreamOpen(kind: .playback, format: surround, sceneID: "")))) == .badFormat)
        #expect(try old.request(.streamOpen(StreamOpen(kind: .playback, format: Self.mono, sceneID: ""))).type == .streamOpened)
    }

    // MARK: Each request's reply

    @Test func everyRequestGetsItsReply() throws {
        let server = InProcessServer()
        let client = try server.connect()
        let stream = try client.openStream(Self.mono)
        #expect(try client.request(.streamSetVolume(StreamSetVolume(streamID: stream, volumeDecibels: -6))) == .ok)
        #expect(try client.request(.streamSetScene(StreamSetScene(streamID: stream, sceneID: "radio"))) == .ok)
        #expect(errorCode(try client.request(.streamSetVolume(StreamSetVolume(streamID: 77, volumeDecibels: 0)))) == .unknownStream)

        let place = ScenePosition(azimuthDegrees: -40, elevationDegrees: 10, distanceMetres: 2)
        #expect(try client.request(.scenePlace(ScenePlace(sceneID: "radio", position: place))) == .ok)
        #expect(errorCode(try client.request(.scenePlace(ScenePlace(sceneID: "x11:0x400001", position: place)))) == .notPermitted)
        #expect(try client.request(.sceneBindWindow(SceneBindWindow(sceneID: "editor", windowID: 0x400001))) == .ok)
        #expect(errorCode(try client.request(.sceneBindWindow(SceneBindWindow(sceneID: "x11:0x400001", windowID: 1)))) == .notPermitted)
        guard case .sceneListReply(let list) = try client.request(.sceneList) else { throw TestFailure("no SCENE_LIST reply") }
        let radio = try #require(list.entries.first { $0.sceneID == "radio" })
        #expect(radio.anchor == .position && abs(radio.position.azimuthDegrees + 40) < 1e-3 && abs(radio.position.distanceMetres - 2) < 1e-3)
        #expect(list.entries.first { $0.sceneID == "editor" }?.windowID == 0x400001)
        #expect(try client.request(.sceneUnbind(SceneUnbind(sceneID: "editor"))) == .ok)
        #expect(errorCode(try client.request(.sceneUnbind(SceneUnbind(sceneID: "editor")))) == .unknownScene)
        #expect(errorCode(try client.request(.sceneUnbind(SceneUnbind(sceneID: "x11:0x400001")))) == .notPermitted)

        // HEAD_POSE is one-way: no reply, the pose is in status; recenter is a request.
        let q = yawQuaternion(30)
        try client.send(.headPose(HeadPose(timestampNanoseconds: 0, orientation: q)))
        #expect(try client.takeAll().isEmpty)
        let head = try server.status().head
        #expect(abs(head.yawDegrees - 30) < 1e-3 && head.posesReceived == 1)
        #expect(try client.request(.headRecenter) == .ok)
        #expect(abs(try server.status().head.yawDegrees) < 1e-6)

        guard case .statusReply(let status) = try client.request(.statusRequest) else { throw TestFailure("no STATUS_REPLY") }
        let streams = try StatusSchema.decode(status.json).streams
        #expect(streams.count == 1 && streams.first?.scene == "radio" && streams.first?.volumeDecibels == -6)

        #expect(try client.request(.streamClose(StreamReference(streamID: stream))) == .ok)
        #expect(errorCode(try client.request(.streamClose(StreamReference(streamID: stream)))) == .unknownStream)
        // A server-to-client message from a client: an error with its id, the connection stays.
        #expect(errorCode(try client.request(.ok)) == .unexpectedMessage)
        #expect(client.isOpen)
    }

    // MARK: Malformed frames close only their own connection

    @Test func malformedFramesCloseOnlyThatClientWithAnError() throws {
        let server = InProcessServer()
        let bystander = try server.connect(name: "bystander")
        let stream = try bystander.openStream(Self.mono)

        let oversized = try server.connect()
        try oversized.sendRaw([0xff, 0xff, 0xff, 0x7f, 0x03, 0x05, 0, 0, 1, 0, 0, 0])
        #expect(oversized.takeError()?.code == .frameTooLarge)
        #expect(!oversized.isOpen)
        // What follows on a failed connection is not read as frames.
        try? oversized.send(.statusRequest, requestID: 9)
        #expect(try oversized.takeAll().isEmpty)

        let flagged = try server.connect()
        var frame = FrameEncoder.frame(.statusRequest, requestID: 7)
        frame[6] = 1
        try flagged.sendRaw(frame)
        #expect(flagged.takeError()?.code == .malformedFrame)
        #expect(!flagged.isOpen)

        // Errors that leave the connection open.
        let client = try server.connect()
        try client.sendRaw([0, 0, 0, 0, 0x77, 0x07, 0, 0, 9, 0, 0, 0])
        #expect(client.takeError()?.code == .unknownMessageType)
        var truncated = FrameEncoder.frame(.streamOpen(StreamOpen(kind: .playback, format: Self.mono, sceneID: "")), requestID: 3)
        truncated.removeLast(3)
        truncated[0] -= 3
        try client.sendRaw(truncated)
        #expect(client.takeError().map { [$0.code.name, "\($0.requestID)"] } == ["malformed_payload", "3"])
        let badRate = AudioFormat(sampleFormat: .s16le, rateHz: 4000, channels: 1)
        #expect(errorCode(try client.request(.streamOpen(StreamOpen(kind: .playback, format: badRate, sceneID: ""))) ) == .badFormat)
        let nineChannels = AudioFormat(sampleFormat: .f32le, rateHz: 48000, channels: 9)
        #expect(errorCode(try client.request(.streamOpen(StreamOpen(kind: .playback, format: nineChannels, sceneID: "")))) == .badFormat)
        try client.send(.streamData(StreamData(streamID: 999, pcm: [0, 0])))
        #expect(client.takeError().map { [$0.code.name, "\($0.requestID)"] } == ["unknown_stream", "0"])
        // Half a frame of PCM: that stream fails, the connection lives.
        let odd = try client.openStream(AudioFormat(sampleFormat: .s16le, rateHz: 48000, channels: 2))
        try client.write(stream: odd, bytes: 3)
        let failed = client.take { if case .streamError = $0.message { true } else { false } }
        guard case .streamError(let streamError)? = failed else { throw TestFailure("no STREAM_ERROR") }
        #expect(streamError.streamID == odd && streamError.code == .badFormat)
        #expect(errorCode(try client.request(.streamDrain(StreamReference(streamID: odd)))) == .badFormat)
        #expect(try client.request(.streamClose(StreamReference(streamID: odd))) == .ok)
        #expect(client.isOpen)

        // More data than credit: closed.
        let greedy = try client.openStream(Self.mono)
        try client.write(stream: greedy, bytes: client.credits[greedy]! + 2)
        #expect(client.takeError()?.code == .creditExceeded)
        #expect(!client.isOpen)

        // The bystander never noticed: its stream plays and its requests are answered.
        #expect(bystander.isOpen)
        try bystander.write(stream: stream, bytes: 960)
        #expect(try bystander.request(.streamSetVolume(StreamSetVolume(streamID: stream, volumeDecibels: -3))) == .ok)
        let health = try server.health()
        // Frames the server could not take are counted: oversized, flagged, unknown type, the
        // truncated payload, the two formats out of range, the data over credit. Requests
        // refused for their content (unknown stream, a failed stream's drain) are not.
        #expect(health.rejectedFrames == 7, "\(health)")
        #expect(try server.status().clients.count == 1)
    }

    // MARK: Limits

    @Test func onlyTheServersUserIsAdmittedWhileThereIsRoom() {
        func verdict(uid: UInt32, allowRoot: Bool = false, others: Int = 0) -> String {
            switch PeerAdmissionHandler.verdict(peer: PeerCredentials(pid: 42, uid: uid, gid: 0), serverUID: 1000,
                                                allowRoot: allowRoot, otherClients: others, maximumClients: 2) {
            case .admitted(let pid): "admitted \(pid)"
            case .refused(let error): error.code.name
            }
        }
        #expect(verdict(uid: 1000) == "admitted 42")
        #expect(verdict(uid: 1001) == "not_permitted")
        #expect(verdict(uid: 0) == "not_permitted")
        #expect(verdict(uid: 0, allowRoot: true) == "admitted 42")
        #expect(verdict(uid: 1000, others: 1) == "admitted 42")
        #expect(verdict(uid: 1000, others: 2) == "limit_exceeded")
    }

    @Test func aRefusedPeerHearsWhyAndIsClosed() throws {
        let server = InProcessServer()
        let client = try server.connect(handshake: false)
        client.channel.pipeline.fireUserInboundEventTriggered(
            PeerAdmission.refused(ProtocolError(.limitExceeded, "the server takes 1 clients at most")))
        #expect(client.takeError().map { [$0.code.name, "\($0.requestID)"] } == ["limit_exceeded", "0"])
        #expect(!client.isOpen)
        #expect(try server.status().clients.count == 0)
    }

    @Test func streamLimitsPerClientAndForTheServer() throws {
        let server = InProcessServer(maximumEngineStreams: 3) { $0.maximumStreamsPerClient = 2 }
        let first = try server.connect()
        _ = try first.openStream(Self.mono)
        let kept = try first.openStream(Self.mono)
        #expect(errorCode(try first.request(.streamOpen(StreamOpen(kind: .playback, format: Self.mono, sceneID: "")))) == .limitExceeded)
        let second = try server.connect()
        _ = try second.openStream(Self.mono)
        // Three in the engine: the server's limit, whoever asks.
        #expect(errorCode(try second.request(.streamOpen(StreamOpen(kind: .playback, format: Self.mono, sceneID: "")))) == .limitExceeded)
        // A closed stream counts until the render thread has let go of it.
        #expect(try first.request(.streamClose(StreamReference(streamID: kept))) == .ok)
        #expect(errorCode(try second.request(.streamOpen(StreamOpen(kind: .playback, format: Self.mono, sceneID: "")))) == .limitExceeded)
        server.render(blocks: 2)
        _ = try second.openStream(Self.mono)
    }

    @Test func aFloodOfRequestsIsRateLimitedAndEveryRequestGetsOneReply() throws {
        let server = InProcessServer { $0.maximumMessagesPerSecond = 100 }
        let flooder = try server.connect(name: "flooder")  // HELLO took one token
        var bytes: [UInt8] = []
        for id in 1...600 { bytes += FrameEncoder.frame(.sceneList, requestID: UInt32(1000 + id)) }
        try flooder.sendRaw(bytes)
        let replies = try flooder.takeAll()
        #expect(Set(replies.map(\.requestID)) == Set((1...600).map { UInt32(1000 + $0) }), "one reply for each request")
        let limited = replies.filter { errorCode($0.message) == .limitExceeded }.count
        #expect(limited == 501, "600 at once against a bucket of 100 with one token spent on HELLO")
        #expect(try server.health().rateLimitedMessages == 501)
        // Others are not limited by it.
        let other = try server.connect()
        guard case .sceneListReply = try other.request(.sceneList) else { throw TestFailure("the other client was limited") }
        // A second later the bucket is full again.
        #expect(errorCode(try flooder.request(.sceneList)) == .limitExceeded)
        server.loop.advanceTime(by: .seconds(1))
        guard case .sceneListReply = try flooder.request(.sceneList) else { throw TestFailure("still limited after a second") }
    }

    @Test func aFloodOfOneWayMessagesIsDroppedWithOneErrorASecondAndAudioIsExempt() throws {
        let server = InProcessServer { $0.maximumMessagesPerSecond = 100 }
        let client = try server.connect()  // HELLO: 1 token
        let stream = try client.openStream(Self.mono)  // 2
        let pose = Message.headPose(HeadPose(timestampNanoseconds: 0, orientation: yawQuaternion(10)))
        try client.sendRaw((0..<300).flatMap { _ in FrameEncoder.frame(pose, requestID: 0) })
        let errors = try client.takeAll().filter { errorCode($0.message) == .limitExceeded }
        #expect(errors.count == 1 && errors.first?.requestID == 0)
        #expect(try server.status().head.posesReceived == 98)
        // Audio is paced by credit, not by the message rate.
        for _ in 0..<10 { try client.write(stream: stream, bytes: 2) }
        #expect(try client.takeAll().isEmpty)
        #expect(try server.status().streams.first?.bufferedSeconds ?? 0 > 0)
    }

    // MARK: Credit, drains, close

    @Test func creditIsWhatTheRingHoldsAndComesBackAsTheEnginePlays() throws {
        let server = InProcessServer { $0.streamBufferSeconds = 0.1 }
        let client = try server.connect()
        let stream = try client.openStream(Self.mono)
        let initial = try #require(client.credits[stream])
        #expect(initial == 4800 * 2, "0.1 s of mono s16 at 48 kHz")
        try client.write(stream: stream, bytes: initial)
        server.render(blocks: 0)  // a tick with nothing played: nothing to grant
        #expect(try client.takeAll().isEmpty)
        server.render(blocks: 4)
        let granted = try client.takeAll().compactMap { frame -> Int? in
            if case .creditGranted(let grant) = frame.message, grant.streamID == stream { Int(grant.bytes) } else { nil }
        }.reduce(0, +)
        #expect(granted == 4 * 256 * 2, "credit for exactly the frames the engine took")
        #expect(client.credits[stream] == granted)
    }

    @Test func aDrainIsAnsweredOnceTheOutputHasDeliveredItsLastFrame() throws {
        let server = InProcessServer()
        let client = try server.connect()
        let stream = try client.openStream(Self.mono)
        try client.write(stream: stream, bytes: 1000 * 2)
        let drain = client.takeRequestID()
        try client.send(.streamDrain(StreamReference(streamID: stream)), requestID: drain)
        #expect(try client.takeAll().isEmpty, "not answered before the audio has played")
        // Rendered but not yet delivered: still waiting.
        server.render(blocks: 8, delivered: false)
        #expect(!(try client.takeAll().contains { $0.requestID == drain }))
        server.render(blocks: 0, delivered: true)
        let frames = try client.takeAll()
        let ended = frames.firstIndex { if case .streamEnded(let e) = $0.message { e.streamID == stream && e.reason == .drained } else { false } }
        let ok = frames.firstIndex { $0.requestID == drain && $0.message == .ok }
        #expect(ended != nil && ok != nil && ended! < ok!, "STREAM_ENDED, then the drain's OK: \(frames.map(\.message.type))")
        // The stream plays on after a drain: more data, another drain.
        try client.write(stream: stream, bytes: 200)
        let again = client.takeRequestID()
        try client.send(.streamDrain(StreamReference(streamID: stream)), requestID: again)
        server.render(blocks: 3)
        #expect(try client.takeAll().contains { $0.requestID == again && $0.message == .ok })
    }

    @Test func aLoopReplaysWhatCameBeforeItsFirstDrainUntilClosed() throws {
        let server = InProcessServer()
        let client = try server.connect()
        let stream = try client.openStream(Self.mono, loop: true)
        try client.write(stream: stream, bytes: 100 * 2)
        let drain = client.takeRequestID()
        try client.send(.streamDrain(StreamReference(streamID: stream)), requestID: drain)
        server.render(blocks: 2)
        #expect(try client.takeAll().contains { $0.requestID == drain && $0.message == .ok })
        // Forty blocks later (10 240 frames of a 100-frame loop) it still plays, topped up from
        // its copy; it takes no more data and gets no more credit.
        server.render(blocks: 40)
        #expect(!(try client.takeAll().contains { if case .creditGranted = $0.message { true } else { false } }))
        let streams = try server.status().streams
        #expect(streams.first?.state == "playing" && streams.first?.loop == true)
        #expect(try client.request(.streamClose(StreamReference(streamID: stream))) == .ok)
        server.render(blocks: 2)
        #expect(server.core.engineStreams.count == 0)
    }

    @Test func closingAStreamAnswersItsDrainAndFreesItInTheEngine() throws {
        let server = InProcessServer()
        let client = try server.connect()
        let stream = try client.openStream(Self.mono)
        try client.write(stream: stream, bytes: 9600)
        let drain = client.takeRequestID()
        try client.send(.streamDrain(StreamReference(streamID: stream)), requestID: drain)
        let close = client.takeRequestID()
        try client.send(.streamClose(StreamReference(streamID: stream)), requestID: close)
        let frames = try client.takeAll()
        #expect(frames.map(\.requestID) == [drain, close])
        #expect(errorCode(frames.first?.message) == .unknownStream && frames.last?.message == .ok)
        #expect(server.core.engineStreams.count == 1, "counted until the render thread lets go")
        server.render(blocks: 2)
        #expect(server.core.engineStreams.count == 0)
    }

    @Test func aClientThatGoesAwayLeavesNothingBehind() throws {
        let server = InProcessServer()
        let client = try server.connect()
        for _ in 0..<3 { _ = try client.openStream(Self.mono) }
        server.render()
        #expect(server.core.engineStreams.count == 3)
        try client.channel.close().wait()
        server.render(blocks: 2)
        #expect(server.core.engineStreams.count == 0, "released by the render thread")
        #expect(try server.status().clients.count == 0)
    }

    @Test func aClientThatStopsReadingIsDroppedAfterTheGracePeriod() throws {
        let server = InProcessServer { $0.unreadGraceSeconds = 5 }
        let deaf = try server.connect(name: "deaf")
        _ = try deaf.openStream(Self.mono)
        let other = try server.connect(name: "other")
        deaf.channel.isWritable = false  // its socket buffer is full: it reads nothing
        try deaf.send(.statusRequest, requestID: 50)
        server.loop.advanceTime(by: .seconds(4))
        server.render()
        #expect(deaf.isOpen, "within the grace period")
        server.loop.advanceTime(by: .seconds(2))
        server.render()
        #expect(!deaf.isOpen)
        #expect(try server.health().stalledClientsDropped == 1)
        server.render(blocks: 2)
        #expect(server.core.engineStreams.count == 0, "its stream was freed")
        guard case .statusReply = try other.request(.statusRequest) else { throw TestFailure("the other client was dropped") }
    }

    @Test func aClientThatReadsAgainIsKept() throws {
        let server = InProcessServer { $0.unreadGraceSeconds = 5 }
        let slow = try server.connect()
        slow.channel.isWritable = false
        try slow.send(.statusRequest, requestID: 50)
        server.loop.advanceTime(by: .seconds(3))
        slow.channel.isWritable = true
        slow.channel.pipeline.fireChannelWritabilityChanged()
        server.loop.advanceTime(by: .seconds(3))
        server.render()
        #expect(slow.isOpen)
    }
}
