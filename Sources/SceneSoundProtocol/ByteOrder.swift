/// Little-endian loads and stores on byte arrays; every multi-byte wire field goes through these.
extension Array where Element == UInt8 {
    mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
        var remaining = value.littleEndian
        Swift.withUnsafeBytes(of: &remaining) { append(contentsOf: $0) }
    }

    mutating func storeLittleEndian<T: FixedWidthInteger>(_ value: T, at offset: Int) {
        Swift.withUnsafeBytes(of: value.littleEndian) { source in
            for (i, byte) in source.enumerated() { self[offset + i] = byte }
        }
    }

    func loadLittleEndian<T: FixedWidthInteger>(_: T.Type, at offset: Int) -> T {
        withUnsafeBytes { T(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: T.self)) }
    }
}
