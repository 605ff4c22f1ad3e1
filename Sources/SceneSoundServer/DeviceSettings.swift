import Foundation
import SceneSoundEngine

extension RenderPreference: Codable {}

/// What the listener chose for one output device: its spatial mode (`scenesound spatial`), HRTF
/// set (`hrtf use`), headphone EQ (`eq use`) and rendering (`device render`). nil: not chosen,
/// the defaults apply (for the rendering: `--render`).
public struct DeviceSettings: Codable, Equatable, Sendable {
    public var spatial: OutputRendering.Spatial?
    public var hrtfPath: String?
    /// An AutoEQ file, or "" for none.
    public var headphoneEQPath: String?
    public var render: RenderPreference?

    public init(spatial: OutputRendering.Spatial? = nil, hrtfPath: String? = nil, headphoneEQPath: String? = nil,
                render: RenderPreference? = nil) {
        self.spatial = spatial
        self.hrtfPath = hrtfPath
        self.headphoneEQPath = headphoneEQPath
        self.render = render
    }

    enum CodingKeys: String, CodingKey {
        case spatial, hrtfPath = "hrtf", headphoneEQPath = "headphone_eq", render
    }

    /// `--device-defaults` (key `device_defaults`): what a device not seen before starts with,
    /// as `spatial=off|fixed|head-tracked,hrtf=FILE.sofa,eq=FILE|none` (any of the three, in any
    /// order; paths absolute).
    public init(parsingDefaults text: String) throws(DeviceDefaultsError) {
        self.init()
        for item in text.split(separator: ",", omittingEmptySubsequences: true) {
            let parts = item.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2 else { throw DeviceDefaultsError(item: String(item)) }
            switch parts[0] {
            case "spatial":
                guard let spatial = OutputRendering.Spatial(rawValue: parts[1]) else { throw DeviceDefaultsError(item: String(item)) }
                self.spatial = spatial
            case "hrtf":
                guard parts[1].hasPrefix("/") else { throw DeviceDefaultsError(item: String(item)) }
                hrtfPath = parts[1]
            case "eq":
                guard parts[1] == "none" || parts[1].hasPrefix("/") else { throw DeviceDefaultsError(item: String(item)) }
                headphoneEQPath = parts[1] == "none" ? "" : parts[1]
            default:
                throw DeviceDefaultsError(item: String(item))
            }
        }
    }

    /// These choices, with what `defaults` says where none was made.
    public func over(_ defaults: DeviceSettings) -> DeviceSettings {
        DeviceSettings(spatial: spatial ?? defaults.spatial, hrtfPath: hrtfPath ?? defaults.hrtfPath,
                       headphoneEQPath: headphoneEQPath ?? defaults.headphoneEQPath, render: render ?? defaults.render)
    }
}

public struct DeviceDefaultsError: Error, CustomStringConvertible {
    public let item: String
    public static let accepted = "spatial=off|fixed|head-tracked, hrtf=/ABSOLUTE/FILE.sofa, eq=/ABSOLUTE/FILE|none, separated by commas"
    public var description: String { "'\(item)' is not valid (accepted: \(Self.accepted))" }
}

/// The devices seen and what each remembers, kept across restarts in
/// `$XDG_STATE_HOME/scenesound/devices.json` (else `$HOME/.local/state/scenesound/…`): one small
/// JSON file, written whole to a temporary file and renamed over the old one after each change.
/// A file that cannot be read or parsed is reported once and treated as empty (and replaced at
/// the next change). Event-loop confined.
public final class DeviceSettingsStore {
    public struct Entry: Codable, Equatable, Sendable {
        public var key: String
        public var description: String?
        /// The sink it was last seen as.
        public var sinkName: String
        public var settings: DeviceSettings

        enum CodingKeys: String, CodingKey {
            case key, description, sinkName = "sink", settings
        }
    }

    private struct File: Codable {
        var version = 1
        var devices: [Entry]
    }

    public let filePath: String?
    private(set) public var entries: [Entry] = []
    private let log: (String) -> Void

    /// `filePath` nil: remembered only while the daemon runs.
    public init(filePath: String?, log: @escaping (String) -> Void) {
        self.filePath = filePath
        self.log = log
        load()
    }

    /// The file, from the environment (nil without an absolute XDG_STATE_HOME or HOME).
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        let base = environment["XDG_STATE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? environment["HOME"].flatMap { $0.hasPrefix("/") ? $0 + "/.local/state" : nil }
        return base.map { $0 + "/scenesound/devices.json" }
    }

    private func load() {
        guard let filePath, FileManager.default.fileExists(atPath: filePath) else { return }
        do {
            let data = try Data(contentsOf: URL(fileURLWithPath: filePath))
            entries = try JSONDecoder().decode(File.self, from: data).devices
        } catch {
            log("the devices' settings in \(filePath) could not be read (\(Self.describe(error))): every device starts with the defaults; the file is replaced at the next change")
        }
    }

    private static func describe(_ error: Error) -> String {
        if let error = error as? DecodingError {
            switch error {
            case .dataCorrupted(let context): return context.debugDescription
            case .keyNotFound(let key, _): return "no key '\(key.stringValue)'"
            case .typeMismatch(_, let context), .valueNotFound(_, let context): return context.debugDescription
            @unknown default: return "\(error)"
            }
        }
        return (error as NSError).localizedDescription
    }

    public func settings(for key: String) -> DeviceSettings? {
        entries.first { $0.key == key }?.settings
    }

    /// Notes the device as seen (its description and sink for `scenesound device`), and changes
    /// what it remembers by `change`; written when anything changed.
    public func update(key: String, sinkName: String, description: String?, _ change: (inout DeviceSettings) -> Void = { _ in }) {
        var entry = entries.first { $0.key == key } ?? Entry(key: key, description: description, sinkName: sinkName, settings: DeviceSettings())
        let before = entry
        entry.description = description ?? entry.description
        entry.sinkName = sinkName
        change(&entry.settings)
        guard entry != before || !entries.contains(where: { $0.key == key }) else { return }
        if let index = entries.firstIndex(where: { $0.key == key }) { entries[index] = entry } else { entries.append(entry) }
        save()
    }

    private func save() {
        guard let filePath else { return }
        do {
            let directory = (filePath as NSString).deletingLastPathComponent
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            let temporary = filePath + ".new"
            try encoder.encode(File(devices: entries)).write(to: URL(fileURLWithPath: temporary))
            guard rename(temporary, filePath) == 0 else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: filePath])
            }
        } catch {
            log("could not keep the devices' settings in \(filePath): \(Self.describe(error))")
        }
    }
}
