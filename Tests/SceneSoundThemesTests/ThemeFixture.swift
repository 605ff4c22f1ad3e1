import Foundation

/// A temporary `XDG_DATA_HOME` with sound themes written into it, removed at deinit.
final class ThemeFixture {
    let dataHome: String

    init() throws {
        dataHome = NSTemporaryDirectory() + "scenesound-themes-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dataHome + "/sounds", withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: dataHome) }

    /// Writes `sounds/THEME/index.theme`.
    func theme(_ name: String, index: String) throws {
        try write("sounds/\(name)/index.theme", index)
    }

    /// Creates a (dummy) file below the data home; returns its path.
    @discardableResult
    func file(_ relativePath: String) throws -> String {
        try write(relativePath, "not audio; lookup only checks that it exists")
    }

    @discardableResult
    private func write(_ relativePath: String, _ text: String) throws -> String {
        let path = "\(dataHome)/\(relativePath)"
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent,
                                                withIntermediateDirectories: true)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// A lookup environment: this data home, the system's data dirs, and a locale.
    func environment(lang: String? = nil) -> [String: String] {
        var env = ["XDG_DATA_HOME": dataHome, "XDG_DATA_DIRS": "/usr/local/share:/usr/share", "HOME": "/nonexistent"]
        if let lang { env["LANG"] = lang }
        return env
    }
}
