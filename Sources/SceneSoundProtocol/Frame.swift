/// One frame as the framing layer sees it: a type code, a request id and opaque payload bytes.
/// Turning the payload into a `Message` is the marshalling layer's job (`Message.decode`).
public struct Frame: Equatable, Sendable {
    /// The message type number; kept raw so that unknown types survive framing and can be
    /// answered with `unknown_message_type` without losing frame sync.
    public var typeCode: UInt16
    /// Non-zero on requests and the replies that echo them; zero on one-way messages and events.
    public var requestID: UInt32
    /// The payload. When it comes from a `FrameDecoder` it shares the decoder's storage; that is
    /// safe (copy-on-write) but copy it if you keep it while feeding the decoder more bytes.
    public var payload: ArraySlice<UInt8>

    public init(typeCode: UInt16, requestID: UInt32, payload: ArraySlice<UInt8>) {
        self.typeCode = typeCode
        self.requestID = requestID
        self.payload = payload
    }
}

/// The fixed 12-byte header in front of every payload (all fields little-endian):
///
///     offset 0  u32 payload_length   bytes after the header
///     offset 4  u16 message_type
///     offset 6  u16 flags            reserved, must be 0 in version 1
///     offset 8  u32 request_id
public enum FrameHeader {
    public static let byteCount = 12
    static let payloadLengthOffset = 0
    static let messageTypeOffset = 4
    static let flagsOffset = 6
    static let requestIDOffset = 8
}
