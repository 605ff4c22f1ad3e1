/// A tiny JSON writer for the vector manifest: deterministic (keys keep their order), so the
/// manifest on disk can be compared byte for byte with what the catalog produces.
indirect enum JSONText {
    case integer(Int64)
    case float(Float)
    case string(String)
    case bool(Bool)
    case array([JSONText])
    case object([(String, JSONText)])

    static func uint(_ value: some BinaryInteger) -> JSONText { .integer(Int64(value)) }

    func rendered(indent: Int = 0) -> String {
        let pad = String(repeating: "  ", count: indent)
        let innerPad = String(repeating: "  ", count: indent + 1)
        switch self {
        case .integer(let value): return String(value)
        // Float's description is the shortest decimal that reads back as the same Float32.
        case .float(let value): return value.description
        case .string(let value): return Self.quoted(value)
        case .bool(let value): return value ? "true" : "false"
        case .array(let items):
            if items.isEmpty { return "[]" }
            let body = items.map { innerPad + $0.rendered(indent: indent + 1) }.joined(separator: ",\n")
            return "[\n\(body)\n\(pad)]"
        case .object(let members):
            if members.isEmpty { return "{}" }
            let body = members.map { "\(innerPad)\(Self.quoted($0.0)): \($0.1.rendered(indent: indent + 1))" }
                .joined(separator: ",\n")
            return "{\n\(body)\n\(pad)}"
        }
    }

    private static func quoted(_ string: String) -> String {
        var out = "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

func hexString(_ bytes: some Sequence<UInt8>) -> String {
    bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
}
