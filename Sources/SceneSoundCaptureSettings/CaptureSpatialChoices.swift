import Foundation

/// The spatial mode the user chose for an app's captured streams (`scenesound apps spatial NAME
/// MODE`), kept across restarts in `$XDG_CONFIG_HOME/scenesound/capture-spatial`: one
/// `MODE NAME` a line (the name, a binary or application name, may hold spaces), `#` starts a
/// comment. Apps not listed play `anchored`, at their windows. The CLI writes it; the daemon
/// reads it at start and whenever it changes, and switches the app's streams as they play.
public struct CaptureSpatialChoices: Equatable, Sendable {
    /// The modes a captured app can play in, as the protocol names them.
    public static let modes = ["anchored", "head-locked", "off"]
    public static let defaultMode = "anchored"

    /// Name → mode; `anchored` is never kept (it is what an app not listed gets).
    public private(set) var modeByName: [String: String] = [:]

    public init() {}

    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        CaptureSettingsFile.path("capture-spatial", environment: environment)
    }

    /// Sets `name`'s mode; false if it was that already. `mode` must be one of `modes`.
    public mutating func set(_ name: String, mode: String) -> Bool {
        guard case .success(let valid) = CaptureExclusionList.validate(name), Self.modes.contains(mode) else { return false }
        let old = modeByName[valid] ?? Self.defaultMode
        modeByName[valid] = mode == Self.defaultMode ? nil : mode
        return old != mode
    }

    /// The mode for a stream of `binary` (looked up first) or `applicationName`, as exclusions match.
    public func mode(binary: String?, applicationName: String?) -> String {
        binary.flatMap { modeByName[$0] } ?? applicationName.flatMap { modeByName[$0] } ?? Self.defaultMode
    }

    /// Lines with an unknown mode or no name are skipped: a hand-edited file loses only them.
    public init(text: String) {
        for line in text.split(whereSeparator: \.isNewline) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard !trimmed.hasPrefix("#"), let space = trimmed.firstIndex(of: " ") else { continue }
            _ = set(String(trimmed[space...]), mode: String(trimmed[..<space]))
        }
    }

    public var text: String {
        "# Spatial modes of apps scenesoundd --capture-apps plays (anchored, head-locked, off), one 'MODE NAME' a line.\n"
            + modeByName.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)\n" }.joined()
    }

    /// An absent file is no choice made.
    public static func load(path: String) throws -> CaptureSpatialChoices {
        guard FileManager.default.fileExists(atPath: path) else { return CaptureSpatialChoices() }
        return CaptureSpatialChoices(text: try String(contentsOfFile: path, encoding: .utf8))
    }

    public func save(path: String) throws {
        try CaptureSettingsFile.write(text, to: path)
    }
}

/// Where the capture's settings files live, and how they are written: whole, to a temporary
/// file renamed over the old one, so the daemon never reads half of one.
enum CaptureSettingsFile {
    /// `$XDG_CONFIG_HOME/scenesound/NAME` if absolute, else `$HOME/.config/scenesound/NAME`.
    static func path(_ name: String, environment: [String: String]) -> String? {
        let base = environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? environment["HOME"].map { $0 + "/.config" }
        return base.map { $0 + "/scenesound/" + name }
    }

    static func write(_ text: String, to path: String) throws {
        let directory = (path as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }
}
