import Foundation
import Testing
import SceneSoundDSP
import SceneSoundSOFA

@Suite struct HRTFLoadingTests {
    static let kemar = SOFAFile.defaultPath

    func temporaryDirectory() -> String {
        let path = NSTemporaryDirectory() + "scenesound-sofa-\(UUID().uuidString)"
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test func readsTheKEMARSet() throws {
        let file = try SOFAFile.load(path: Self.kemar)
        #expect(file.sampleRateHz == 44100)
        #expect(file.measurements.count == 710)
        #expect(file.measurements.allSatisfy { $0.left.count == 512 && $0.right.count == 512 })
    }

    /// One cold preparation at 48 kHz into a cache of the suite's own, shared by the tests that
    /// need a prepared set or a valid cache file (a preparation is most of this suite's time).
    struct ColdLoad { let cacheDirectory: String; let set: HRTFSet; let origin: HRTFLoader.Origin; let seconds: Double }
    static let coldLoad: ColdLoad = {
        let cache = NSTemporaryDirectory() + "scenesound-sofa-shared-\(UUID().uuidString)"
        try! FileManager.default.createDirectory(atPath: cache, withIntermediateDirectories: true)
        let start = Date()
        let loaded = try! HRTFLoader(cacheDirectory: cache).load(path: kemar, sampleRateHz: 48000)
        return ColdLoad(cacheDirectory: cache, set: loaded.set, origin: loaded.origin, seconds: Date().timeIntervalSince(start))
    }()

    @Test func preparedFiltersAreShort() throws {
        let set = Self.coldLoad.set
        #expect(set.filterTaps == 128)
        print("KEMAR at 48 kHz: \(set.filterTaps) taps; energy kept: median \(set.medianRetainedEnergyFraction), least \(set.minimumRetainedEnergyFraction)")
        #expect(set.medianRetainedEnergyFraction >= 0.99)
        // Filters scale with the rate: 128 taps at 48 kHz are 256 at 96 kHz.
        #expect(HRTFPreparation.filterTaps(sampleRateHz: 96000) == 256)
        #expect(HRTFPreparation.filterTaps(sampleRateHz: 44100) == 120)
    }

    /// Some KEMAR responses carry up to 10 % of their energy in late reflections of the
    /// measuring rig (4–8 ms after the onset), which no 128-tap filter can hold. The
    /// minimum-phase filter must still keep at least as much energy as the best 128-tap window
    /// of the measured response, for every response.
    @Test func minimumPhaseKeepsAtLeastTheBestWindowsEnergy() throws {
        let file = try SOFAFile.load(path: Self.kemar)
        let measurements = try file.resampled(to: 48000)
        var belowTarget = 0
        for m in measurements {
            let pair = HRTFPreparation.preparePair(m, taps: 128, sampleRateHz: 48000)
            for (measured, kept) in [(m.left, pair.leftRetainedEnergyFraction), (m.right, pair.rightRetainedEnergyFraction)] {
                #expect(kept + 1e-4 >= Self.bestWindowFraction(measured, taps: 128))
                if kept < 0.99 { belowTarget += 1 }
            }
        }
        print("responses keeping < 99 % of their energy in 128 taps: \(belowTarget) of \(measurements.count * 2)")
    }

    static func bestWindowFraction(_ h: [Float], taps: Int) -> Double {
        var prefix = [0.0]
        for v in h { prefix.append(prefix.last! + Double(v) * Double(v)) }
        var best = 0.0
        for start in 0...max(0, h.count - taps) { best = max(best, prefix[min(start + taps, h.count)] - prefix[start]) }
        return prefix.last! > 0 ? best / prefix.last! : 1
    }

    @Test func aWarmStartComesFromTheCacheQuickly() throws {
        let cache = Self.coldLoad.cacheDirectory
        let loader = HRTFLoader(cacheDirectory: cache)
        let cold = (set: Self.coldLoad.set, origin: Self.coldLoad.origin)
        let coldSeconds = Self.coldLoad.seconds
        #expect(cold.origin == .prepared)

        let warmStart = Date()
        let warm = try loader.load(path: Self.kemar, sampleRateHz: 48000)
        let warmSeconds = Date().timeIntervalSince(warmStart)
        print("HRTF cold preparation \(Int(coldSeconds * 1000)) ms, warm load \(Int(warmSeconds * 1000)) ms")
        #expect(warm.origin == .cache)
        #expect(warmSeconds < 0.1)
        let identical = warm.set.reversedFilters == cold.set.reversedFilters && warm.set.delaysSamples == cold.set.delaysSamples
        #expect(identical)

        // Another rate is another cache entry (in a cache of its own: the shared one stays as
        // the other tests expect it).
        let other = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: other) }
        for entry in try FileManager.default.contentsOfDirectory(atPath: cache) {
            try FileManager.default.copyItem(atPath: cache + "/" + entry, toPath: other + "/" + entry)
        }
        #expect(try HRTFLoader(cacheDirectory: other).load(path: Self.kemar, sampleRateHz: 44100).origin == .prepared)
    }

    /// The near field's table (the sphere's series: milliseconds of every start) is kept with
    /// the set: a warm load reads it from the file rather than making it again, and a table
    /// that is not one (not finite) has the whole entry prepared again.
    @Test func theNearFieldTableComesFromTheCache() throws {
        let cache = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: cache) }
        let shared = Self.coldLoad.cacheDirectory
        for entry in try FileManager.default.contentsOfDirectory(atPath: shared) {
            try FileManager.default.copyItem(atPath: shared + "/" + entry, toPath: cache + "/" + entry)
        }
        let loader = HRTFLoader(cacheDirectory: cache)
        let made = NearField(measurementDistanceMetres: Self.coldLoad.set.measurementDistanceMetres, sampleRateHz: 48000).broadbandLevels
        let warm = try loader.load(path: Self.kemar, sampleRateHz: 48000)
        #expect(warm.origin == .cache)
        #expect(warm.set.nearField.broadbandLevels == made)

        // The table is the file's last floats: one written there is the one the render reads.
        let entry = try #require(try FileManager.default.contentsOfDirectory(atPath: cache).first { $0.hasPrefix("hrtf-") })
        let url = URL(fileURLWithPath: cache + "/" + entry)
        func rewriteTable(_ value: Float) throws {
            var data = try Data(contentsOf: url)
            let tableBytes = made.count * MemoryLayout<Float>.size
            let table = [Float](repeating: value, count: made.count)
            table.withUnsafeBytes { data.replaceSubrange(data.count - tableBytes ..< data.count, with: $0) }
            try data.write(to: url)
        }
        try rewriteTable(0.5)
        let marked = try loader.load(path: Self.kemar, sampleRateHz: 48000)
        #expect(marked.origin == .cache)
        #expect(marked.set.nearField.broadbandLevels.allSatisfy { $0 == 0.5 })

        try rewriteTable(.nan)
        let rebuilt = try loader.load(path: Self.kemar, sampleRateHz: 48000)
        #expect(rebuilt.origin == .prepared)
        #expect(rebuilt.set.nearField.broadbandLevels == made)
        #expect(try loader.load(path: Self.kemar, sampleRateHz: 48000).set.nearField.broadbandLevels == made)
    }

    @Test func aCorruptCacheIsRebuilt() throws {
        let cache = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: cache) }
        let loader = HRTFLoader(cacheDirectory: cache)
        // A valid cache (the shared cold load's), then corrupted.
        let shared = Self.coldLoad.cacheDirectory
        let entries = try FileManager.default.contentsOfDirectory(atPath: shared)
        #expect(!entries.isEmpty)
        for entry in entries {
            try FileManager.default.copyItem(atPath: shared + "/" + entry, toPath: cache + "/" + entry)
        }
        #expect(try loader.load(path: Self.kemar, sampleRateHz: 48000).origin == .cache)
        for entry in try FileManager.default.contentsOfDirectory(atPath: cache) {
            try Data("garbage".utf8).write(to: URL(fileURLWithPath: cache + "/" + entry))
        }
        #expect(try loader.load(path: Self.kemar, sampleRateHz: 48000).origin == .prepared)
    }

    @Test func missingAndCorruptFilesGiveClearErrors() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(throws: HRTFLoadError.self) { try HRTFLoader(cacheDirectory: nil).load(path: dir + "/none.sofa", sampleRateHz: 48000) }

        // The first half of a real SOFA file.
        let half = try Data(contentsOf: URL(fileURLWithPath: Self.kemar)).prefix(500_000)
        try half.write(to: URL(fileURLWithPath: dir + "/half.sofa"))
        do {
            _ = try HRTFLoader(cacheDirectory: nil).load(path: dir + "/half.sofa", sampleRateHz: 48000)
            Issue.record("a truncated SOFA file loaded")
        } catch let error as HRTFLoadError {
            #expect(error.description.contains("half.sofa"))
        }
    }
}
