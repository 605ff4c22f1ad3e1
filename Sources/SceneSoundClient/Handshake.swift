import SceneSoundPlatform
import SceneSoundProtocol

/// HELLO / WELCOME, done on the connecting thread before the reader thread starts.
///
/// It reads exactly one frame (header, then exactly its payload) so that no byte after
/// `WELCOME` is consumed here: the reader's `FrameDecoder` starts at a frame boundary, sized to
/// the `max_frame_bytes` the server announced.
enum Handshake {
    static let requestID: UInt32 = 1

    static func perform(on socket: UnixSocket, clientPID: UInt32, clientName: String,
                        timeoutSeconds: Double?) throws(ClientError) -> ServerParameters {
        let hello = Hello(clientPID: clientPID, clientName: clientName)
        do throws(ProtocolError) { try hello.validate() } catch { throw ClientError(error) }
        let frame = FrameEncoder.frame(.hello(hello), requestID: requestID)
        try socket.sendAll(frame)

        let deadline = MonotonicClock.deadlineSeconds(after: timeoutSeconds)
        let header = try readExactly(FrameHeader.byteCount, from: socket, deadline: deadline, timeoutSeconds: timeoutSeconds)
        let payloadLength = Int(header[0]) | Int(header[1]) << 8 | Int(header[2]) << 16 | Int(header[3]) << 24
        // A reply to HELLO is small (WELCOME, or ERROR with a one-line message); anything
        // larger than the smallest permitted frame limit is not a SceneSound server.
        guard payloadLength <= ProtocolLimits.minimumMaxFrameBytes - FrameHeader.byteCount else {
            throw .protocolViolation("the reply to HELLO announces \(payloadLength) bytes; is this a SceneSound socket?")
        }
        let payload = try readExactly(payloadLength, from: socket, deadline: deadline, timeoutSeconds: timeoutSeconds)

        var decoder = FrameDecoder(maxFrameBytes: ProtocolLimits.minimumMaxFrameBytes)
        decoder.append(contentsOf: header + payload)
        let message: Message
        let replyID: UInt32
        do {
            guard let replyFrame = try decoder.nextFrame() else {
                throw ProtocolError(.malformedFrame, "incomplete reply to HELLO")
            }
            replyID = replyFrame.requestID
            message = try Message.decode(frame: replyFrame)
        } catch {
            throw .protocolViolation("the reply to HELLO is invalid (\(error))")
        }
        switch message {
        case .welcome(let welcome) where replyID == requestID:
            guard ProtocolVersion.supported.contains(welcome.version) else {
                throw .protocolViolation("the server chose protocol version \(welcome.version), outside \(ProtocolVersion.supported)")
            }
            return ServerParameters(welcome)
        case .error(let reply):
            // unsupported_version, or not_permitted (request id 0) for a foreign uid.
            throw .server(code: reply.code, message: reply.message)
        default:
            throw .protocolViolation("expected WELCOME for request \(requestID), got \(message.type.name) for \(replyID)")
        }
    }

    private static func readExactly(_ count: Int, from socket: UnixSocket, deadline: Double?,
                                     timeoutSeconds: Double?) throws(ClientError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let remaining = deadline.map { max(0, $0 - MonotonicClock.nowSeconds()) }
            let received: Int
            do {
                received = try socket.receive(into: &bytes, at: filled, timeoutSeconds: remaining)
            } catch .timedOut {
                throw .timedOut(operation: "the handshake with the server", seconds: timeoutSeconds ?? 0)
            }
            if received == 0 { throw .disconnected(reason: "the server closed the connection during the handshake") }
            filled += received
        }
        return bytes
    }
}
