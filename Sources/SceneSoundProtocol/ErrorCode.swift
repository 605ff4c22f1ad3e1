/// A numeric error code as carried by `ERROR` and `STREAM_ERROR` (u16 on the wire).
///
/// A struct rather than an enum so that a peer can carry and print a code it does not know.
public struct ErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// Frame header invalid (reserved flags set, request id rule broken, connection closed mid-frame).
    public static let malformedFrame = ErrorCode(rawValue: 1)
    /// Frame length above the maximum frame size.
    public static let frameTooLarge = ErrorCode(rawValue: 2)
    /// No protocol version shared by client and server.
    public static let unsupportedVersion = ErrorCode(rawValue: 3)
    /// A message not allowed in this state or direction (anything before `HELLO`, a second `HELLO`,
    /// a server-to-client message sent by a client).
    public static let unexpectedMessage = ErrorCode(rawValue: 4)
    /// A message type number this version does not define.
    public static let unknownMessageType = ErrorCode(rawValue: 5)
    /// Payload truncated, trailing bytes, invalid UTF-8, NUL in a string, reserved bits set.
    public static let malformedPayload = ErrorCode(rawValue: 6)
    /// A field out of its range: unknown enum value, non-finite float, bad scene id, zero id.
    public static let invalidArgument = ErrorCode(rawValue: 7)
    /// Sample format, rate or channel count unsupported, or audio data not whole frames.
    public static let badFormat = ErrorCode(rawValue: 8)
    /// The stream id names no open stream of this connection.
    public static let unknownStream = ErrorCode(rawValue: 9)
    /// The scene id names no scene that can be unbound.
    public static let unknownScene = ErrorCode(rawValue: 10)
    /// No sample of that name in the server's cache.
    public static let unknownSound = ErrorCode(rawValue: 11)
    /// A server limit was reached (streams, sample bytes, message rate, ...).
    public static let limitExceeded = ErrorCode(rawValue: 12)
    /// Stream data beyond the credit the server granted.
    public static let creditExceeded = ErrorCode(rawValue: 13)
    /// The request is understood but refused (peer uid mismatch, binding an `x11:` scene, ...).
    public static let notPermitted = ErrorCode(rawValue: 14)
    /// A failure inside the server; the request may be retried.
    public static let internalError = ErrorCode(rawValue: 15)

    /// Every code version 1 defines, in numeric order.
    public static let allDefined: [ErrorCode] = [
        .malformedFrame, .frameTooLarge, .unsupportedVersion, .unexpectedMessage,
        .unknownMessageType, .malformedPayload, .invalidArgument, .badFormat, .unknownStream,
        .unknownScene, .unknownSound, .limitExceeded, .creditExceeded, .notPermitted, .internalError,
    ]

    /// Whether the server closes the connection after sending this error: the byte stream or
    /// the stream accounting can no longer be trusted. (`unexpectedMessage` is fatal only before
    /// the handshake completed; see SPEC.md.)
    public var closesConnection: Bool {
        switch self {
        case .malformedFrame, .frameTooLarge, .unsupportedVersion, .creditExceeded: true
        default: false
        }
    }

    /// The snake_case name used in SPEC.md and the vector manifest.
    public var name: String {
        switch self {
        case .malformedFrame: "malformed_frame"
        case .frameTooLarge: "frame_too_large"
        case .unsupportedVersion: "unsupported_version"
        case .unexpectedMessage: "unexpected_message"
        case .unknownMessageType: "unknown_message_type"
        case .malformedPayload: "malformed_payload"
        case .invalidArgument: "invalid_argument"
        case .badFormat: "bad_format"
        case .unknownStream: "unknown_stream"
        case .unknownScene: "unknown_scene"
        case .unknownSound: "unknown_sound"
        case .limitExceeded: "limit_exceeded"
        case .creditExceeded: "credit_exceeded"
        case .notPermitted: "not_permitted"
        case .internalError: "internal"
        default: "error_\(rawValue)"
        }
    }

    public var description: String { "\(name) (\(rawValue))" }
}
