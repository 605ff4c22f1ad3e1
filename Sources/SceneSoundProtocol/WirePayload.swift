/// What every message payload struct implements: its wire layout in both directions and the
/// range checks that decoding applies after parsing (clients may call `validate()` before sending).
protocol WirePayload: Equatable, Sendable {
    init(reading reader: inout PayloadReader) throws(ProtocolError)
    func write(into bytes: inout [UInt8])
    func validate() throws(ProtocolError)
}
