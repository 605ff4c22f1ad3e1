/// Why a frame or payload was rejected: the wire code to send back plus a human-readable detail.
public struct ProtocolError: Error, Equatable, Sendable, CustomStringConvertible {
    public var code: ErrorCode
    /// One line for logs and for the `message` field of the `ERROR` reply.
    public var detail: String

    public init(_ code: ErrorCode, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    public var description: String { "\(code.name): \(detail)" }
}
