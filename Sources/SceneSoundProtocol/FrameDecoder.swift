/// Splits an incoming byte stream into frames.
///
/// Feed it whatever the socket delivered with `append`, then call `nextFrame()` until it returns
/// nil ("need more bytes"). A thrown error means the byte stream cannot be trusted any more:
/// send the error and close the connection. The decoder stays failed and rethrows it.
///
/// Bytes are kept in one growing buffer that is compacted lazily, so decoding allocates nothing
/// per byte or per frame once the buffer has grown to the working size.
public struct FrameDecoder: Sendable {
    /// The largest frame, header included, that is accepted.
    public let maxFrameBytes: Int

    private var buffer: [UInt8] = []
    /// Start of the first byte not yet returned as part of a frame.
    private var readIndex = 0
    private var failure: ProtocolError?

    public init(maxFrameBytes: Int = ProtocolLimits.defaultMaxFrameBytes) {
        precondition(maxFrameBytes >= FrameHeader.byteCount, "a frame needs room for its header")
        self.maxFrameBytes = maxFrameBytes
    }

    /// Bytes received but not yet returned as frames.
    public var bufferedByteCount: Int { buffer.count - readIndex }

    /// Buffers received bytes. Ignored once the decoder has failed.
    public mutating func append(contentsOf bytes: some Sequence<UInt8>) {
        guard failure == nil else { return }
        compactIfWorthwhile()
        buffer.append(contentsOf: bytes)
    }

    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard failure == nil else { return }
        compactIfWorthwhile()
        buffer.append(contentsOf: bytes)
    }

    /// The next whole frame, or nil when more bytes are needed.
    /// Throws `frame_too_large` as soon as the length field is readable (the rest of an oversized
    /// frame is never buffered) and `malformed_frame` for reserved header bits.
    public mutating func nextFrame() throws(ProtocolError) -> Frame? {
        if let failure { throw failure }
        let available = buffer.count - readIndex
        guard available >= 4 else { return nil }

        let payloadLength = Int(buffer.loadLittleEndian(UInt32.self, at: readIndex + FrameHeader.payloadLengthOffset))
        guard payloadLength <= maxFrameBytes - FrameHeader.byteCount else {
            return try fail(ProtocolError(.frameTooLarge,
                "frame of \(FrameHeader.byteCount + payloadLength) bytes exceeds the maximum of \(maxFrameBytes)"))
        }
        guard available >= FrameHeader.byteCount else { return nil }

        let flags = buffer.loadLittleEndian(UInt16.self, at: readIndex + FrameHeader.flagsOffset)
        guard flags == 0 else {
            return try fail(ProtocolError(.malformedFrame, "reserved frame flags 0x\(String(flags, radix: 16)) set"))
        }
        guard available >= FrameHeader.byteCount + payloadLength else { return nil }

        let typeCode = buffer.loadLittleEndian(UInt16.self, at: readIndex + FrameHeader.messageTypeOffset)
        let requestID = buffer.loadLittleEndian(UInt32.self, at: readIndex + FrameHeader.requestIDOffset)
        let payloadStart = readIndex + FrameHeader.byteCount
        readIndex = payloadStart + payloadLength
        return Frame(typeCode: typeCode, requestID: requestID, payload: buffer[payloadStart..<readIndex])
    }

    /// Call when the peer closed the connection: a partial frame left over means it was cut off.
    public func finish() throws(ProtocolError) {
        if let failure { throw failure }
        if bufferedByteCount > 0 {
            throw ProtocolError(.malformedFrame, "connection closed inside a frame (\(bufferedByteCount) bytes left over)")
        }
    }

    private mutating func fail(_ error: ProtocolError) throws(ProtocolError) -> Frame? {
        failure = error
        buffer = []
        readIndex = 0
        throw error
    }

    /// Drops consumed bytes once they are at least half the buffer, so the cost of moving the
    /// unconsumed tail is amortised over the bytes consumed.
    private mutating func compactIfWorthwhile() {
        guard readIndex > 0 else { return }
        if readIndex == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            readIndex = 0
        } else if readIndex >= buffer.count / 2 {
            buffer.removeSubrange(0..<readIndex)
            readIndex = 0
        }
    }
}
