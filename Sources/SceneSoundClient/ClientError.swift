import SceneSoundProtocol

/// Everything that can go wrong on the client side, each with a description a user can act on.
/// Where the server said why, its `ErrorCode` and message are kept (`serverCode`).
public enum ClientError: Error, Equatable, Sendable, CustomStringConvertible {
    /// None of `--socket`, `$SCENESOUND_SOCKET`, `$XDG_RUNTIME_DIR` was given.
    case noSocketPath
    /// The socket could not be connected (no server, stale socket, permissions).
    case cannotConnect(path: String, reason: String)
    /// The connection is gone: the server closed it, it crashed, or `close()` was called.
    /// `reason` says which, including the server's last `ERROR` when it sent one before closing.
    case disconnected(reason: String)
    /// The server answered a request with `ERROR`.
    case server(code: ErrorCode, message: String)
    /// The server failed the stream (`STREAM_ERROR`); it is defunct and should be closed.
    case streamFailed(streamID: UInt32, code: ErrorCode, message: String)
    /// The server ended the stream (`STREAM_ENDED` with `server_shutdown` / `removed_by_server`).
    case streamEnded(streamID: UInt32, reason: StreamEndReason)
    /// The stream was closed by this client.
    case streamClosed(streamID: UInt32)
    /// A blocking wait ran out of time. The connection is still usable.
    case timedOut(operation: String, seconds: Double)
    /// An async operation's task was cancelled.
    case cancelled(operation: String)
    /// A value the server would reject, caught before sending it; or a misuse of the API.
    case invalidArgument(String)
    /// The server sent something that breaks the protocol; the connection was closed.
    case protocolViolation(String)

    /// The server's error code, when the server said why.
    public var serverCode: ErrorCode? {
        switch self {
        case .server(let code, _), .streamFailed(_, let code, _): code
        default: nil
        }
    }

    /// The server's message, when the server said why.
    public var serverMessage: String? {
        switch self {
        case .server(_, let message), .streamFailed(_, _, let message): message
        default: nil
        }
    }

    public var description: String {
        switch self {
        case .noSocketPath:
            "no socket path: pass --socket PATH, or set SCENESOUND_SOCKET or XDG_RUNTIME_DIR"
        case .cannotConnect(let path, _):
            "cannot reach the SceneSound server at \(path) (is scenesoundd running?)"
        case .disconnected(let reason):
            "the connection to the SceneSound server was lost: \(reason)"
        case .server(let code, let message):
            "the server refused: \(message.isEmpty ? code.name : message) (\(code.name))"
        case .streamFailed(let streamID, let code, let message):
            "stream \(streamID) failed: \(message.isEmpty ? code.name : message) (\(code.name))"
        case .streamEnded(let streamID, let reason):
            "stream \(streamID) was ended by the server (\(reason.name))"
        case .streamClosed(let streamID):
            "stream \(streamID) is closed"
        case .timedOut(let operation, let seconds):
            "\(operation) timed out after \(seconds) s"
        case .cancelled(let operation):
            "\(operation) was cancelled"
        case .invalidArgument(let detail):
            detail
        case .protocolViolation(let detail):
            "the server broke the protocol: \(detail)"
        }
    }

    /// A protocol-level validation failure found before sending.
    init(_ error: ProtocolError) {
        self = .invalidArgument(error.detail)
    }
}

extension StreamEndReason {
    /// The snake_case name used in SPEC.md.
    public var name: String {
        switch self {
        case .drained: "drained"
        case .serverShutdown: "server_shutdown"
        case .removedByServer: "removed_by_server"
        }
    }
}
