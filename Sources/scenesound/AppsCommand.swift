import ArgumentParser
import Foundation
import SceneSoundCaptureSettings
import SceneSoundClient

/// `scenesound apps`: the other programs' streams `scenesoundd --capture-apps` has taken over,
/// and the apps it leaves alone.
struct AppsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apps",
        abstract: "Apps whose sound scenesoundd --capture-apps plays from their windows; exclude or include one.",
        subcommands: [AppsListCommand.self, AppsExcludeCommand.self, AppsIncludeCommand.self],
        defaultSubcommand: AppsListCommand.self)
}

/// Where the list lives; `--exclusions FILE` for tests and for other users' setups.
struct ExclusionListOptions: ParsableArguments {
    @Option(name: .customLong("exclusions"), help: ArgumentHelp("The exclusion list (default: $XDG_CONFIG_HOME/scenesound/capture-exclude).", valueName: "FILE"))
    var path: String?

    func resolvedPath() throws -> String {
        if let path { return path }
        guard let path = CaptureExclusionList.defaultPath() else {
            throw RuntimeError("no place for the exclusion list: set HOME or XDG_CONFIG_HOME, or pass --exclusions FILE")
        }
        return path
    }

    func update(_ change: (inout CaptureExclusionList) -> Bool) throws -> (changed: Bool, path: String) {
        let path = try resolvedPath()
        var list: CaptureExclusionList
        do { list = try CaptureExclusionList.load(path: path) } catch {
            throw RuntimeError("cannot read \(path): \(error.localizedDescription)")
        }
        let changed = change(&list)
        if changed {
            do { try list.save(path: path) } catch {
                throw RuntimeError("cannot write \(path): \(error.localizedDescription)")
            }
        }
        return (changed, path)
    }
}

struct AppsExcludeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "exclude",
        abstract: "Leave an app alone from now on (its binary, e.g. firefox, or its application name); kept across restarts.")

    @Argument(help: "The app's binary or application name.")
    var name: String

    @OptionGroup var list: ExclusionListOptions

    func validate() throws {
        if case .failure(let error) = CaptureExclusionList.validate(name) { throw ValidationError("NAME: \(error.message)") }
    }

    func run() throws {
        let (changed, path) = try list.update { $0.add(name) }
        print(changed ? "excluded \(name) (in \(path); a running scenesoundd lets it go within a second)"
                      : "\(name) was already excluded")
    }
}

struct AppsIncludeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "include",
        abstract: "Capture an excluded app again.")

    @Argument(help: "The app's binary or application name, as excluded.")
    var name: String

    @OptionGroup var list: ExclusionListOptions

    func run() throws {
        let (changed, path) = try list.update { $0.remove(name) }
        guard changed else { throw RuntimeError("\(name) is not in \(path); 'scenesound apps' lists what is excluded") }
        print("included \(name) again")
    }
}

struct AppsListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "The captured apps' streams with their windows and places, and the apps left alone.",
        discussion: "--json prints the status document's apps section as one line.")

    @Flag(help: "Print the apps section of the status document as JSON.")
    var json = false

    @OptionGroup var server: ServerOptions
    @OptionGroup var list: ExclusionListOptions

    func run() throws {
        let connection = try server.connect()
        defer { connection.close() }
        let document = try withClientErrors { () throws(ClientError) in try connection.status() }
        guard let status = try? JSONSerialization.jsonObject(with: Data(document.utf8)) as? [String: Any] else {
            throw RuntimeError("the server's status is not a JSON object; see 'scenesound status --json'")
        }
        let apps = status["apps"] as? [String: Any]
        if json {
            // The status document's apps section; null when the capture is off.
            guard let apps else { return print("null") }
            let data = try JSONSerialization.data(withJSONObject: apps, options: [.sortedKeys, .withoutEscapingSlashes])
            print(String(decoding: data, as: UTF8.self))
            return
        }
        print(AppsSummary(apps: apps, excludedHere: (try? CaptureExclusionList.load(path: list.resolvedPath()).names) ?? []).rendered)
    }
}

/// `scenesound apps` as text.
struct AppsSummary {
    let apps: [String: Any]?
    let excludedHere: [String]

    var rendered: String {
        guard let apps else {
            return "app capture is off (start scenesoundd with --capture-apps)"
                + (excludedHere.isEmpty ? "" : "\nexcluded: \(excludedHere.joined(separator: ", "))")
        }
        var lines = ["capture  \(apps["state"] as? String ?? "?"), \(apps["started"] as? Int ?? 0) taken, \(apps["ended"] as? Int ?? 0) let go"]
        let streams = apps["streams"] as? [[String: Any]] ?? []
        for stream in streams {
            let name = stream["application"] as? String ?? "?"
            let binary = stream["binary"] as? String ?? "?"
            let pid = (stream["pid"] as? Int).map { "pid \($0)" } ?? "no pid"
            let window = (stream["window"] as? String).map { "window \($0)" + ((stream["title"] as? String).map { " \"\($0)\"" } ?? "") } ?? "no window"
            // "window 0x… (by recently active)": which rule found it; nothing to say when none did.
            let foundBy = (stream["window_found_by"] as? String).flatMap { $0 == "none" ? nil : " (by \($0.replacingOccurrences(of: "_", with: " ")))" } ?? ""
            let azimuth = (stream["azimuth_degrees"] as? Double).map { String(format: "az %.1f°", $0) } ?? ""
            let latency = (stream["added_latency_seconds"] as? Double).map { String(format: "+%.0f ms", $0 * 1000) } ?? ""
            lines.append("  \(name) (\(binary), \(pid))  \(stream["kind"] as? String ?? "")  \(window)\(foundBy)  \(azimuth)  \(latency)")
        }
        if streams.isEmpty { lines.append("  no app is playing") }
        let excluded = apps["excluded"] as? [String] ?? excludedHere
        lines.append("excluded: \(excluded.isEmpty ? "none" : excluded.joined(separator: ", "))")
        return lines.joined(separator: "\n")
    }
}
