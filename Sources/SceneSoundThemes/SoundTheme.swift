import Foundation

/// What a sound-theme lookup found.
public enum SoundLookupResult: Equatable, Sendable {
    /// A playable file.
    case found(path: String)
    /// The theme switched the sound off with a `NAME.disabled` file: play silence, do not fall
    /// back to a parent theme.
    case disabled(path: String)
    /// Nothing anywhere; the theme directories that were searched, for the error message.
    case notFound(searchedDirectories: [String])
}

/// Finds a sound by its event id (`bell`, `dialog-warning`, …) following the freedesktop
/// Sound Theme and Sound Naming specifications.
///
/// Order, most specific first: the full name before its shortened forms; the user's locale
/// (`de_DE` → `de`) before unlocalised files; the theme before the themes it inherits, with
/// `freedesktop` always last; the requested output profile before `stereo`; `$XDG_DATA_HOME`
/// before `$XDG_DATA_DIRS`. Finally an unthemed `sounds/NAME.EXT`.
public enum SoundTheme {
    public static let fallbackThemeName = "freedesktop"
    /// `.disabled` first: in any directory it outranks a sound file beside it.
    public static let extensions = ["disabled", "oga", "ogg", "wav"]

    public static func lookup(name: String, theme: String = fallbackThemeName,
                              environment: [String: String] = ProcessInfo.processInfo.environment,
                              outputProfile: String = "stereo") -> SoundLookupResult {
        let directories = SoundDataDirectories(environment: environment)
        let chain = themeChain(startingAt: theme, in: directories)
        let profiles = outputProfile == "stereo" ? ["stereo"] : [outputProfile, "stereo"]
        let locales: [String?] = LookupVariants.locales(environment: environment) + [nil]
        guard isPlainName(name) else { return .notFound(searchedDirectories: searched(chain, directories)) }

        for candidate in LookupVariants.names(for: name) {
            for locale in locales {
                for (themeName, index) in chain {
                    for profile in profiles {
                        for directory in index.directories where directory.outputProfile == profile {
                            for base in directories.soundDirectories {
                                var folder = "\(base)/\(themeName)/\(directory.name)"
                                if let locale { folder += "/\(locale)" }
                                if let result = file(named: candidate, in: folder) { return result }
                            }
                        }
                    }
                }
            }
            // Unthemed sounds straight in a sounds directory (the spec's last resort).
            for base in directories.soundDirectories {
                if let result = file(named: candidate, in: base) { return result }
            }
        }
        return .notFound(searchedDirectories: searched(chain, directories))
    }

    /// The theme, then its parents depth-first in `Inherits` order, then `freedesktop`; each
    /// once, and only themes that have an `index.theme` somewhere.
    public static func themeChain(startingAt theme: String, in directories: SoundDataDirectories) -> [(String, ThemeIndex)] {
        var chain: [(String, ThemeIndex)] = []
        var visited = Set<String>()
        func visit(_ name: String) {
            guard isPlainName(name), visited.insert(name).inserted, let index = readIndex(name, in: directories) else { return }
            chain.append((name, index))
            index.inherits.forEach(visit)
        }
        visit(theme)
        visit(fallbackThemeName)
        return chain
    }

    /// The first `index.theme` of that theme in base-directory order.
    static func readIndex(_ theme: String, in directories: SoundDataDirectories) -> ThemeIndex? {
        for base in directories.soundDirectories {
            if let text = try? String(contentsOfFile: "\(base)/\(theme)/index.theme", encoding: .utf8) {
                return ThemeIndex(text: text)
            }
        }
        return nil
    }

    private static func file(named name: String, in folder: String) -> SoundLookupResult? {
        for ext in extensions {
            let path = "\(folder)/\(name).\(ext)"
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            return ext == "disabled" ? .disabled(path: path) : .found(path: path)
        }
        return nil
    }

    /// The theme directories that exist (or, when none does, where the theme was looked for).
    private static func searched(_ chain: [(String, ThemeIndex)], _ directories: SoundDataDirectories) -> [String] {
        let existing = chain.flatMap { theme in
            directories.soundDirectories.map { "\($0)/\(theme.0)" }.filter { FileManager.default.fileExists(atPath: $0) }
        }
        return existing.isEmpty ? directories.soundDirectories : existing
    }

    /// Names and theme names are single path components: no `/`, not `.` or `..`.
    static func isPlainName(_ name: String) -> Bool {
        !name.isEmpty && !name.contains("/") && name != "." && name != ".." && !name.contains("\0")
    }
}
