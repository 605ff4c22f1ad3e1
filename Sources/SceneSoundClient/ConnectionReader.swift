import SceneSoundProtocol

/// The reader thread's loop: bytes from the socket → frames → messages → `SessionState`.
/// Ends at end of stream, on a socket error, or on a frame that breaks the protocol, and then
/// fails every waiter.
struct ConnectionReader {
    static let receiveBufferBytes = 64 * 1024

    let socket: UnixSocket
    let session: SessionState
    let maxFrameBytes: Int

    func run() {
        let ending = readUntilEnd()
        socket.shutdownBothDirections()
        session.disconnect(ending)
    }

    private func readUntilEnd() -> ClientError {
        var decoder = FrameDecoder(maxFrameBytes: maxFrameBytes)
        var buffer = [UInt8](repeating: 0, count: Self.receiveBufferBytes)
        while true {
            let received: Int
            do {
                received = try socket.receive(into: &buffer)
            } catch {
                return error
            }
            if received == 0 {
                do { try decoder.finish() } catch { return .protocolViolation(error.description) }
                return .disconnected(reason: "the server closed the connection")
            }
            buffer.withUnsafeBytes { decoder.append(UnsafeRawBufferPointer(rebasing: $0[..<received])) }
            do {
                while let frame = try decoder.nextFrame() {
                    if let violation = handle(frame) { return violation }
                }
            } catch {
                return .protocolViolation(error.description)
            }
        }
    }

    /// Message types this version does not know are skipped, so that a newer server's
    /// additions cannot break an older client; anything else undecodable ends the connection
    /// (SPEC.md section 9: a client receiving a malformed frame closes it).
    private func handle(_ frame: Frame) -> ClientError? {
        let message: Message
        do {
            message = try Message.decode(frame: frame)
        } catch where error.code == .unknownMessageType {
            return nil
        } catch {
            return .protocolViolation(error.description)
        }
        return session.dispatch(message, requestID: frame.requestID)
    }
}
