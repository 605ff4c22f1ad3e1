/// Reads wire fields from a payload, front to back, failing with `malformed_payload` on
/// truncation. `finish()` rejects trailing bytes, so every payload is consumed exactly.
struct PayloadReader {
    private let bytes: ArraySlice<UInt8>
    private var index: Int
    private let messageName: String
    /// The protocol version agreed on the connection (the layout of some payloads depends on it).
    let version: UInt16

    init(_ bytes: ArraySlice<UInt8>, messageName: String, version: UInt16 = 1) {
        self.bytes = bytes
        self.index = bytes.startIndex
        self.messageName = messageName
        self.version = version
    }

    private var remaining: Int { bytes.endIndex - index }

    mutating func readU8() throws(ProtocolError) -> UInt8 {
        try require(1, for: "u8")
        defer { index += 1 }
        return bytes[index]
    }

    mutating func readU16() throws(ProtocolError) -> UInt16 { try readInteger(UInt16.self) }
    mutating func readU32() throws(ProtocolError) -> UInt32 { try readInteger(UInt32.self) }
    mutating func readU64() throws(ProtocolError) -> UInt64 { try readInteger(UInt64.self) }
    mutating func readF32() throws(ProtocolError) -> Float { Float(bitPattern: try readU32()) }

    /// A u8 enumeration: an unknown value is `invalid_argument`, naming the field and `accepted`.
    mutating func readEnum<Value: RawRepresentable>(_ type: Value.Type, field: String, accepted: String)
        throws(ProtocolError) -> Value where Value.RawValue == UInt8 {
        let wire = try readU8()
        guard let value = Value(rawValue: wire) else {
            throw ProtocolError(.invalidArgument, "\(messageName): \(field) \(wire) unknown (accepted: \(accepted))")
        }
        return value
    }

    /// A u8 that must be 0 or 1.
    mutating func readBool() throws(ProtocolError) -> Bool {
        switch try readU8() {
        case 0: return false
        case 1: return true
        case let other: throw malformed("boolean byte \(other) is neither 0 nor 1")
        }
    }

    /// `str8`: u8 byte count, then UTF-8.
    mutating func readShortString() throws(ProtocolError) -> String {
        let count = Int(try readU8())
        return try readUTF8(count: count)
    }

    /// `str16`: u16 byte count, then UTF-8.
    mutating func readLongString() throws(ProtocolError) -> String {
        let count = Int(try readU16())
        return try readUTF8(count: count)
    }

    /// Everything left in the payload as UTF-8 (used for the status JSON document).
    mutating func readRemainingString() throws(ProtocolError) -> String {
        try readUTF8(count: remaining)
    }

    /// Everything left in the payload as raw bytes (audio); shares the payload's storage.
    mutating func readRemainingBytes() -> ArraySlice<UInt8> {
        defer { index = bytes.endIndex }
        return bytes[index...]
    }

    func finish() throws(ProtocolError) {
        if remaining != 0 { throw malformed("\(remaining) trailing bytes") }
    }

    private mutating func readUTF8(count: Int) throws(ProtocolError) -> String {
        try require(count, for: "string of \(count) bytes")
        let utf8 = bytes[index..<index + count]
        index += count
        guard let string = String(validating: utf8, as: UTF8.self) else {
            throw malformed("string is not valid UTF-8")
        }
        // NUL is refused so that every string can cross the C library boundary unchanged.
        if utf8.contains(0) { throw malformed("string contains NUL") }
        return string
    }

    private mutating func readInteger<T: FixedWidthInteger>(_: T.Type) throws(ProtocolError) -> T {
        let size = MemoryLayout<T>.size
        try require(size, for: "u\(size * 8)")
        var value: T = 0
        for offset in 0..<size {
            value |= T(bytes[index + offset]) << (offset * 8)
        }
        index += size
        return value
    }

    private func require(_ count: Int, for what: String) throws(ProtocolError) {
        if remaining < count { throw malformed("truncated: \(what) needs \(count) bytes, \(remaining) left") }
    }

    private func malformed(_ detail: String) -> ProtocolError {
        ProtocolError(.malformedPayload, "\(messageName): \(detail)")
    }
}
