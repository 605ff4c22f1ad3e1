import SceneSoundClient
import SceneSoundProtocol

/// The `int` status codes of scenesound.h. Client-side codes are -1 … -99; a server refusal is
/// -(100 + its protocol error code), so new server codes need no new mapping.
enum StatusCode {
    static let ok: Int32 = 0
    static let invalidArgument: Int32 = -1
    static let closed: Int32 = -2
    static let noSocketPath: Int32 = -3
    static let cannotConnect: Int32 = -4
    static let disconnected: Int32 = -5
    static let timedOut: Int32 = -6
    static let streamFailed: Int32 = -7
    static let protocolViolation: Int32 = -8
    static let noResources: Int32 = -9
    static let wrongThread: Int32 = -10
    static let notPullStream: Int32 = -11
    static let internalError: Int32 = -99
    static let serverBase: Int32 = -100

    static func server(_ code: ErrorCode) -> Int32 { serverBase - Int32(code.rawValue) }
    static let badFormat = server(.badFormat)
    static let unknownScene = server(.unknownScene)
}

/// A failure on its way back to C: the code returned, the detail kept for
/// `scenesound_last_error_message`.
struct CFailure: Error {
    var code: Int32
    var message: String

    init(_ code: Int32, _ message: String) {
        self.code = code
        self.message = message
    }

    init(_ error: ClientError) {
        message = error.description
        switch error {
        case .noSocketPath: code = StatusCode.noSocketPath
        case .cannotConnect: code = StatusCode.cannotConnect
        case .disconnected: code = StatusCode.disconnected
        case .server(let serverCode, _): code = StatusCode.server(serverCode)
        case .streamFailed, .streamEnded: code = StatusCode.streamFailed
        case .streamClosed: code = StatusCode.closed
        case .timedOut: code = StatusCode.timedOut
        case .cancelled: code = StatusCode.internalError
        case .invalidArgument: code = StatusCode.invalidArgument
        case .protocolViolation: code = StatusCode.protocolViolation
        }
    }

    static func invalid(_ message: String) -> CFailure { CFailure(StatusCode.invalidArgument, message) }
}

/// `scenesound_strerror`: static text, so the pointer stays valid forever.
func staticDescription(of status: Int32) -> StaticString {
    switch status {
    case StatusCode.ok: "success"
    case StatusCode.invalidArgument: "invalid argument"
    case StatusCode.closed: "the handle is closed or not valid"
    case StatusCode.noSocketPath: "no socket path: set SCENESOUND_SOCKET or XDG_RUNTIME_DIR, or pass one"
    case StatusCode.cannotConnect: "cannot reach the SceneSound server (is scenesoundd running?)"
    case StatusCode.disconnected: "the connection to the SceneSound server was lost"
    case StatusCode.timedOut: "the server did not answer in time"
    case StatusCode.streamFailed: "the server failed or ended the stream"
    case StatusCode.protocolViolation: "the server broke the protocol"
    case StatusCode.noResources: "out of memory or threads"
    case StatusCode.wrongThread: "this call would wait for itself on this thread"
    case StatusCode.notPullStream: "a callback stream takes its audio from its callback, not from writes"
    case StatusCode.internalError: "internal error in libscenesound"
    case StatusCode.serverBase - 1: "server: malformed frame"
    case StatusCode.serverBase - 2: "server: frame too large"
    case StatusCode.serverBase - 3: "server: unsupported protocol version"
    case StatusCode.serverBase - 4: "server: unexpected message"
    case StatusCode.serverBase - 5: "server: unknown message type"
    case StatusCode.serverBase - 6: "server: malformed payload"
    case StatusCode.serverBase - 7: "server: invalid argument"
    case StatusCode.serverBase - 8: "bad audio format (sample format, rate, channels or partial frames)"
    case StatusCode.serverBase - 9: "server: unknown stream"
    case StatusCode.serverBase - 10: "unknown scene"
    case StatusCode.serverBase - 11: "unknown sound: upload the sample first"
    case StatusCode.serverBase - 12: "a server limit was exceeded"
    case StatusCode.serverBase - 13: "server: credit exceeded"
    case StatusCode.serverBase - 14: "not permitted"
    case StatusCode.serverBase - 15: "internal error in the server"
    default: status < StatusCode.serverBase ? "the server refused the request" : "unknown status code"
    }
}
