import SceneSoundProtocol
import Testing

/// Every kind of malformed payload yields its error code, beyond the invalid vectors.
@Suite struct MalformedPayloadTests {
    /// Messages whose last field runs to the end of the payload, so a shorter or longer payload
    /// can still be well-formed.
    static let openEndedTypes: Set<MessageType> = [.streamData, .sampleUpload, .statusReply, .outputDeviceChanged]

    @Test(arguments: validVectors.filter { !openEndedTypes.contains($0.message.type) })
    func everyTruncationIsMalformed(_ vector: ValidVector) {
        let payload = payloadBytes(vector.message)
        for length in 0..<payload.count {
            #expect(decodeError(vector.message.type, Array(payload.prefix(length)), version: vector.version)?.code
                        == .malformedPayload,
                    "\(vector.file) cut to \(length) bytes")
        }
    }

    @Test(arguments: validVectors.filter { !openEndedTypes.contains($0.message.type) })
    func aTrailingByteIsMalformed(_ vector: ValidVector) {
        let payload = payloadBytes(vector.message) + [0]
        #expect(decodeError(vector.message.type, payload, version: vector.version)?.code == .malformedPayload)
    }

    @Test(arguments: [
        // (message, expected code)
        (Message.streamData(StreamData(streamID: 0, pcm: [0, 0])), ErrorCode.invalidArgument),
        (.streamOpened(StreamOpened(streamID: 1, creditBytes: 0)), .invalidArgument),
        (.creditGranted(CreditGranted(streamID: 1, bytes: 0)), .invalidArgument),
        (.sceneBindWindow(SceneBindWindow(sceneID: "chat", windowID: 0)), .invalidArgument),
        (.sceneBindWindow(SceneBindWindow(sceneID: "", windowID: 1)), .invalidArgument),
        (.sceneBindWindow(SceneBindWindow(sceneID: "x11:0x", windowID: 1)), .invalidArgument),
        (.sceneBindWindow(SceneBindWindow(sceneID: "x11:0x0", windowID: 1)), .invalidArgument),
        (.sceneBindWindow(SceneBindWindow(sceneID: "x11:0x123456789", windowID: 1)), .invalidArgument),
        (.sceneBindWindow(SceneBindWindow(sceneID: "x11:0x+1", windowID: 1)), .invalidArgument),
        (.scenePlace(ScenePlace(sceneID: "a", position: ScenePosition(azimuthDegrees: 0, elevationDegrees: 91, distanceMetres: 1))), .invalidArgument),
        (.scenePlace(ScenePlace(sceneID: "a", position: ScenePosition(azimuthDegrees: 361, elevationDegrees: 0, distanceMetres: 1))), .invalidArgument),
        (.scenePlace(ScenePlace(sceneID: "a", position: ScenePosition(azimuthDegrees: 0, elevationDegrees: 0, distanceMetres: 0))), .invalidArgument),
        (.scenePlace(ScenePlace(sceneID: "a", position: ScenePosition(azimuthDegrees: .infinity, elevationDegrees: 0, distanceMetres: 1))), .invalidArgument),
        (.streamSetVolume(StreamSetVolume(streamID: 1, volumeDecibels: 24.5)), .invalidArgument),
        (.streamSetVolume(StreamSetVolume(streamID: 1, volumeDecibels: -.infinity)), .invalidArgument),
        (.streamOpen(StreamOpen(kind: .playback, format: AudioFormat(sampleFormat: .s16le, rateHz: 192_001, channels: 1), sceneID: "")), .badFormat),
        (.streamOpen(StreamOpen(kind: .playback, format: AudioFormat(sampleFormat: .s16le, rateHz: 48_000, channels: 0), sceneID: "")), .badFormat),
        (.streamOpen(StreamOpen(kind: .alert, format: stereoS16At48k, loop: true, sceneID: "")), .invalidArgument),
        (.samplePlay(SamplePlay(name: "bell", kind: .playback, sceneID: "")), .invalidArgument),
        (.samplePlay(SamplePlay(name: "", kind: .system, sceneID: "")), .invalidArgument),
        (.samplePlay(SamplePlay(name: "bell", kind: .system, sceneID: "", demandAttention: true)), .invalidArgument),
        (.sampleUpload(SampleUpload(name: "b", format: stereoS16At48k, totalBytes: 6, offsetBytes: 0, pcm: [0, 0, 0, 0])), .badFormat),
        (.sampleUpload(SampleUpload(name: "b", format: stereoS16At48k, totalBytes: 8, offsetBytes: 2, pcm: [0, 0, 0, 0])), .badFormat),
        (.sampleUpload(SampleUpload(name: "b", format: stereoS16At48k, totalBytes: 8, offsetBytes: 0, pcm: [0, 0])), .badFormat),
        (.sampleUpload(SampleUpload(name: "b", format: stereoS16At48k, totalBytes: 8, offsetBytes: 0, pcm: [])), .badFormat),
        (.sampleUpload(SampleUpload(name: "b", format: stereoS16At48k, totalBytes: 8, offsetBytes: 8, pcm: [0, 0, 0, 0])), .invalidArgument),
        (.headPose(HeadPose(timestampNanoseconds: 0, orientation: Quaternion(w: 0, x: 0, y: 0, z: 0))), .invalidArgument),
        (.headPose(HeadPose(timestampNanoseconds: 0, orientation: Quaternion(w: 1.1, x: 0, y: 0, z: 0))), .invalidArgument),
        (.headPose(HeadPose(timestampNanoseconds: 0, orientation: .identity, position: PositionMetres(x: .nan, y: 0, z: 0))), .invalidArgument),
        (.hello(Hello(minimumVersion: 0, maximumVersion: 1, clientPID: 0, clientName: "")), .invalidArgument),
        (.welcome(Welcome(version: 1, sampleRateHz: 48_000, blockFrames: 256, maxFrameBytes: 4_095, maxStreams: 1, maxSampleBytes: 1, serverName: "")), .invalidArgument),
        (.error(ErrorReply(code: ErrorCode(rawValue: 0), message: "")), .invalidArgument),
        (.sceneListReply(SceneListReply(entries: [SceneListEntry(sceneID: "a", anchor: .position, windowID: 7,
            position: ScenePosition(azimuthDegrees: 0, elevationDegrees: 0, distanceMetres: 1))])), .invalidArgument),
    ])
    func outOfRangeValueIsRejected(_ message: Message, _ expected: ErrorCode) {
        #expect(decodeError(message.type, payloadBytes(message))?.code == expected)
    }

    @Test func positionBytesWithoutHasPositionAreMalformed() {
        var payload = payloadBytes(.headPose(HeadPose(timestampNanoseconds: 1, orientation: .identity)))
        payload[payload.count - 1] = 0x3f  // z_metres's high byte, has_position still 0
        #expect(decodeError(.headPose, payload)?.code == .malformedPayload)
    }

    @Test func unknownEnumValuesAreRejected() {
        #expect(decodeError(.streamEnded, [1, 0, 0, 0, 9])?.code == .invalidArgument)
        #expect(decodeError(.playbackEnded, [1, 0, 0, 0, 0])?.code == .invalidArgument)
        #expect(decodeError(.sceneListReply, [1, 0, 1, 0x61, 7] + Array(repeating: 0, count: 16))?.code == .invalidArgument)
    }

    @Test func invalidUTF8InTheStatusDocumentIsMalformed() {
        #expect(decodeError(.statusReply, [0x7b, 0xc3])?.code == .malformedPayload)
    }

    @Test func everyUnknownTypeIsReported() {
        let known = Set(MessageType.allCases.map(\.rawValue))
        for code in UInt16(0)...0x0900 where !known.contains(code) {
            #expect(throws: ProtocolError.self) { try Message.decode(type: code, payload: []) }
            #expect(decodeError(rawCode: code, [])?.code == .unknownMessageType)
        }
    }

    @Test func fatalCodesAreTheOnesThatBreakTheByteStream() {
        let fatal = ErrorCode.allDefined.filter(\.closesConnection)
        #expect(fatal == [.malformedFrame, .frameTooLarge, .unsupportedVersion, .creditExceeded])
    }
}

func payloadBytes(_ message: Message) -> [UInt8] {
    var bytes: [UInt8] = []
    message.encode(into: &bytes)
    return bytes
}

func decodeError(_ type: MessageType, _ payload: [UInt8], version: UInt16 = 1) -> ProtocolError? {
    decodeError(rawCode: type.rawValue, payload, version: version)
}

func decodeError(rawCode: UInt16, _ payload: [UInt8], version: UInt16 = 1) -> ProtocolError? {
    do {
        _ = try Message.decode(type: rawCode, payload: payload[...], version: version)
        return nil
    } catch {
        return error
    }
}
