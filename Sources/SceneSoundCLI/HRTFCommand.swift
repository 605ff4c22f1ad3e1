import ArgumentParser
import Foundation
import SceneSoundClient
import SceneSoundSOFA

struct HRTFCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hrtf",
        abstract: "The HRTF sets you can choose from, and the one the server renders with.",
        discussion: """
            Sets are SOFA (AES69) files in $XDG_DATA_HOME/scenesound/hrtf (~/.local/share/…), \
            in scenesound/hrtf under each $XDG_DATA_DIRS entry, and in Debian's libmysofa \
            directory (/usr/share/libmysofa), searched in that order.
            """,
        subcommands: [HRTFListCommand.self, HRTFUseCommand.self, HRTFCompareCommand.self, HRTFTestCommand.self])
}

struct HRTFUseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "use",
        abstract: "Switch the running server to another HRTF set, live; the choice lasts across restarts.",
        discussion: """
            FILE is any AES69 SOFA file; NAME a set 'scenesound hrtf list' shows. The server loads \
            and prepares the set (a set not cached yet takes a few seconds), then crossfades to it \
            over 30 ms while everything keeps playing. A missing or bad file is refused, naming it, \
            and the set in use stays. The server starts with the set chosen last ($XDG_STATE_HOME/\
            scenesound/hrtf) unless its --hrtf option or the config's hrtf key names one. \
            'scenesound status' shows the set in use.
            """)

    @Argument(help: ArgumentHelp("A SOFA file, or the name of a set 'scenesound hrtf list' shows.", valueName: "FILE|NAME"))
    var set: String

    @OptionGroup var server: ServerOptions

    func run() throws {
        let path = try Self.resolve(set)
        try server.exchange { connection throws(ClientError) in try connection.useHRTF(path: path) }
        print("HRTF set: \(path)")
    }

    /// A file (made absolute: the server reads it), else a set's name in the catalog.
    static func resolve(_ set: String, catalog: HRTFCatalog = HRTFCatalog()) throws -> String {
        let absolute = URL(fileURLWithPath: set).standardizedFileURL.path
        if FileManager.default.isReadableFile(atPath: absolute) { return absolute }
        if !set.contains("/"), let path = catalog.path(forName: set) { return path }
        throw RuntimeError("\(set): no such readable file and no set of that name (give a SOFA file, or a NAME from 'scenesound hrtf list')")
    }
}

struct HRTFListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the HRTF sets found: name, measurement distance, directions, and whether the prepared set is cached.")

    @Flag(help: "Print one JSON array.")
    var json = false

    func run() throws {
        let entries = HRTFCatalog().entries()
        if json {
            print(Self.json(entries))
        } else {
            print(Self.table(entries))
        }
    }

    static func json(_ entries: [HRTFCatalog.Entry]) -> String {
        let objects: [[String: Any]] = entries.map { entry in
            var object: [String: Any] = [
                "name": entry.name, "path": entry.path,
                "cached": !entry.cachedRatesHz.isEmpty, "cached_rates_hz": entry.cachedRatesHz,
            ]
            if let distance = entry.measurementDistanceMetres { object["measurement_distance_metres"] = distance }
            if let directions = entry.directions { object["directions"] = directions }
            if let rate = entry.sampleRateHz { object["rate_hz"] = rate }
            if let problem = entry.problem { object["problem"] = problem }
            return object
        }
        let data = try! JSONSerialization.data(withJSONObject: objects, options: [.sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }

    static func table(_ entries: [HRTFCatalog.Entry]) -> String {
        guard !entries.isEmpty else { return "no HRTF sets found" }
        var rows: [[String]] = [["NAME", "DISTANCE", "DIRECTIONS", "RATE", "CACHED", "PATH"]]
        for entry in entries {
            let distance = entry.measurementDistanceMetres.map { String(format: "%.2f m", $0) } ?? "-"
            let directions = entry.directions.map { String($0) } ?? "-"
            let rate = entry.sampleRateHz.map { String(format: "%g Hz", $0) } ?? "-"
            let cachedRates = entry.cachedRatesHz.map { "\($0) Hz" }.joined(separator: ", ")
            let cached: String = entry.problem.map { "unreadable: " + $0 } ?? (cachedRates.isEmpty ? "no" : cachedRates)
            rows.append([entry.name, distance, directions, rate, cached, entry.path])
        }
        let widths = (0..<6).map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { column, cell in
                column == row.count - 1 ? cell : cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }
}
