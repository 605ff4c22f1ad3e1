import Foundation

/// A theme's `index.theme` (freedesktop Sound Theme spec): its parents and its directories
/// with their output profiles. Only the keys lookup needs are kept.
public struct ThemeIndex: Equatable, Sendable {
    public struct Directory: Equatable, Sendable {
        public var name: String
        /// `stereo`, `5.1`, `mono`, …; the spec's default is `stereo`.
        public var outputProfile: String
    }

    public var name: String?
    public var inherits: [String]
    public var directories: [Directory]

    /// Parses the desktop-entry-style text. Unknown groups and keys are ignored, as the spec asks.
    public init(text: String) {
        var groups: [String: [String: String]] = [:]
        var current: String?
        for rawLine in text.split(whereSeparator: \.isNewline) {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("[") && line.hasSuffix("]") {
                current = String(line.dropFirst().dropLast())
                continue
            }
            guard let group = current, let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces)
            let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            // Localised keys (Name[de]=…) never matter for lookup.
            if groups[group]?[key] == nil { groups[group, default: [:]][key] = value }
        }
        let main = groups["Sound Theme"] ?? [:]
        name = main["Name"]
        inherits = Self.list(main["Inherits"])
        directories = Self.list(main["Directories"]).map { directory in
            Directory(name: directory, outputProfile: groups[directory]?["OutputProfile"] ?? "stereo")
        }
    }

    static func list(_ value: String?) -> [String] {
        (value ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}
