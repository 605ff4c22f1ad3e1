import SceneSoundProtocol
import Testing

/// The framing layer: any chunking of the byte stream gives the same frames; limits hold.
@Suite struct FrameDecoderTests {
    /// Every golden frame back to back, as one connection's byte stream.
    static let stream: [UInt8] = validVectors.flatMap(\.frameBytes)

    static func frames(from chunks: [ArraySlice<UInt8>], maxFrameBytes: Int = ProtocolLimits.defaultMaxFrameBytes) throws -> [Frame] {
        var decoder = FrameDecoder(maxFrameBytes: maxFrameBytes)
        var frames: [Frame] = []
        for chunk in chunks {
            decoder.append(contentsOf: chunk)
            while let frame = try decoder.nextFrame() { frames.append(frame) }
        }
        try decoder.finish()
        return frames
    }

    static func messages(_ frames: [Frame]) throws -> [Message] {
        // Each in the version of its vector (the frames are the vectors', in order).
        try zip(frames, validVectors).map { try Message.decode(frame: $0, version: $1.version) }
    }

    @Test func manyFramesInOneChunk() throws {
        let frames = try Self.frames(from: [Self.stream[...]])
        #expect(try Self.messages(frames) == validVectors.map(\.message))
        #expect(frames.map(\.requestID) == validVectors.map(\.requestID))
    }

    @Test func splitAtEveryByteBoundary() throws {
        let expected = validVectors.map(\.message)
        for split in 0...Self.stream.count {
            let frames = try Self.frames(from: [Self.stream[..<split], Self.stream[split...]])
            #expect(try Self.messages(frames) == expected, "split at \(split)")
        }
    }

    @Test func oneByteAtATime() throws {
        let chunks = Self.stream.indices.map { Self.stream[$0..<$0 + 1] }
        #expect(try Self.messages(try Self.frames(from: chunks)) == validVectors.map(\.message))
    }

    @Test func unsafeBufferInput() throws {
        var decoder = FrameDecoder()
        Self.stream.withUnsafeBytes { decoder.append($0) }
        var count = 0
        while try decoder.nextFrame() != nil { count += 1 }
        #expect(count == validVectors.count)
        #expect(decoder.bufferedByteCount == 0)
    }

    @Test func partialFrameIsNeedMoreBytesUntilTheConnectionEnds() throws {
        let frame = FrameEncoder.frame(.streamClose(StreamReference(streamID: 1)), requestID: 1)
        for length in 1..<frame.count {
            var decoder = FrameDecoder()
            decoder.append(contentsOf: frame.prefix(length))
            #expect(try decoder.nextFrame() == nil)
            #expect(decoder.bufferedByteCount == length)
            #expect(throws: ProtocolError(.malformedFrame, "connection closed inside a frame (\(length) bytes left over)")) {
                try decoder.finish()
            }
        }
    }

    @Test(arguments: [ProtocolLimits.minimumMaxFrameBytes, ProtocolLimits.defaultMaxFrameBytes])
    func frameOfExactlyTheMaximumIsAccepted(_ maxFrameBytes: Int) throws {
        let payload = [UInt8](repeating: 0, count: maxFrameBytes - FrameHeader.byteCount)
        var bytes: [UInt8] = []
        FrameEncoder.append(typeCode: MessageType.statusReply.rawValue, requestID: 1, payload: payload, to: &bytes)
        let frames = try Self.frames(from: [bytes[...]], maxFrameBytes: maxFrameBytes)
        #expect(frames.count == 1)
        #expect(frames.first?.payload.count == payload.count)
    }

    @Test(arguments: [ProtocolLimits.minimumMaxFrameBytes, ProtocolLimits.defaultMaxFrameBytes])
    func frameOneByteOverIsRejectedFromItsLengthAlone(_ maxFrameBytes: Int) throws {
        let tooLong = UInt32(maxFrameBytes - FrameHeader.byteCount + 1)
        let lengthField = (0..<4).map { UInt8(truncatingIfNeeded: tooLong >> ($0 * 8)) }
        var decoder = FrameDecoder(maxFrameBytes: maxFrameBytes)
        decoder.append(contentsOf: lengthField.prefix(3))
        #expect(try decoder.nextFrame() == nil)
        decoder.append(contentsOf: lengthField.suffix(1))
        #expect(throws: ProtocolError.self) { try decoder.nextFrame() }
        // The decoder stays failed: the byte stream has lost sync.
        decoder.append(contentsOf: FrameEncoder.frame(.ok, requestID: 1))
        let again = #expect(throws: ProtocolError.self) { try decoder.nextFrame() }
        #expect(again?.code == .frameTooLarge)
        #expect(decoder.bufferedByteCount == 0, "an oversized frame is never buffered")
    }

    @Test func hugeLengthIsRejected() {
        #expect(firstError(decoding: [0xff, 0xff, 0xff, 0xff])?.code == .frameTooLarge)
    }

    @Test func framesAfterAnUnknownTypeStillDecode() throws {
        var bytes: [UInt8] = []
        FrameEncoder.append(typeCode: 0x0999, requestID: 3, payload: [1, 2, 3], to: &bytes)
        FrameEncoder.append(.ok, requestID: 4, to: &bytes)
        let frames = try Self.frames(from: [bytes[...]])
        #expect(frames.count == 2)
        #expect(throws: ProtocolError.self) { try Message.decode(frame: frames[0]) }
        #expect(try Message.decode(frame: frames[1]) == .ok)
    }

    @Test func bufferIsCompactedWhileStreaming() throws {
        // A long-running connection: the buffer must not grow with the total bytes received.
        var decoder = FrameDecoder()
        let frame = FrameEncoder.frame(.streamData(StreamData(streamID: 1, pcm: ArraySlice(repeating: 7, count: 4_000))), requestID: 0)
        for _ in 0..<2_000 {
            decoder.append(contentsOf: frame.prefix(1_000))
            decoder.append(contentsOf: frame.dropFirst(1_000))
            let decoded = try #require(try decoder.nextFrame())
            #expect(decoded.payload.count == 4_004)
        }
        #expect(decoder.bufferedByteCount == 0)
    }
}
