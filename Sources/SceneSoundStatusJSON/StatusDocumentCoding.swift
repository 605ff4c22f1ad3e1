import Foundation
import SceneSoundProtocol

extension StatusDocument {
    /// The document's JSON as STATUS_REPLY carries it: one line, keys sorted, slashes as
    /// they are, a number that is not finite by name. For the whole document or any part of it.
    public static func jsonEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let names = nonFiniteNames
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: names.positiveInfinity, negativeInfinity: names.negativeInfinity, nan: names.nan)
        return encoder
    }

    /// Reads what `jsonEncoder()` writes.
    public static func jsonDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        let names = nonFiniteNames
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: names.positiveInfinity, negativeInfinity: names.negativeInfinity, nan: names.nan)
        return decoder
    }

    /// `value` (the document or a part of it) as one line of the document's JSON. Encoding
    /// plain structs of numbers, strings and arrays cannot fail.
    public static func jsonLine(_ value: some Encodable) -> String {
        String(decoding: (try? jsonEncoder().encode(value)) ?? Data("{}".utf8), as: UTF8.self)
    }
}
