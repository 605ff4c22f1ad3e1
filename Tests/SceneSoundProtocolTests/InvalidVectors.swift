import SceneSoundProtocol
import Testing

/// A deliberately broken input and the error a receiver must report.
struct InvalidVector: Sendable, CustomTestStringConvertible {
    /// Where the defect is found: by the frame decoder, when the connection ends inside a frame,
    /// or when decoding the frame into a message.
    enum Stage: String, Sendable { case frame, endOfStream = "end_of_stream", message }

    let file: String
    let description: String
    let bytes: [UInt8]
    let stage: Stage
    let expected: ErrorCode
    /// The protocol version the bytes are decoded in.
    var version: UInt16 = 1

    var testDescription: String { file }
}

/// A frame with a raw type code, request id and payload, bypassing the Message encoder.
private func rawFrame(_ type: MessageType, requestID: UInt32 = 1, payload: [UInt8]) -> [UInt8] {
    rawFrame(typeCode: type.rawValue, requestID: requestID, payload: payload)
}

private func rawFrame(typeCode: UInt16, requestID: UInt32, payload: [UInt8]) -> [UInt8] {
    var bytes: [UInt8] = []
    FrameEncoder.append(typeCode: typeCode, requestID: requestID, payload: payload, to: &bytes)
    return bytes
}

private func payload(of message: Message) -> [UInt8] {
    var bytes: [UInt8] = []
    message.encode(into: &bytes)
    return bytes
}

private let validStreamOpen = StreamOpen(kind: .playback, format: stereoS16At48k, sceneID: "chat")

/// `validStreamOpen`'s payload with one byte replaced (offsets per SPEC.md's STREAM_OPEN table).
private func streamOpenPayload(setting offset: Int, to value: UInt8) -> [UInt8] {
    var bytes = payload(of: .streamOpen(validStreamOpen))
    bytes[offset] = value
    return bytes
}

private func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) } }

let invalidVectors: [InvalidVector] = [
    InvalidVector(file: "invalid-truncated-frame.bin",
                  description: "STREAM_OPEN frame cut off after 20 of its bytes, then end of stream",
                  bytes: Array(FrameEncoder.frame(.streamOpen(validStreamOpen), requestID: 1).prefix(20)),
                  stage: .endOfStream, expected: .malformedFrame),
    InvalidVector(file: "invalid-oversized-length.bin",
                  description: "payload_length 262133: the frame would be 262145 bytes, one above the default maximum",
                  bytes: le32(262_133) + [0x04, 0x02, 0x00, 0x00] + le32(1),
                  stage: .frame, expected: .frameTooLarge),
    InvalidVector(file: "invalid-reserved-flags.bin",
                  description: "OK frame with flags 0x0001",
                  bytes: le32(0) + [0x03, 0x00, 0x01, 0x00] + le32(7),
                  stage: .frame, expected: .malformedFrame),
    InvalidVector(file: "invalid-unknown-type.bin",
                  description: "message type 0x7777 with an empty payload",
                  bytes: rawFrame(typeCode: 0x7777, requestID: 1, payload: []),
                  stage: .message, expected: .unknownMessageType),
    InvalidVector(file: "invalid-truncated-payload.bin",
                  description: "STREAM_CLOSE whose stream_id has only 2 of its 4 bytes",
                  bytes: rawFrame(.streamClose, payload: [0x01, 0x00]),
                  stage: .message, expected: .malformedPayload),
    InvalidVector(file: "invalid-trailing-bytes.bin",
                  description: "STREAM_DRAIN with one byte after stream_id",
                  bytes: rawFrame(.streamDrain, payload: [0x01, 0x00, 0x00, 0x00, 0x00]),
                  stage: .message, expected: .malformedPayload),
    InvalidVector(file: "invalid-bad-utf8.bin",
                  description: "SCENE_UNBIND whose scene_id is the bytes ff fe",
                  bytes: rawFrame(.sceneUnbind, payload: [0x02, 0xff, 0xfe]),
                  stage: .message, expected: .malformedPayload),
    InvalidVector(file: "invalid-nul-in-string.bin",
                  description: "SCENE_UNBIND whose scene_id is \"a\\0b\"",
                  bytes: rawFrame(.sceneUnbind, payload: [0x03, 0x61, 0x00, 0x62]),
                  stage: .message, expected: .malformedPayload),
    InvalidVector(file: "invalid-string-length.bin",
                  description: "SCENE_UNBIND whose scene_id length byte says 9 but 4 bytes follow",
                  bytes: rawFrame(.sceneUnbind, payload: [0x09] + Array("chat".utf8)),
                  stage: .message, expected: .malformedPayload),
    InvalidVector(file: "invalid-bool.bin",
                  description: "STREAM_OPEN with loop byte 2",
                  bytes: rawFrame(.streamOpen, payload: streamOpenPayload(setting: 8, to: 2)),
                  stage: .message, expected: .malformedPayload),
    InvalidVector(file: "invalid-request-id-zero.bin",
                  description: "SCENE_LIST (a request) with request id 0",
                  bytes: rawFrame(.sceneList, requestID: 0, payload: []),
                  stage: .message, expected: .malformedFrame),
    InvalidVector(file: "invalid-data-request-id.bin",
                  description: "STREAM_DATA (one-way) with request id 5",
                  bytes: rawFrame(.streamData, requestID: 5, payload: [0x01, 0x00, 0x00, 0x00, 0x00, 0x00]),
                  stage: .message, expected: .malformedFrame),
    InvalidVector(file: "invalid-rate.bin",
                  description: "STREAM_OPEN with rate_hz 7999",
                  bytes: rawFrame(.streamOpen, payload: payload(of: .streamOpen(StreamOpen(
                      kind: .playback, format: AudioFormat(sampleFormat: .s16le, rateHz: 7_999, channels: 2), sceneID: "chat")))),
                  stage: .message, expected: .badFormat),
    InvalidVector(file: "invalid-channels.bin",
                  description: "STREAM_OPEN with 3 channels",
                  bytes: rawFrame(.streamOpen, payload: streamOpenPayload(setting: 2, to: 3)),
                  stage: .message, expected: .badFormat),
    InvalidVector(file: "invalid-channel-map.bin",
                  description: "STREAM_OPEN (version 2) of 6 channels whose channel_map names 2",
                  bytes: rawFrame(.streamOpen, payload: payload(of: .streamOpen(StreamOpen(
                      kind: .playback, format: AudioFormat(sampleFormat: .s16le, rateHz: 48_000, channels: 6),
                      sceneID: "", channelMap: [.frontLeft, .frontRight])))),
                  stage: .message, expected: .badFormat, version: 2),
    InvalidVector(file: "invalid-channel-position.bin",
                  description: "STREAM_OPEN (version 2) whose channel_map names position 8",
                  bytes: rawFrame(.streamOpen, payload: {
                      var bytes = payload(of: .streamOpen(StreamOpen(
                          kind: .playback, format: AudioFormat(sampleFormat: .s16le, rateHz: 48_000, channels: 1),
                          sceneID: "", channelMap: [.frontCenter])))
                      bytes[bytes.count - 1] = 8
                      return bytes
                  }()),
                  stage: .message, expected: .badFormat, version: 2),
    InvalidVector(file: "invalid-sample-format.bin",
                  description: "STREAM_OPEN with sample_format 9",
                  bytes: rawFrame(.streamOpen, payload: streamOpenPayload(setting: 1, to: 9)),
                  stage: .message, expected: .badFormat),
    InvalidVector(file: "invalid-spatial-mode.bin",
                  description: "STREAM_OPEN with spatial_mode 0",
                  bytes: rawFrame(.streamOpen, payload: streamOpenPayload(setting: 7, to: 0)),
                  stage: .message, expected: .invalidArgument),
    InvalidVector(file: "invalid-spatial-use.bin",
                  description: "SPATIAL_USE with spatial 3",
                  bytes: rawFrame(.spatialUse, requestID: 25, payload: [3]),
                  stage: .message, expected: .invalidArgument),
    InvalidVector(file: "invalid-render-use.bin",
                  description: "RENDER_USE with render 3",
                  bytes: rawFrame(.renderUse, requestID: 28, payload: [3]),
                  stage: .message, expected: .invalidArgument),
    InvalidVector(file: "invalid-system-loop.bin",
                  description: "STREAM_OPEN of kind system with loop 1",
                  bytes: rawFrame(.streamOpen, payload: payload(of: .streamOpen(StreamOpen(
                      kind: .system, format: stereoS16At48k, loop: true, sceneID: "")))),
                  stage: .message, expected: .invalidArgument),
    InvalidVector(file: "invalid-nan-azimuth.bin",
                  description: "SCENE_PLACE with azimuth_degrees NaN",
                  bytes: rawFrame(.scenePlace, payload: payload(of: .scenePlace(ScenePlace(
                      sceneID: "chat", position: ScenePosition(azimuthDegrees: .nan, elevationDegrees: 0, distanceMetres: 1))))),
                  stage: .message, expected: .invalidArgument),
    InvalidVector(file: "invalid-x11-scene.bin",
                  description: "SCENE_BIND_WINDOW with scene_id \"x11:window\" (reserved prefix, not x11:0x<hex>)",
                  bytes: rawFrame(.sceneBindWindow, payload: payload(of: .sceneBindWindow(SceneBindWindow(
                      sceneID: "x11:window", windowID: 1)))),
                  stage: .message, expected: .invalidArgument),
    InvalidVector(file: "invalid-version-range.bin",
                  description: "HELLO with min_version 2 and max_version 1",
                  bytes: rawFrame(.hello, payload: payload(of: .hello(Hello(
                      minimumVersion: 2, maximumVersion: 1, clientPID: 1, clientName: "x")))),
                  stage: .message, expected: .invalidArgument),
    InvalidVector(file: "invalid-zero-stream-id.bin",
                  description: "STREAM_CLOSE of stream 0",
                  bytes: rawFrame(.streamClose, payload: [0, 0, 0, 0]),
                  stage: .message, expected: .invalidArgument),
]
