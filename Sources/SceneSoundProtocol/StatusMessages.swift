// STATUS_REQUEST has no payload and is represented by `Message.statusRequest`.

/// `STATUS_REPLY`: the server's status as a UTF-8 JSON document filling the whole payload, so
/// that the status schema can grow without a protocol change. The codec checks UTF-8 only.
public struct StatusReply: WirePayload {
    public var json: String

    public init(json: String) { self.json = json }

    init(reading reader: inout PayloadReader) throws(ProtocolError) {
        json = try reader.readRemainingString()
    }

    func write(into bytes: inout [UInt8]) { bytes.append(contentsOf: json.utf8) }

    public func validate() throws(ProtocolError) { try Check.noNUL(json, "json") }
}
