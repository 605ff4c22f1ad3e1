import Foundation
import SceneSoundSOFA
import Testing

/// `scenesound hrtf list` as a user runs it: sets in the user's data directory, in each system
/// data directory and in Debian's libmysofa directory, with what each SOFA file says and
/// whether its preparation is cached.
@Suite struct HRTFListTests {
    @Test func listsTheSetsOfEveryDataDirectoryWithDistanceDirectionsAndCache() throws {
        let root = temporaryDirectory("hrtf-list")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let home = root + "/data-home", system = root + "/data-dir", cache = root + "/cache"
        for directory in [home + "/scenesound/hrtf", system + "/scenesound/hrtf", cache] {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        // A second set under another name (KEMAR's file, copied), and one that is no SOFA file.
        let kemar = URL(fileURLWithPath: SOFAFile.defaultPath).resolvingSymlinksInPath().path  // default.sofa is a link
        try FileManager.default.copyItem(atPath: kemar, toPath: home + "/scenesound/hrtf/my head.sofa")
        try Data("not HDF5".utf8).write(to: URL(fileURLWithPath: system + "/scenesound/hrtf/broken.sofa"))
        let environment = ["XDG_DATA_HOME": home, "XDG_DATA_DIRS": system, "XDG_CACHE_HOME": cache]

        func list() throws -> [[String: Any]] {
            let run = try Binaries.run("scenesound", ["hrtf", "list", "--json"], environment: environment)
            #expect(run.status == 0, "\(run.standardError)")
            return try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [[String: Any]] ?? []
        }
        var sets = try list()
        print("hrtf list: \(sets)")
        #expect(sets.map { $0["name"] as? String } == ["my head", "broken", "MIT_KEMAR_normal_pinna", "default"])
        let mine = sets[0]
        #expect(mine["path"] as? String == home + "/scenesound/hrtf/my head.sofa")
        #expect(abs((mine["measurement_distance_metres"] as? Double ?? 0) - 1.4) < 1e-6)
        #expect(mine["directions"] as? Int == 710)
        #expect(mine["rate_hz"] as? Double == 44100)
        #expect(mine["cached"] as? Bool == false)
        #expect((sets[1]["problem"] as? String)?.hasPrefix("not a valid SOFA file") == true)

        // Prepared once (as the daemon does at its rate), it is listed as cached at that rate.
        _ = try HRTFLoader(cacheDirectory: cache + "/scenesound").load(path: home + "/scenesound/hrtf/my head.sofa",
                                                                       sampleRateHz: 48000)
        sets = try list()
        #expect(sets[0]["cached"] as? Bool == true)
        #expect(sets[0]["cached_rates_hz"] as? [Int] == [48000])
        // The same content under Debian's name shares the cache entry.
        #expect(sets[3]["cached_rates_hz"] as? [Int] == [48000])

        let table = try Binaries.run("scenesound", ["hrtf", "list"], environment: environment)
        #expect(table.status == 0)
        let lines = table.standardOutput.split(separator: "\n")
        #expect(lines.first?.hasPrefix("NAME") == true)
        #expect(lines.contains { $0.hasPrefix("my head") && $0.contains("1.40 m") && $0.contains("710") && $0.contains("48000 Hz") })
    }
}
