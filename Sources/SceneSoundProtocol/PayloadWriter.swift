/// Appends wire fields to a payload; the counterpart of `PayloadReader`.
/// Strings longer than their length prefix allows are a programming error (validate first).
extension Array where Element == UInt8 {
    mutating func writeU8(_ value: UInt8) { append(value) }
    mutating func writeU16(_ value: UInt16) { appendLittleEndian(value) }
    mutating func writeU32(_ value: UInt32) { appendLittleEndian(value) }
    mutating func writeU64(_ value: UInt64) { appendLittleEndian(value) }
    mutating func writeF32(_ value: Float) { appendLittleEndian(value.bitPattern) }
    mutating func writeBool(_ value: Bool) { append(value ? 1 : 0) }

    mutating func writeShortString(_ value: String) {
        let utf8 = value.utf8
        precondition(utf8.count <= ProtocolLimits.maxShortStringBytes, "str8 longer than 255 bytes")
        append(UInt8(utf8.count))
        append(contentsOf: utf8)
    }

    mutating func writeLongString(_ value: String) {
        let utf8 = value.utf8
        precondition(utf8.count <= Int(UInt16.max), "str16 longer than 65535 bytes")
        appendLittleEndian(UInt16(utf8.count))
        append(contentsOf: utf8)
    }
}
