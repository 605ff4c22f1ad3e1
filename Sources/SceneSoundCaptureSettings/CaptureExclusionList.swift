import Foundation

/// The apps `--capture-apps` leaves alone by the user's choice (`scenesound apps exclude NAME`),
/// kept across restarts in `$XDG_CONFIG_HOME/scenesound/capture-exclude`: one binary or
/// application name per line, `#` starts a comment. The CLI writes it; the daemon reads it at
/// start and whenever it changes. One type for both, so they cannot disagree on the format.
public struct CaptureExclusionList: Equatable, Sendable {
    public private(set) var names: [String]

    public init(names: [String] = []) {
        self.names = []
        names.forEach { _ = add($0) }
    }

    /// The file, from the environment: `$XDG_CONFIG_HOME` if absolute, else `$HOME/.config`.
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        CaptureSettingsFile.path("capture-exclude", environment: environment)
    }

    /// A name as the list keeps it, or why it cannot be one.
    public static func validate(_ name: String) -> Result<String, InvalidName> {
        let trimmed = name.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { return .failure(InvalidName(message: "an empty name")) }
        guard !trimmed.contains(where: \.isNewline), !trimmed.hasPrefix("#") else {
            return .failure(InvalidName(message: "'\(name)' cannot be a line of the list (no line breaks, no leading #)"))
        }
        return .success(trimmed)
    }

    public struct InvalidName: Error, Equatable {
        public let message: String
    }

    /// false if it was already there (or is not a valid name).
    public mutating func add(_ name: String) -> Bool {
        guard case .success(let valid) = Self.validate(name), !names.contains(valid) else { return false }
        names.append(valid)
        return true
    }

    /// false if it was not there.
    public mutating func remove(_ name: String) -> Bool {
        let trimmed = name.trimmingCharacters(in: .whitespaces)
        guard let index = names.firstIndex(of: trimmed) else { return false }
        names.remove(at: index)
        return true
    }

    public init(text: String) {
        self.init(names: text.split(whereSeparator: \.isNewline).map(String.init).filter {
            !$0.trimmingCharacters(in: .whitespaces).hasPrefix("#")
        })
    }

    public var text: String {
        "# Apps scenesoundd --capture-apps leaves alone (binary or application name), one a line.\n"
            + names.map { $0 + "\n" }.joined()
    }

    /// An absent file is an empty list.
    public static func load(path: String) throws -> CaptureExclusionList {
        guard FileManager.default.fileExists(atPath: path) else { return CaptureExclusionList() }
        return CaptureExclusionList(text: try String(contentsOfFile: path, encoding: .utf8))
    }

    public func save(path: String) throws {
        try CaptureSettingsFile.write(text, to: path)
    }
}
