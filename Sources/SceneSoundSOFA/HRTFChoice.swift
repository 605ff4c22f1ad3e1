import Foundation

/// The HRTF set last chosen with `scenesound hrtf use`, kept across restarts in
/// `$XDG_STATE_HOME/scenesound/hrtf` (else `$HOME/.local/state/scenesound/hrtf`): one line, the
/// set's absolute path. The daemon writes it after each switch and starts with it unless
/// `--hrtf` (or the config's `hrtf`) names a set.
public struct HRTFChoice: Sendable {
    public var filePath: String

    public init(filePath: String) { self.filePath = filePath }

    /// The file, from the environment (nil without an absolute XDG_STATE_HOME or HOME).
    public init?(environment: [String: String] = ProcessInfo.processInfo.environment) {
        let base = environment["XDG_STATE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? environment["HOME"].flatMap { $0.hasPrefix("/") ? $0 + "/.local/state" : nil }
        guard let base else { return nil }
        filePath = base + "/scenesound/hrtf"
    }

    /// The chosen set's path, if one was chosen.
    public func read() -> String? {
        guard let text = try? String(contentsOfFile: filePath, encoding: .utf8) else { return nil }
        let path = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return path.hasPrefix("/") ? path : nil
    }

    /// Keeps `path` as the choice (written whole, then renamed over the old one).
    public func write(_ path: String) throws {
        let directory = (filePath as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let temporary = filePath + ".new"
        try Data((path + "\n").utf8).write(to: URL(fileURLWithPath: temporary))
        guard rename(temporary, filePath) == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: filePath])
        }
    }
}
