import Foundation
import SceneSoundDSP

/// Loads HRTF sets, preparing them once per (file content, rate) and keeping the result in
/// `$XDG_CACHE_HOME/scenesound` (else `~/.cache/scenesound`): a cold preparation of KEMAR
/// takes about a second, a warm load a few milliseconds.
public struct HRTFLoader: Sendable {
    public var cacheDirectory: String?

    public init(cacheDirectory: String? = HRTFLoader.defaultCacheDirectory()) {
        self.cacheDirectory = cacheDirectory
    }

    public static func defaultCacheDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let xdg = environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") { return xdg + "/scenesound" }
        if let home = environment["HOME"], !home.isEmpty { return home + "/.cache/scenesound" }
        return nil
    }

    public enum Origin: Equatable, Sendable { case prepared, cache }

    /// Where a set's preparation at a rate is cached: by the file's content, the rate, the
    /// equalization (each choice is prepared and cached on its own), the preparation's version
    /// and the near field's (its table is kept with the set).
    public static func cacheFileName(content: Data, sampleRateHz: Double, equalization: HRTFEqualization = .diffuse) -> String {
        "hrtf-" + String(format: "%016llx", HRTFCacheFormat.fingerprint(content))
            + "-\(Int(sampleRateHz))Hz-\(equalization.rawValue)-v\(HRTFPreparation.version)-near\(NearField.tableVersion).bin"
    }

    /// `equalization`: how the set's responses are equalized (`.diffuse`: DiffuseFieldEqualization).
    public func load(path: String, sampleRateHz: Double,
                     equalization: HRTFEqualization = .diffuse) throws -> (set: HRTFSet, origin: Origin) {
        let content: Data
        do {
            content = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw HRTFLoadError("\(path): cannot read the HRTF file (\((error as NSError).localizedDescription))")
        }
        let cachePath = cacheDirectory.map { "\($0)/" + Self.cacheFileName(content: content, sampleRateHz: sampleRateHz, equalization: equalization) }
        if let cachePath, let cached = try? HRTFCacheFormat.read(path: cachePath), cached.sampleRateHz == sampleRateHz {
            return (cached, .cache)
        }
        let file = try SOFAFile.load(path: path)
        let set: HRTFSet
        do {
            set = try HRTFPreparation.prepare(try file.resampled(to: sampleRateHz), sampleRateHz: sampleRateHz,
                                              equalization: equalization)
        } catch let error as HRTFPreparationError {
            throw HRTFLoadError("\(path): \(error.description)")
        }
        if let cachePath, let directory = cacheDirectory {
            // A cache that cannot be written only costs the next start some time.
            try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try? HRTFCacheFormat.write(set, path: cachePath)
        }
        return (set, .prepared)
    }
}
