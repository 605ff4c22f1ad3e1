import Foundation
import Testing
import SceneSoundDSP
import SceneSoundSOFA

/// The bus decoder's design cached on disk: the same filters back, only for the build and
/// the set that made them, and a damaged file designed again.
@Suite struct DecoderCacheTests {
    static let set: HRTFSet = try! HRTFLoader(cacheDirectory: nil).load(path: SOFAFile.defaultPath, sampleRateHz: 48000).set

    func temporaryDirectory() -> String {
        let path = NSTemporaryDirectory() + "scenesound-decoder-\(UUID().uuidString)"
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static func same(_ a: AmbisonicDecodeFilters, _ b: AmbisonicDecodeFilters) -> Bool {
        a.taps == b.taps && a.reversedFilters == b.reversedFilters && a.earLevelCorrections == b.earLevelCorrections
            && a.itdExcessSamples == b.itdExcessSamples
    }

    @Test func aWarmStartGetsTheSameDesignFromTheCache() throws {
        let cache = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: cache) }
        let store = AmbisonicDecoderCache(cacheDirectory: cache, buildIdentity: "build A")
        let cold = store.filters(for: Self.set)
        #expect(cold.origin == .prepared)
        #expect(Self.same(cold.filters, AmbisonicDecodeFilters.design(from: Self.set)))
        let warm = store.filters(for: Self.set)
        #expect(warm.origin == .cache)
        #expect(Self.same(warm.filters, cold.filters))
    }

    @Test func anotherBuildOrSetDesignsAgain() throws {
        let cache = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: cache) }
        _ = AmbisonicDecoderCache(cacheDirectory: cache, buildIdentity: "build A").filters(for: Self.set)
        // A build whose design code may differ never reads A's file.
        #expect(AmbisonicDecoderCache(cacheDirectory: cache, buildIdentity: "build B").filters(for: Self.set).origin == .prepared)
        // Both builds keep their designs (recent ones are not removed).
        #expect(try FileManager.default.contentsOfDirectory(atPath: cache).filter { $0.hasPrefix("decoder-") }.count == 2)
        // Another set (another rate) is another entry.
        let other = try HRTFLoader(cacheDirectory: nil).load(path: SOFAFile.defaultPath, sampleRateHz: 44100).set
        #expect(AmbisonicDecoderCache(cacheDirectory: cache, buildIdentity: "build A").filters(for: other).origin == .prepared)
        // This process can tell its own build.
        #expect(AmbisonicDecoderCache.currentBuildIdentity != nil)
    }

    @Test func designsStoredByOtherBuildsMoreThanAWeekAgoAreRemoved() throws {
        let cache = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: cache) }
        _ = AmbisonicDecoderCache(cacheDirectory: cache, buildIdentity: "old build").filters(for: Self.set)
        let old = try #require(try FileManager.default.contentsOfDirectory(atPath: cache).first { $0.hasPrefix("decoder-") })
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-8 * 86400)],
                                              ofItemAtPath: cache + "/" + old)
        _ = AmbisonicDecoderCache(cacheDirectory: cache, buildIdentity: "new build").filters(for: Self.set)
        let left = try FileManager.default.contentsOfDirectory(atPath: cache).filter { $0.hasPrefix("decoder-") }
        #expect(left.count == 1)
        #expect(!left.contains(old))
    }

    @Test func aDamagedFileIsDesignedAgain() throws {
        let cache = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: cache) }
        let store = AmbisonicDecoderCache(cacheDirectory: cache, buildIdentity: "build A")
        let cold = store.filters(for: Self.set)
        for entry in try FileManager.default.contentsOfDirectory(atPath: cache) {
            let path = cache + "/" + entry
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            try data.prefix(data.count - 4).write(to: URL(fileURLWithPath: path))  // truncated
        }
        let again = store.filters(for: Self.set)
        #expect(again.origin == .prepared)
        #expect(Self.same(again.filters, cold.filters))
    }
}
