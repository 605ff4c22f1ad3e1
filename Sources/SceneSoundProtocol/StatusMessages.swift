// STATUS_REQUEST has no payload and is represented by `Message.statusRequest`.

/// A payload that is one UTF-8 JSON document filling it whole, so that what it carries can grow
/// without a protocol change. The codec checks UTF-8 (and no NUL) only.
protocol JSONDocumentPayload: WirePayload {
    var json: String { get }
    init(json: String)
}

extension JSONDocumentPayload {
    init(reading reader: inout PayloadReader) throws(ProtocolError) {
        self.init(json: try reader.readRemainingString())
    }

    func write(into bytes: inout [UInt8]) { bytes.append(contentsOf: json.utf8) }

    public func validate() throws(ProtocolError) { try Check.noNUL(json, "json") }
}

/// `STATUS_REPLY`: the server's status document.
public struct StatusReply: JSONDocumentPayload {
    public var json: String

    public init(json: String) { self.json = json }
}
