/// Writes frames: header plus payload, appended to a byte buffer.
public enum FrameEncoder {
    /// Appends `message` as one frame. The payload is marshalled straight into `bytes` and the
    /// length patched afterwards, so no intermediate buffer is allocated.
    /// The caller keeps frames within the peer's maximum frame size (see `Welcome.maxFrameBytes`).
    public static func append(_ message: Message, requestID: UInt32, to bytes: inout [UInt8]) {
        let headerStart = bytes.count
        writeHeader(payloadLength: 0, typeCode: message.type.rawValue, requestID: requestID, to: &bytes)
        let payloadStart = bytes.count
        message.encode(into: &bytes)
        let payloadLength = UInt32(bytes.count - payloadStart)
        bytes.storeLittleEndian(payloadLength, at: headerStart + FrameHeader.payloadLengthOffset)
    }

    /// Appends a frame with an arbitrary type code and payload (for forwarding raw frames and for
    /// producing deliberately invalid frames in tests).
    public static func append(
        typeCode: UInt16, requestID: UInt32, payload: some Collection<UInt8>, to bytes: inout [UInt8]
    ) {
        writeHeader(payloadLength: UInt32(payload.count), typeCode: typeCode, requestID: requestID, to: &bytes)
        bytes.append(contentsOf: payload)
    }

    /// One frame as a fresh array.
    public static func frame(_ message: Message, requestID: UInt32) -> [UInt8] {
        var bytes: [UInt8] = []
        append(message, requestID: requestID, to: &bytes)
        return bytes
    }

    private static func writeHeader(payloadLength: UInt32, typeCode: UInt16, requestID: UInt32, to bytes: inout [UInt8]) {
        bytes.appendLittleEndian(payloadLength)
        bytes.appendLittleEndian(typeCode)
        bytes.appendLittleEndian(UInt16(0))  // flags
        bytes.appendLittleEndian(requestID)
    }
}
