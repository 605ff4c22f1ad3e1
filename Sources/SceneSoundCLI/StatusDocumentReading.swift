import Foundation
import SceneSoundClient
import SceneSoundProtocol
import SceneSoundStatusJSON

extension StatusDocument {
    /// Reads the server's status text through the shared schema; a document that does not fit
    /// (another schema version, a field missing) is one line naming what did not fit.
    init(json: String) throws {
        let decoder = Self.jsonDecoder()
        struct Versioned: Decodable { var version: Int? }
        let version = (try? decoder.decode(Versioned.self, from: Data(json.utf8)))?.version
        guard version == Self.currentVersion else {
            throw RuntimeError("the server's status has schema version \(version.map(String.init) ?? "none"), this scenesound reads version \(Self.currentVersion); see 'scenesound status --json'")
        }
        do {
            self = try decoder.decode(StatusDocument.self, from: Data(json.utf8))
        } catch let DecodingError.keyNotFound(key, context) {
            throw RuntimeError("the server's status has no '\(Self.path(context.codingPath + [key]))'; see 'scenesound status --json'")
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context) {
            throw RuntimeError("the server's status has an unexpected '\(Self.path(context.codingPath))'; see 'scenesound status --json'")
        } catch {
            throw RuntimeError("the server's status is not valid JSON; see 'scenesound status --json'")
        }
    }

    private static func path(_ keys: [any CodingKey]) -> String {
        keys.map { $0.intValue.map { "[\($0)]" } ?? "." + $0.stringValue }.joined().trimmingCharacters(in: CharacterSet(charactersIn: "."))
    }
}

extension ClientConnection {
    /// The server's status, read through the shared schema.
    func statusDocument() throws -> StatusDocument {
        try StatusDocument(json: try withClientErrors { () throws(ClientError) in try status() })
    }
}
