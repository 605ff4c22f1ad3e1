import ArgumentParser
import Foundation
import SceneSoundSOFA

struct HRTFCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hrtf",
        abstract: "The HRTF sets you can choose from.",
        discussion: """
            Sets are SOFA (AES69) files in $XDG_DATA_HOME/scenesound/hrtf (~/.local/share/…), \
            in scenesound/hrtf under each $XDG_DATA_DIRS entry, and in Debian's libmysofa \
            directory (/usr/share/libmysofa), searched in that order.
            """,
        subcommands: [HRTFListCommand.self])
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
