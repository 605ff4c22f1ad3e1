import NIOCore
import SceneSoundProtocol

/// The framing layer of a client connection, as SwiftNIO pipelines split it: bytes in, `Frame`s
/// out. The protocol module's `FrameDecoder` does the work; a frame it rejects (too large,
/// reserved flags) is thrown, reaches the session as `errorCaught`, and nothing after it is
/// decoded: the byte stream cannot be trusted any more.
struct ProtocolFrameDecoder: ByteToMessageDecoder {
    typealias InboundOut = Frame
    private var decoder: FrameDecoder

    init(maximumFrameBytes: Int) {
        decoder = FrameDecoder(maxFrameBytes: maximumFrameBytes)
    }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        if buffer.readableBytes > 0 {
            buffer.readWithUnsafeReadableBytes { bytes in
                decoder.append(bytes)
                return bytes.count
            }
        }
        // Every whole frame now, since the bytes have moved into `decoder`: the handler calls
        // again only when more bytes arrive.
        while let frame = try decoder.nextFrame() {
            context.fireChannelRead(Self.wrapInboundOut(frame))
        }
        return .needMoreData
    }

    /// At EOF the whole frames still buffered are delivered; a frame cut off by the EOF is
    /// dropped, since nothing can be answered on it.
    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        try decode(context: context, buffer: &buffer)
    }
}

/// A message on its way to the client, with the request id it answers (0 for events).
struct OutboundFrame {
    var message: Message
    var requestID: UInt32
}

/// The framing layer's other half: messages out as frames, through the protocol's `FrameEncoder`.
final class ProtocolFrameEncoder: MessageToByteEncoder {
    typealias OutboundIn = OutboundFrame
    /// Reused for every frame: marshalling allocates only when a frame is larger than any before.
    private var scratch: [UInt8] = []

    func encode(data: OutboundFrame, out: inout ByteBuffer) throws {
        scratch.removeAll(keepingCapacity: true)
        FrameEncoder.append(data.message, requestID: data.requestID, to: &scratch)
        out.writeBytes(scratch)
    }
}
