import SceneSoundProtocol
import Testing

/// encode → decode is the identity, for every message and through the whole frame path.
@Suite struct RoundTripTests {
    @Test(arguments: validVectors)
    func payloadRoundTrips(_ vector: ValidVector) throws {
        var payload: [UInt8] = []
        vector.message.encode(into: &payload)
        let decoded = try Message.decode(type: vector.message.type.rawValue, payload: payload[...], version: vector.version)
        #expect(decoded == vector.message)
    }

    @Test(arguments: extraMessages)
    func frameRoundTrips(_ message: Message) throws {
        let requestID: UInt32 = message.type.requestIDRule == .zero ? 0 : 0xdead_beef
        var decoder = FrameDecoder()
        decoder.append(contentsOf: FrameEncoder.frame(message, requestID: requestID))
        let frame = try #require(try decoder.nextFrame())
        #expect(frame.requestID == requestID)
        #expect(try Message.decode(frame: frame) == message)
    }

    @Test func largestStreamDataFrameFitsExactly() throws {
        let pcmBytes = StreamData.maxPCMBytes(maxFrameBytes: ProtocolLimits.defaultMaxFrameBytes, bytesPerFrame: 8)
        #expect(pcmBytes % 8 == 0)
        let message = Message.streamData(StreamData(streamID: 3, pcm: ArraySlice(repeating: 0x5a, count: pcmBytes)))
        let frame = FrameEncoder.frame(message, requestID: 0)
        #expect(frame.count <= ProtocolLimits.defaultMaxFrameBytes)
        #expect(frame.count + 8 > ProtocolLimits.defaultMaxFrameBytes)
        #expect(firstError(decoding: frame) == nil)
    }

    @Test func sampleUploadHeaderSizeIsExact() {
        let upload = SampleUpload(name: "bell", format: stereoS16At48k, totalBytes: 4, offsetBytes: 0, pcm: [1, 2, 3, 4])
        var payload: [UInt8] = []
        Message.sampleUpload(upload).encode(into: &payload)
        #expect(payload.count == SampleUpload.headerBytes(nameBytes: 4) + 4)
    }
}

/// Variants beyond the golden vectors: extreme values and every enum case.
let extraMessages: [Message] = {
    var messages: [Message] = [
        .hello(Hello(minimumVersion: 1, maximumVersion: 9, clientPID: .max, clientName: String(repeating: "n", count: 255))),
        .scenePlace(ScenePlace(sceneID: String(repeating: "é", count: 127),
                               position: ScenePosition(azimuthDegrees: -360, elevationDegrees: 90, distanceMetres: 1000))),
        .sceneBindWindow(SceneBindWindow(sceneID: "x11:0xFFFFFFFF", windowID: .max)),
        .streamSetVolume(StreamSetVolume(streamID: .max, volumeDecibels: -200)),
        .streamSetScene(StreamSetScene(streamID: 2, sceneID: "")),
        .streamData(StreamData(streamID: 1, pcm: [])),
        .headPose(HeadPose(timestampNanoseconds: .max, orientation: Quaternion(w: 0, x: 0, y: -1, z: 0),
                           position: PositionMetres(x: -0, y: 0, z: 0))),
        .error(ErrorReply(code: ErrorCode(rawValue: 999), message: "a code from a newer server")),
        .statusReply(StatusReply(json: "")),
    ]
    for kind in StreamKind.allCases {
        for sampleFormat in SampleFormat.allCases {
            for mode in SpatialMode.allCases {
                messages.append(.streamOpen(StreamOpen(
                    kind: kind, format: AudioFormat(sampleFormat: sampleFormat, rateHz: 8_000, channels: 1),
                    spatialMode: mode, loop: kind == .playback, volumeDecibels: 24, sceneID: "s")))
            }
        }
    }
    messages += StreamEndReason.allCases.map { .streamEnded(StreamEnded(streamID: 1, reason: $0)) }
    messages += PlaybackEndReason.allCases.map { .playbackEnded(PlaybackEnded(playID: 1, reason: $0)) }
    messages += ErrorCode.allDefined.map { .streamError(StreamError(streamID: 1, code: $0, message: $0.name)) }
    messages += [StreamKind.system, .alert].map { .samplePlay(SamplePlay(name: "bell", kind: $0, sceneID: "")) }
    return messages
}()

/// STREAM_OPEN's layout follows the connection's version: version 1 has no channel map and one
/// or two channels, version 2 always carries the map and takes up to 7.1.
@Suite struct StreamOpenVersionTests {
    static let surround = AudioFormat(sampleFormat: .s16le, rateHz: 48_000, channels: 6)

    @Test func version1BytesStayVersion1AndRefuseSurround() throws {
        let v1 = Message.streamOpen(StreamOpen(kind: .playback, format: stereoS16At48k, sceneID: "chat"))
        var bytes: [UInt8] = []
        v1.encode(into: &bytes)
        #expect(try Message.decode(type: MessageType.streamOpen.rawValue, payload: bytes[...], version: 1) == v1)
        // The same bytes in a version 2 connection lack the map.
        #expect(decodeError(.streamOpen, bytes, version: 2)?.code == .malformedPayload)
        let six = Message.streamOpen(StreamOpen(kind: .playback, format: Self.surround, sceneID: ""))
        #expect(throws: ProtocolError.self) { try six.validate() }
    }

    @Test func version2CarriesTheMapAndUpTo8Channels() throws {
        for channels: UInt8 in 1...8 {
            let open = Message.streamOpen(StreamOpen(kind: .playback, format: AudioFormat(
                sampleFormat: .f32le, rateHz: 48_000, channels: channels), sceneID: "", channelMap: []))
            var bytes: [UInt8] = []
            open.encode(into: &bytes)
            #expect(try Message.decode(type: MessageType.streamOpen.rawValue, payload: bytes[...], version: 2) == open)
        }
        let nine = StreamOpen(kind: .playback, format: AudioFormat(sampleFormat: .f32le, rateHz: 48_000, channels: 9),
                              sceneID: "", channelMap: [])
        #expect(throws: ProtocolError.self) { try nine.validate() }
        let twice = StreamOpen(kind: .playback, format: stereoS16At48k, sceneID: "", channelMap: [.frontLeft, .frontLeft])
        #expect(throws: ProtocolError.self) { try twice.validate() }
    }
}
