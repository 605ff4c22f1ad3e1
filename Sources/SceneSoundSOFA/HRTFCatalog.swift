import CMySofa
import Foundation

/// The HRTF sets a user can choose from: SOFA files in `$XDG_DATA_HOME/scenesound/hrtf`
/// (else `~/.local/share/scenesound/hrtf`), in each `$XDG_DATA_DIRS` entry's
/// `scenesound/hrtf` (else `/usr/local/share` and `/usr/share`), and in Debian's libmysofa
/// directory — searched in that order, so a name found earlier is the one `NAME` means.
public struct HRTFCatalog: Sendable {
    public var directories: [String]
    public var cacheDirectory: String?

    public static let libmysofaDirectory = "/usr/share/libmysofa"

    public init(directories: [String], cacheDirectory: String?) {
        self.directories = directories
        self.cacheDirectory = cacheDirectory
    }

    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.init(directories: Self.directories(environment: environment),
                  cacheDirectory: HRTFLoader.defaultCacheDirectory(environment: environment))
    }

    public static func directories(environment: [String: String]) -> [String] {
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 }
        let dataHome = environment["XDG_DATA_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? home.map { $0 + "/.local/share" }
        let dataDirs = (environment["XDG_DATA_DIRS"].flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/local/share:/usr/share")
            .split(separator: ":").map(String.init).filter { $0.hasPrefix("/") }
        var result = (dataHome.map { [$0] } ?? []) + dataDirs
        result = result.map { $0 + "/scenesound/hrtf" }
        result.append(libmysofaDirectory)
        var seen = Set<String>()
        return result.filter { seen.insert($0).inserted }
    }

    /// One set found: what its SOFA file says, and whether its preparation is cached.
    public struct Entry: Equatable, Sendable {
        /// The file's name without `.sofa`.
        public var name: String
        public var path: String
        public var measurementDistanceMetres: Double?
        public var directions: Int?
        public var sampleRateHz: Double?
        /// Rates at which the prepared set is in the cache (the daemon loads those in milliseconds).
        public var cachedRatesHz: [Int]
        /// Why the file could not be read as a SOFA set (nil when it could).
        public var problem: String?
    }

    /// Every `.sofa` file in the directories, in search order, each directory's by name.
    public func entries() -> [Entry] {
        directories.flatMap { directory -> [Entry] in
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            return names.filter { $0.lowercased().hasSuffix(".sofa") }.sorted().map { entry(path: directory + "/" + $0) }
        }
    }

    /// The file a name stands for: the first in search order (`NAME` or `NAME.sofa`).
    public func path(forName name: String) -> String? {
        let wanted = name.lowercased().hasSuffix(".sofa") ? name : name + ".sofa"
        for directory in directories {
            let path = directory + "/" + wanted
            if FileManager.default.isReadableFile(atPath: path) { return path }
        }
        return nil
    }

    public func entry(path: String) -> Entry {
        let file = (path as NSString).lastPathComponent
        var entry = Entry(name: String(file.dropLast(5)), path: path, cachedRatesHz: [])
        var error: Int32 = 0
        guard let hrtf = mysofa_load(path, &error), error == MYSOFA_OK else {
            entry.problem = "not a valid SOFA file (\(SOFAFile.describe(error)))"
            return entry
        }
        defer { mysofa_free(hrtf) }
        mysofa_tospherical(hrtf)
        let h = hrtf.pointee
        entry.directions = Int(h.M)
        if h.DataSamplingRate.elements >= 1 { entry.sampleRateHz = Double(h.DataSamplingRate.values[0]) }
        // SourcePosition's radius: the measurement distance (the median, should a set vary it).
        let radii = (0..<Int(h.M)).map { Double(h.SourcePosition.values[$0 * 3 + 2]) }.sorted()
        if !radii.isEmpty { entry.measurementDistanceMetres = radii[radii.count / 2] }
        entry.cachedRatesHz = cachedRates(path: path)
        return entry
    }

    /// The rates at which the file's content has a prepared set in the cache.
    func cachedRates(path: String) -> [Int] {
        guard let cacheDirectory, let content = FileManager.default.contents(atPath: path),
              let cached = try? FileManager.default.contentsOfDirectory(atPath: cacheDirectory) else { return [] }
        // A cached file's name carries its rate ("…-48000Hz-…"); the name it would have for
        // this content at that rate must match it exactly.
        return cached.compactMap { name -> Int? in
            guard let field = name.split(separator: "-").first(where: { $0.hasSuffix("Hz") }),
                  let rate = Int(field.dropLast(2)),
                  name == HRTFLoader.cacheFileName(content: content, sampleRateHz: Double(rate)) else { return nil }
            return rate
        }.sorted()
    }
}
