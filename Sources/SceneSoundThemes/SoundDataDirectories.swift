import Foundation

/// The base directories sound themes live under (XDG Base Directory spec): `$XDG_DATA_HOME`
/// (default `~/.local/share`) first, then each of `$XDG_DATA_DIRS` (default
/// `/usr/local/share:/usr/share`), each with `sounds` appended. Earlier ones win.
public struct SoundDataDirectories: Equatable, Sendable {
    /// `…/sounds` directories, most important first.
    public var soundDirectories: [String]

    public init(soundDirectories: [String]) {
        self.soundDirectories = soundDirectories
    }

    public init(environment: [String: String]) {
        var bases: [String] = []
        if let home = environment["XDG_DATA_HOME"], home.hasPrefix("/") {
            bases.append(home)
        } else if let userHome = environment["HOME"], !userHome.isEmpty {
            bases.append(userHome + "/.local/share")
        }
        // Relative entries are invalid per the XDG spec and ignored.
        let dataDirs = (environment["XDG_DATA_DIRS"] ?? "").split(separator: ":").map(String.init).filter { $0.hasPrefix("/") }
        bases += dataDirs.isEmpty ? ["/usr/local/share", "/usr/share"] : dataDirs
        var seen = Set<String>()
        soundDirectories = bases
            .map { ($0.hasSuffix("/") ? String($0.dropLast()) : $0) + "/sounds" }
            .filter { seen.insert($0).inserted }
    }
}
