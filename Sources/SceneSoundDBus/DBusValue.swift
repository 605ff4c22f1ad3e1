/// One D-Bus value, as read from a message or appended to one: the basic types, plus the
/// containers a reply may carry (read only: calls send basic arguments).
public indirect enum DBusValue: Equatable, Sendable {
    case string(String)
    case objectPath(String)
    case bool(Bool)
    case byte(UInt8)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    /// Arrays and dictionaries (an array of `.structure` entries) as read.
    case array([DBusValue])
    case structure([DBusValue])
    case variant(DBusValue)

    public var string: String? {
        switch self {
        case .string(let value), .objectPath(let value): value
        case .variant(let value): value.string
        default: nil
        }
    }

    /// Any integer type that fits, so that callers need not know whether a peer answers `i` or `u`.
    public var integer: Int? {
        switch self {
        case .byte(let value): Int(value)
        case .int32(let value): Int(value)
        case .uint32(let value): Int(value)
        case .int64(let value): Int(value)
        case .uint64(let value): Int(exactly: value)
        case .variant(let value): value.integer
        default: nil
        }
    }

    public var bool: Bool? {
        switch self {
        case .bool(let value): value
        case .variant(let value): value.bool
        default: nil
        }
    }

    /// The D-Bus type code of a basic value; nil for containers.
    var basicTypeCode: UInt8? {
        switch self {
        case .string: UInt8(ascii: "s")
        case .objectPath: UInt8(ascii: "o")
        case .bool: UInt8(ascii: "b")
        case .byte: UInt8(ascii: "y")
        case .int32: UInt8(ascii: "i")
        case .uint32: UInt8(ascii: "u")
        case .int64: UInt8(ascii: "x")
        case .uint64: UInt8(ascii: "t")
        case .double: UInt8(ascii: "d")
        case .array, .structure, .variant: nil
        }
    }
}
