import CSystemd
import Glibc

/// Basic values into a message and any values out of one, through sd-bus's non-variadic calls
/// (Swift cannot call `sd_bus_message_append`/`read`).
enum DBusMessageCoding {
    static func append(_ values: [DBusValue], to message: OpaquePointer) throws(DBusError) {
        for value in values {
            let result: Int32
            guard let code = value.basicTypeCode else {
                throw .invalidArguments("only basic values can be sent, not \(value)")
            }
            let type = CChar(bitPattern: code)
            switch value {
            case .string(let text), .objectPath(let text):
                // Strings are passed as the pointer itself, not a pointer to it.
                result = text.withCString { sd_bus_message_append_basic(message, type, $0) }
            case .bool(let flag):
                var integer: Int32 = flag ? 1 : 0
                result = sd_bus_message_append_basic(message, type, &integer)
            case .byte(var number): result = sd_bus_message_append_basic(message, type, &number)
            case .int32(var number): result = sd_bus_message_append_basic(message, type, &number)
            case .uint32(var number): result = sd_bus_message_append_basic(message, type, &number)
            case .int64(var number): result = sd_bus_message_append_basic(message, type, &number)
            case .uint64(var number): result = sd_bus_message_append_basic(message, type, &number)
            case .double(var number): result = sd_bus_message_append_basic(message, type, &number)
            case .array, .structure, .variant: result = -Int32(Glibc.EINVAL)
            }
            if result < 0 { throw DBusError(errno: -result, doing: "appending \(value)") }
        }
    }

    /// Every value from the read position to the end of the current container.
    static func readAll(_ message: OpaquePointer) throws(DBusError) -> [DBusValue] {
        var values: [DBusValue] = []
        while true {
            var type: CChar = 0
            var contents: UnsafePointer<CChar>?
            let peeked = sd_bus_message_peek_type(message, &type, &contents)
            if peeked < 0 { throw DBusError(errno: -peeked, doing: "reading a message") }
            if peeked == 0 { return values }
            values.append(try read(message, type: UInt8(bitPattern: type), contents: contents))
        }
    }

    private static func read(_ message: OpaquePointer, type: UInt8, contents: UnsafePointer<CChar>?) throws(DBusError) -> DBusValue {
        let code = CChar(bitPattern: type)
        switch type {
        case UInt8(ascii: "a"), UInt8(ascii: "r"), UInt8(ascii: "e"), UInt8(ascii: "v"):
            let entered = sd_bus_message_enter_container(message, code, contents)
            if entered < 0 { throw DBusError(errno: -entered, doing: "reading a container") }
            let inner = try readAll(message)
            let exited = sd_bus_message_exit_container(message)
            if exited < 0 { throw DBusError(errno: -exited, doing: "reading a container") }
            switch type {
            case UInt8(ascii: "a"): return .array(inner)
            case UInt8(ascii: "v"):
                guard inner.count == 1 else { throw .invalidArguments("a variant holding \(inner.count) values") }
                return .variant(inner[0])
            default: return .structure(inner)
            }
        case UInt8(ascii: "s"), UInt8(ascii: "o"), UInt8(ascii: "g"):
            var text: UnsafePointer<CChar>?
            try check(sd_bus_message_read_basic(message, code, &text))
            let string = text.map { String(cString: $0) } ?? ""
            return type == UInt8(ascii: "o") ? .objectPath(string) : .string(string)
        case UInt8(ascii: "b"):
            var flag: Int32 = 0
            try check(sd_bus_message_read_basic(message, code, &flag))
            return .bool(flag != 0)
        case UInt8(ascii: "y"): return .byte(try readNumber(message, code, UInt8.self))
        case UInt8(ascii: "n"): return .int32(Int32(try readNumber(message, code, Int16.self)))
        case UInt8(ascii: "q"): return .uint32(UInt32(try readNumber(message, code, UInt16.self)))
        case UInt8(ascii: "i"): return .int32(try readNumber(message, code, Int32.self))
        case UInt8(ascii: "u"): return .uint32(try readNumber(message, code, UInt32.self))
        case UInt8(ascii: "x"): return .int64(try readNumber(message, code, Int64.self))
        case UInt8(ascii: "t"): return .uint64(try readNumber(message, code, UInt64.self))
        case UInt8(ascii: "d"): return .double(try readNumber(message, code, Double.self))
        default:
            // Unix fds ('h') and anything newer: not something the window backends receive.
            throw .invalidArguments("unsupported D-Bus type '\(Character(Unicode.Scalar(type)))'")
        }
    }

    private static func readNumber<Number: Numeric>(_ message: OpaquePointer, _ code: CChar, _: Number.Type) throws(DBusError) -> Number {
        var number: Number = 0
        try check(sd_bus_message_read_basic(message, code, &number))
        return number
    }

    private static func check(_ result: Int32) throws(DBusError) {
        if result < 0 { throw DBusError(errno: -result, doing: "reading a message") }
    }
}
