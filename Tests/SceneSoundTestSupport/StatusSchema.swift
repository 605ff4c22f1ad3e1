import Foundation
import SceneSoundProtocol
import SceneSoundStatusJSON

/// Reads a server's status JSON the way its readers do, through the shared `StatusDocument`,
/// and fails on any disagreement: a field the type needs and the server left out, a value of
/// the wrong type, or a key the server sent that the type does not know (which every reader
/// would silently drop).
public enum StatusSchema {
    public struct Mismatch: Error, CustomStringConvertible {
        public let description: String
    }

    public static func decode(_ json: String) throws -> StatusDocument {
        let decoder = StatusDocument.jsonDecoder()
        let document: StatusDocument
        do { document = try decoder.decode(StatusDocument.self, from: Data(json.utf8)) } catch {
            throw Mismatch(description: "the status does not decode as StatusDocument: \(error)\n\(json)")
        }
        let raw = try JSONSerialization.jsonObject(with: Data(json.utf8))
        let known = try JSONSerialization.jsonObject(with: StatusDocument.jsonEncoder().encode(document))
        let unknown = unknownKeys(raw, known, path: "")
        guard unknown.isEmpty else {
            throw Mismatch(description: "the server sent keys StatusDocument does not know: \(unknown.joined(separator: ", "))")
        }
        return document
    }

    /// Paths present in `raw` and missing from `known` (the same document re-encoded by the type).
    static func unknownKeys(_ raw: Any, _ known: Any, path: String) -> [String] {
        if let raw = raw as? [String: Any] {
            let known = known as? [String: Any] ?? [:]
            return raw.keys.sorted().flatMap { key -> [String] in
                guard let value = known[key] else { return [path + "." + key] }
                return unknownKeys(raw[key]!, value, path: path + "." + key)
            }
        }
        if let raw = raw as? [Any], let known = known as? [Any] {
            return zip(raw, known).enumerated().flatMap { index, pair in unknownKeys(pair.0, pair.1, path: path + "[\(index)]") }
        }
        return []
    }
}
