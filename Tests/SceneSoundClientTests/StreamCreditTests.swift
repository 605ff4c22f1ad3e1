import Foundation
import SceneSoundClient
import SceneSoundProtocol
import SceneSoundTestSupport
import Testing

/// Flow control by credit (SPEC.md section 8) as the client applies it.
@Suite(.serialized) struct StreamCreditTests {
    /// Opens stream 7 with `credit` bytes after the handshake.
    static func openStream(_ peer: PeerConnection, credit: UInt32, maxFrameBytes: UInt32 = 262_144) throws -> StreamOpen {
        try peer.handshake(maxFrameBytes: maxFrameBytes)
        let (message, requestID) = try peer.expect(.streamOpen)
        guard case .streamOpen(let open) = message else { throw ScriptedPeer.ScriptFailure(description: "not an open") }
        peer.send(.streamOpened(StreamOpened(streamID: 7, creditBytes: credit)), requestID: requestID)
        return open
    }

    /// Reads STREAM_DATA until `total` bytes have arrived, failing if the credit is exceeded.
    static func receiveData(_ peer: PeerConnection, until total: Int, into received: inout [UInt8], credit: inout Int,
                            frameCheck: (Frame) throws -> Void = { _ in }) throws {
        while received.count < total {
            let frame = try peer.receiveFrame()
            try frameCheck(frame)
            guard case .streamData(let data) = try Message.decode(frame: frame), data.streamID == 7 else {
                throw ScriptedPeer.ScriptFailure(description: "expected STREAM_DATA for stream 7")
            }
            try require(data.pcm.count <= credit, "sent \(data.pcm.count) bytes with \(credit) of credit")
            credit -= data.pcm.count
            received += data.pcm
        }
    }

    @Test func writerBlocksOnCreditAndResumesWhenGranted() throws {
        let audio = pattern(100)  // 50 mono s16 frames
        let received = Recorder<[UInt8]>()
        let phases = Recorder<String>()
        let peer = try ScriptedPeer { peer in
            _ = try Self.openStream(peer, credit: 32)
            var bytes: [UInt8] = [], credit = 32
            try Self.receiveData(peer, until: 32, into: &bytes, credit: &credit)
            try require(try peer.staysQuiet(forSeconds: 0.3), "the client sent beyond its credit")
            phases.record("held back at 32")
            credit += 40
            peer.send(.creditGranted(CreditGranted(streamID: 7, bytes: 40)))
            try Self.receiveData(peer, until: 72, into: &bytes, credit: &credit)
            try require(try peer.staysQuiet(forSeconds: 0.2), "the client sent beyond its credit")
            phases.record("held back at 72")
            credit += 200
            peer.send(.creditGranted(CreditGranted(streamID: 7, bytes: 200)))
            try Self.receiveData(peer, until: 100, into: &bytes, credit: &credit)
            received.record(bytes)
            let (_, drainID) = try peer.expect(.streamDrain)
            peer.send(.streamEnded(StreamEnded(streamID: 7, reason: .drained)))
            peer.send(.ok, requestID: drainID)
            _ = try? peer.receive()
        }
        let connection = try ClientConnection(socketPath: peer.socketPath, clientName: "tests")
        let stream = try connection.openStream(playbackOptions(monoS16))
        #expect(stream.id == 7)
        let write = BackgroundCall { () throws(ClientError) in try stream.write(audio) }
        #expect(phases.wait(for: 1))
        #expect(write.result(waitingSeconds: 0.05) == nil, "the writer must wait for credit")
        #expect(phases.wait(for: 2))
        let written = try #require(write.result(waitingSeconds: 5), "the writer was not woken by the grant")
        #expect(throws: Never.self) { try written.get() }
        try stream.drain(timeoutSeconds: 5)
        #expect(stream.bytesSent == 100)
        #expect(stream.creditBytes == 272 - 100)
        connection.close()
        try peer.finish()
        #expect(received.all == [audio])
    }

    @Test func framesStayUnderTheMaximumFrameSizeInWholeAudioFrames() throws {
        let format = AudioFormat(sampleFormat: .s32le, rateHz: 48000, channels: 2)  // 8 bytes per frame
        let audio = pattern(40_000)
        let maxFrameBytes = 4100  // room for 4084 PCM bytes: 4080 in whole frames
        let sizes = Recorder<Int>()
        let received = Recorder<[UInt8]>()
        let peer = try ScriptedPeer { peer in
            _ = try Self.openStream(peer, credit: 1_000_000, maxFrameBytes: UInt32(maxFrameBytes))
            var bytes: [UInt8] = [], credit = 1_000_000
            try Self.receiveData(peer, until: audio.count, into: &bytes, credit: &credit) { frame in
                try require(FrameHeader.byteCount + frame.payload.count <= maxFrameBytes, "frame over the maximum")
                try require((frame.payload.count - 4) % 8 == 0, "not whole audio frames")
                sizes.record(frame.payload.count - 4)
            }
            received.record(bytes)
            _ = try? peer.receive()
        }
        let connection = try ClientConnection(socketPath: peer.socketPath, clientName: "tests")
        let stream = try connection.openStream(playbackOptions(format))
        #expect(stream.maxPCMBytesPerFrame == 4080)
        try stream.write(audio, timeoutSeconds: 5)
        #expect(received.wait(for: 1))
        connection.close()
        try peer.finish()
        #expect(received.all == [audio])
        #expect(sizes.all.max() == 4080)
    }

    @Test func partialAudioFramesAreRefused() throws {
        let peer = try ScriptedPeer { peer in
            _ = try Self.openStream(peer, credit: 64)
            try require(try peer.staysQuiet(forSeconds: 0.2), "partial frame sent")
        }
        let connection = try ClientConnection(socketPath: peer.socketPath, clientName: "tests")
        let stream = try connection.openStream(playbackOptions(stereoS16))
        #expect(throws: ClientError.invalidArgument("6 bytes are not whole audio frames of 4 bytes")) { try stream.write(pattern(6)) }
        try peer.finish()
        connection.close()
    }

    @Test func streamErrorWakesTheBlockedWriter() throws {
        let peer = try ScriptedPeer { peer in
            _ = try Self.openStream(peer, credit: 8)
            var bytes: [UInt8] = [], credit = 8
            try Self.receiveData(peer, until: 8, into: &bytes, credit: &credit)
            peer.send(.streamError(StreamError(streamID: 7, code: .internalError, message: "resampler failed")))
            let (_, closeID) = try peer.expect(.streamClose)
            peer.send(.ok, requestID: closeID)
            _ = try? peer.receive()
        }
        let connection = try ClientConnection(socketPath: peer.socketPath, clientName: "tests")
        let events = Recorder<ClientEvent>()
        connection.setEventHandler { events.record($0) }
        let stream = try connection.openStream(playbackOptions(monoS16))
        let failure = ClientError.streamFailed(streamID: 7, code: .internalError, message: "resampler failed")
        #expect(throws: failure) { try stream.write(pattern(64), timeoutSeconds: 5) }
        #expect(stream.bytesSent == 8)
        #expect(throws: failure) { try stream.write(pattern(2)) }  // defunct from now on
        // The event handler runs on the reader thread, which may still be on its way there.
        #expect(events.wait(for: 1))
        #expect(events.all == [.streamError(StreamError(streamID: 7, code: .internalError, message: "resampler failed"))])
        try stream.close()
        connection.close()
        try peer.finish()
    }

    @Test func closeWakesTheBlockedWriterAndLaterEventsAreIgnored() throws {
        let peer = try ScriptedPeer { peer in
            _ = try Self.openStream(peer, credit: 2)
            var bytes: [UInt8] = [], credit = 2
            try Self.receiveData(peer, until: 2, into: &bytes, credit: &credit)
            let (_, closeID) = try peer.expect(.streamClose)
            peer.send(.creditGranted(CreditGranted(streamID: 7, bytes: 100)))  // already on its way
            peer.send(.streamEnded(StreamEnded(streamID: 7, reason: .removedByServer)))
            peer.send(.ok, requestID: closeID)
            // Sent last, so the client has handled the two above once this one is delivered.
            peer.send(.playbackEnded(PlaybackEnded(playID: 99, reason: .completed)))
            _ = try? peer.receive()
        }
        let connection = try ClientConnection(socketPath: peer.socketPath, clientName: "tests")
        let events = Recorder<ClientEvent>()
        connection.setEventHandler { events.record($0) }
        let stream = try connection.openStream(playbackOptions(monoS16))
        let write = BackgroundCall { () throws(ClientError) in try stream.write(pattern(20)) }
        // The writer has spent its 2 bytes of credit and waits for more.
        #expect(waitUntil(timeoutSeconds: 5) { stream.bytesSent == 2 })
        try stream.close()
        guard case .failure(.streamClosed(7))? = write.result(waitingSeconds: 5) else { Issue.record("writer not woken"); return }
        try stream.close()  // again: nothing to do
        // The late grant and end were ignored: the marker sent after them is the only event.
        #expect(events.wait(for: 1))
        #expect(events.all == [.playbackEnded(PlaybackEnded(playID: 99, reason: .completed))])
        connection.close()
        try peer.finish()
    }

    @Test func disconnectWakesTheBlockedWriter() throws {
        let peer = try ScriptedPeer { peer in
            _ = try Self.openStream(peer, credit: 2)
            var bytes: [UInt8] = [], credit = 2
            try Self.receiveData(peer, until: 2, into: &bytes, credit: &credit)
            peer.send(.error(ErrorReply(code: .internalError, message: "output failed")))
            peer.close()
        }
        let connection = try ClientConnection(socketPath: peer.socketPath, clientName: "tests")
        let stream = try connection.openStream(playbackOptions(monoS16))
        #expect(throws: ClientError.disconnected(reason: "the server closed the connection: output failed (internal)")) {
            try stream.write(pattern(20), timeoutSeconds: 5)
        }
        try peer.finish()
    }

    @Test func drainWaitsForItsLateReplyWhileOtherRequestsAreAnswered() throws {
        let drainSent = Recorder<UInt32>(), audioPlayed = Recorder<Void>()
        let peer = try ScriptedPeer { peer in
            _ = try Self.openStream(peer, credit: 64)
            let (_, drainID) = try peer.expect(.streamDrain)
            drainSent.record(drainID)
            let (volume, volumeID) = try peer.expect(.streamSetVolume)
            try require(volume == .streamSetVolume(StreamSetVolume(streamID: 7, volumeDecibels: -6)), "volume request")
            peer.send(.ok, requestID: volumeID)
            // "The audio plays" until the test has seen the drain still waiting.
            try require(audioPlayed.wait(for: 1), "the test never let the audio finish")
            peer.send(.streamEnded(StreamEnded(streamID: 7, reason: .drained)))
            peer.send(.ok, requestID: drainID)
            _ = try? peer.receive()
        }
        let connection = try ClientConnection(socketPath: peer.socketPath, clientName: "tests")
        let events = Recorder<ClientEvent>()
        connection.setEventHandler { events.record($0) }
        let stream = try connection.openStream(playbackOptions(monoS16))
        let drain = BackgroundCall { () throws(ClientError) in try stream.drain() }
        #expect(drainSent.wait(for: 1))  // the drain goes out first
        try stream.setVolume(decibels: -6)
        #expect(drain.result(waitingSeconds: 0.05) == nil, "drain answered before the audio played")
        audioPlayed.record(())
        let drained = try #require(drain.result(waitingSeconds: 5), "the drain's late reply was not delivered")
        #expect(throws: Never.self) { try drained.get() }
        #expect(events.wait(for: 1))  // delivered on the reader thread
        #expect(events.all == [.streamEnded(StreamEnded(streamID: 7, reason: .drained))])
        #expect(stream.waitUntilStopped(timeoutSeconds: 0.05) == nil, "a drained stream stays usable")
        connection.close()
        try peer.finish()
    }

    @Test func loopingStreamTakesNoDataAfterItsFirstDrain() throws {
        let peer = try ScriptedPeer { peer in
            let open = try Self.openStream(peer, credit: 64)
            try require(open.loop, "loop flag sent")
            var bytes: [UInt8] = [], credit = 64
            try Self.receiveData(peer, until: 8, into: &bytes, credit: &credit)
            let (_, drainID) = try peer.expect(.streamDrain)
            peer.send(.ok, requestID: drainID)
            _ = try? peer.receive()
        }
        let connection = try ClientConnection(socketPath: peer.socketPath, clientName: "tests")
        let stream = try connection.openStream(playbackOptions(monoS16, loop: true))
        try stream.write(pattern(8))
        try stream.drain(timeoutSeconds: 5)
        #expect(throws: ClientError.self) { try stream.write(pattern(8)) }
        #expect(stream.waitUntilStopped(timeoutSeconds: 0.1) == nil, "the loop plays on")
        connection.close()
        #expect(stream.waitUntilStopped(timeoutSeconds: 1) != nil)
        try peer.finish()
    }
}
