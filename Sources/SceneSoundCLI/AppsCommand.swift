import ArgumentParser
import Foundation
import SceneSoundCaptureSettings
import SceneSoundClient
import SceneSoundProtocol
import SceneSoundStatusJSON

/// `scenesound apps`: the other programs' streams `scenesoundd --capture-apps` has taken over,
/// and the apps it leaves alone.
struct AppsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apps",
        abstract: "Apps whose sound scenesoundd --capture-apps plays from their windows; exclude or include one, or set its spatial mode.",
        subcommands: [AppsListCommand.self, AppsExcludeCommand.self, AppsIncludeCommand.self, AppsSpatialCommand.self],
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

struct AppsSpatialCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "spatial",
        abstract: "How an app's captured sound plays: anchored at its window (the default), head-locked, or off (plain stereo); kept across restarts.")

    @Argument(help: "The app's binary or application name.")
    var name: String

    @Argument(help: ArgumentHelp("anchored, head-locked or off.", valueName: "MODE"))
    var mode: String

    @Option(name: .customLong("choices"), help: ArgumentHelp("The file kept (default: $XDG_CONFIG_HOME/scenesound/capture-spatial).", valueName: "FILE"))
    var path: String?

    func validate() throws {
        if case .failure(let error) = CaptureExclusionList.validate(name) { throw ValidationError("NAME: \(error.message)") }
        guard CaptureSpatialChoices.modes.contains(mode) else {
            throw ValidationError("MODE '\(mode)' is not one (accepted: \(CaptureSpatialChoices.modes.joined(separator: ", ")))")
        }
    }

    func run() throws {
        guard let path = path ?? CaptureSpatialChoices.defaultPath() else {
            throw RuntimeError("no place for the choice: set HOME or XDG_CONFIG_HOME, or pass --choices FILE")
        }
        var choices: CaptureSpatialChoices
        do { choices = try CaptureSpatialChoices.load(path: path) } catch {
            throw RuntimeError("cannot read \(path): \(error.localizedDescription)")
        }
        guard choices.set(name, mode: mode) else { return print("\(name) plays \(mode) already") }
        do { try choices.save(path: path) } catch {
            throw RuntimeError("cannot write \(path): \(error.localizedDescription)")
        }
        print("\(name) plays \(mode) (in \(path); a running scenesoundd switches its streams within a second)")
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
        let apps = try connection.statusDocument().apps
        if json {
            // The status document's apps section; null when the capture is off.
            return print(apps.map(StatusDocument.jsonLine) ?? "null")
        }
        print(AppsSummary(apps: apps, excludedHere: (try? CaptureExclusionList.load(path: list.resolvedPath()).names) ?? []).rendered)
    }
}

/// `scenesound apps` as text.
struct AppsSummary {
    let apps: StatusDocument.Apps?
    let excludedHere: [String]

    var rendered: String {
        guard let apps else {
            return "app capture is off (start scenesoundd with --capture-apps)"
                + (excludedHere.isEmpty ? "" : "\nexcluded: \(excludedHere.joined(separator: ", "))")
        }
        var lines = ["capture  \(apps.state), \(apps.started) taken, \(apps.ended) let go"]
        for stream in apps.streams {
            let pid = stream.pid.map { "pid \($0)" } ?? "no pid"
            let window = stream.window.map { "window \($0)" + (stream.title.map { " \"\($0)\"" } ?? "") } ?? "no window"
            // "window 0x… (by recently active)": which rule found it; nothing to say when none did.
            let foundBy = stream.windowFoundBy == "none" ? "" : " (by \(stream.windowFoundBy.replacingOccurrences(of: "_", with: " ")))"
            let azimuth = String(format: "az %.1f°", stream.azimuthDegrees)
            let latency = String(format: "+%.0f ms", stream.addedLatencySeconds * 1000)
            lines.append("  \(stream.application ?? "?") (\(stream.binary ?? "?"), \(pid))  \(stream.kind)  \(window)\(foundBy)  \(azimuth)  \(latency)")
        }
        if apps.streams.isEmpty { lines.append("  no app is playing") }
        lines.append("excluded: \(apps.excluded.isEmpty ? "none" : apps.excluded.joined(separator: ", "))")
        return lines.joined(separator: "\n")
    }
}
