/// Range checks shared by the payload types' `validate()` methods.
enum Check {
    static func finite(_ value: Float, in range: ClosedRange<Float>, _ field: String) throws(ProtocolError) {
        guard value.isFinite, range.contains(value) else {
            throw ProtocolError(.invalidArgument, "\(field) \(value) outside \(range.lowerBound)...\(range.upperBound)")
        }
    }

    static func finite(_ value: Float, _ field: String) throws(ProtocolError) {
        guard value.isFinite else { throw ProtocolError(.invalidArgument, "\(field) is not finite") }
    }

    static func nonZero(_ value: UInt32, _ field: String) throws(ProtocolError) {
        guard value != 0 else { throw ProtocolError(.invalidArgument, "\(field) must not be 0") }
    }

    static func shortString(_ value: String, _ field: String, allowEmpty: Bool) throws(ProtocolError) {
        let count = value.utf8.count
        guard count <= ProtocolLimits.maxShortStringBytes else {
            throw ProtocolError(.invalidArgument, "\(field) is \(count) bytes, at most 255 allowed")
        }
        guard allowEmpty || count > 0 else { throw ProtocolError(.invalidArgument, "\(field) must not be empty") }
        try noNUL(value, field)
    }

    static func longString(_ value: String, _ field: String) throws(ProtocolError) {
        guard value.utf8.count <= Int(UInt16.max) else {
            throw ProtocolError(.invalidArgument, "\(field) longer than 65535 bytes")
        }
        try noNUL(value, field)
    }

    static func noNUL(_ value: String, _ field: String) throws(ProtocolError) {
        if value.utf8.contains(0) { throw ProtocolError(.invalidArgument, "\(field) contains NUL") }
    }
}
