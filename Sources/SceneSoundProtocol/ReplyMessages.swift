// Generic replies. OK carries no payload and is represented by `Message.ok`.

/// `ERROR` (server → client): the request with the frame's request id failed, or, with request
/// id 0, something not tied to a request (a one-way message, or the reason the connection closes).
public struct ErrorReply: WirePayload {
    public var code: ErrorCode
    public var message: String

    public init(code: ErrorCode, message: String) {
        self.code = code
        self.message = message
    }

    public init(_ error: ProtocolError) {
        self.init(code: error.code, message: error.detail)
    }

    init(reading reader: inout PayloadReader) throws(ProtocolError) {
        code = ErrorCode(rawValue: try reader.readU16())
        message = try reader.readLongString()
    }

    func write(into bytes: inout [UInt8]) {
        bytes.writeU16(code.rawValue)
        bytes.writeLongString(message)
    }

    /// Unknown codes are accepted: a client prints what it cannot interpret.
    public func validate() throws(ProtocolError) {
        try Check.nonZero(UInt32(code.rawValue), "code")
        try Check.longString(message, "message")
    }
}
