import ArgumentParser
import Foundation
import TOMLKit

/// The daemon's config file (TOML). Every flag has a key: the flag's name with '_' for '-'
/// (`--max-clients` ↔ `max_clients`). The file's settings are turned into flags placed before
/// the command line's, so a flag given on the command line wins.
enum ConfigFile {
    enum Kind { case string, integer, number, flag, stringList }

    /// Keys and the type each takes, in the order `--help` lists the flags.
    static let keys: [(key: String, kind: Kind)] = [
        ("socket", .string), ("output", .string), ("rate", .integer), ("block", .integer), ("hrtf", .string),
        ("hrtf_eq", .string),
        ("head_width_cm", .number), ("headphone_eq", .string),
        ("display", .string), ("windows", .string), ("render", .string), ("device_defaults", .string), ("opentrack", .string), ("max_opentrack_packets_per_second", .integer),
        ("osc", .string), ("osc_address", .string), ("osc_axes", .string), ("max_osc_packets_per_second", .integer),
        ("head_tracking", .string), ("head_prediction", .string), ("head_recenter_seconds", .number),
        ("room", .string), ("hrtf_voices", .integer),
        ("max_clients", .integer),
        ("max_streams_per_client", .integer), ("max_frame_bytes", .integer), ("stream_buffer_seconds", .number),
        ("max_messages_per_second", .integer), ("sample_cache_bytes", .integer), ("duck_db", .number),
        ("coalesce_seconds", .number), ("flash_alert_windows", .flag), ("hidden_window_db", .number),
        ("hidden_window_cutoff_hz", .number), ("rest_after_seconds", .number), ("capture_apps", .flag), ("capture_exclude", .stringList),
        ("allow_root", .flag), ("log_level", .string),
    ]

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// `--config FILE` if given, else `$XDG_CONFIG_HOME/scenesound/config.toml` (or
    /// `~/.config/…`) when that exists.
    static func path(arguments: [String], environment: [String: String]) -> (path: String, explicit: Bool)? {
        for (i, argument) in arguments.enumerated() {
            if argument == "--config", i + 1 < arguments.count { return (arguments[i + 1], true) }
            if argument.hasPrefix("--config=") { return (String(argument.dropFirst(9)), true) }
        }
        let base = environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? environment["HOME"].map { $0 + "/.config" }
        guard let base else { return nil }
        let path = base + "/scenesound/config.toml"
        return FileManager.default.fileExists(atPath: path) ? (path, false) : nil
    }

    /// The flags a config file stands for. Errors name the file, the key and what it accepts.
    static func arguments(fromFile path: String) throws -> [String] {
        let text: String
        do { text = try String(contentsOfFile: path, encoding: .utf8) } catch {
            throw Failure(description: "cannot read the config file \(path)")
        }
        let table: TOMLTable
        do { table = try TOMLTable(string: text) } catch let error as TOMLParseError {
            throw Failure(description: "\(path): not valid TOML at line \(error.source.begin.line): \(error.description)")
        }
        var arguments: [String] = []
        for key in table.keys.sorted() {
            guard let kind = keys.first(where: { $0.key == key })?.kind else {
                throw Failure(description: "\(path): unknown key '\(key)' (accepted: \(keys.map(\.key).joined(separator: ", ")))")
            }
            let value = table[key]!
            let flag = "--" + key.replacingOccurrences(of: "_", with: "-")
            switch kind {
            case .string:
                if let s = value.string { arguments += [flag, s]; continue }
                if key == "opentrack" || key == "osc", let i = value.int { arguments += [flag, String(i)]; continue }
                if key == "head_prediction", let b = value.bool { arguments += [flag, b ? "on" : "off"]; continue }
            case .integer:
                if let i = value.int { arguments += [flag, String(i)]; continue }
            case .number:
                if let d = value.double { arguments += [flag, String(d)]; continue }
                if let i = value.int { arguments += [flag, String(i)]; continue }
            case .flag:
                if let b = value.bool { if b { arguments.append(flag) }; continue }
            case .stringList:
                if let list = value.array, list.allSatisfy({ $0.string != nil }) {
                    for item in list { arguments += [flag, item.string!] }
                    continue
                }
            }
            throw Failure(description: "\(path): key '\(key)' must be \(describe(kind)), not \(value.type)")
        }
        // Each value is checked by the same rules as its flag, and reported under its key.
        do {
            _ = try DaemonOptions.parse(arguments)
        } catch {
            let message = DaemonOptions.message(for: error).split(separator: "\n").first.map(String.init) ?? "invalid value"
            // The longest key whose flag the message names (--hrtf-voices, not --hrtf).
            let key = keys.map(\.key).filter { message.contains("--" + $0.replacingOccurrences(of: "_", with: "-")) }
                .max { $0.count < $1.count }
            throw Failure(description: "\(path): key '\(key ?? "?")': \(message.replacingOccurrences(of: "Error: ", with: ""))")
        }
        return arguments
    }

    private static func describe(_ kind: Kind) -> String {
        switch kind {
        case .string: return "a string"
        case .integer: return "an integer"
        case .number: return "a number"
        case .flag: return "true or false"
        case .stringList: return "an array of strings"
        }
    }
}
