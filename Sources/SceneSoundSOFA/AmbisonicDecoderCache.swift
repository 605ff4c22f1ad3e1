import Foundation
import SceneSoundDSP

/// Designs the bus decoder for a prepared HRTF set once per (set, build) and keeps it next to
/// the prepared sets (HRTFLoader's cache directory): the design takes about a tenth of a
/// second of CPU at every start, a cached one a millisecond.
///
/// A stored design is used only by the very build that made it (the file holding this code,
/// by size and modification time, is part of the key), so a change to the design never meets
/// a stale file; the set is identified by its content.
public struct AmbisonicDecoderCache: Sendable {
    public var cacheDirectory: String?
    /// What identifies the design code; nil when it cannot be told (nothing is cached then).
    public var buildIdentity: String?

    public init(cacheDirectory: String? = HRTFLoader.defaultCacheDirectory(),
                buildIdentity: String? = AmbisonicDecoderCache.currentBuildIdentity) {
        self.cacheDirectory = cacheDirectory
        self.buildIdentity = buildIdentity
    }

    /// The default design (AmbisonicDecodeFilters.design(from:)) for `hrtf`, and where it came from.
    public func filters(for hrtf: HRTFSet) -> (filters: AmbisonicDecodeFilters, origin: HRTFLoader.Origin) {
        guard let directory = cacheDirectory, let build = buildIdentity else {
            return (AmbisonicDecodeFilters.design(from: hrtf), .prepared)
        }
        let setKey = String(format: "%016llx", Self.fingerprint(hrtf))
        let prefix = "decoder-\(setKey)-"
        let name = prefix + String(format: "%016llx", Self.fingerprint(Data(build.utf8))) + ".bin"
        let path = directory + "/" + name
        if let cached = try? Self.read(path: path), cached.itdExcessSamples.count == hrtf.nodeCount {
            return (cached, .cache)
        }
        let designed = AmbisonicDecodeFilters.design(from: hrtf)
        // A cache that cannot be written only costs the next start some time. Designs of the
        // same set stored by other builds more than a week ago are removed: rebuilds would
        // otherwise pile them up (two builds in use side by side keep theirs).
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        if (try? Self.write(designed, path: path)) != nil,
           let names = try? FileManager.default.contentsOfDirectory(atPath: directory) {
            let weekAgo = Date().addingTimeInterval(-7 * 86400)
            for other in names where other.hasPrefix(prefix) && other.hasSuffix(".bin") && other != name {
                let otherPath = directory + "/" + other
                if let made = (try? FileManager.default.attributesOfItem(atPath: otherPath))?[.modificationDate] as? Date,
                   made < weekAgo {
                    unlink(otherPath)
                }
            }
        }
        return (designed, .prepared)
    }

    /// The object file (program or shared library) this code was loaded from, by path, size
    /// and modification time: every build of it differs.
    public static let currentBuildIdentity: String? = {
        // The mapping that holds this code's machine instructions names its file.
        let marker: @convention(c) () -> Void = {}
        let address = UInt(bitPattern: unsafeBitCast(marker, to: UnsafeRawPointer.self))
        var candidates: [String] = []
        if let maps = try? String(contentsOfFile: "/proc/self/maps", encoding: .utf8) {
            for line in maps.split(separator: "\n") {
                let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
                let range = fields.first?.split(separator: "-") ?? []
                guard fields.count == 6, range.count == 2, let low = UInt(range[0], radix: 16),
                      let high = UInt(range[1], radix: 16), low <= address, address < high
                else { continue }
                candidates.append(fields[5].trimmingCharacters(in: .whitespaces))
                break
            }
        }
        candidates.append("/proc/self/exe")
        for path in candidates where path.hasPrefix("/") {
            var status = stat()
            guard stat(path, &status) == 0 else { continue }
            let resolved = (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) ?? path
            return "\(resolved) \(status.st_size) \(status.st_mtim.tv_sec).\(status.st_mtim.tv_nsec)"
        }
        return nil
    }()

    /// The set's content: FNV-1a over 64-bit words (a set is megabytes; bytewise would
    /// take milliseconds).
    static func fingerprint(_ hrtf: HRTFSet) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ word: UInt64) { hash = (hash ^ word) &* 0x0000_0100_0000_01b3 }
        mix(hrtf.sampleRateHz.bitPattern)
        mix(UInt64(hrtf.filterTaps))
        mix(hrtf.azimuthStepDegrees.bitPattern)
        mix(hrtf.elevationStepDegrees.bitPattern)
        for table in [hrtf.delaysSamples, hrtf.reversedFilters] {
            mix(UInt64(table.count))
            table.withUnsafeBufferPointer { floats in
                var i = 0
                while i + 1 < floats.count {
                    mix(UInt64(floats[i].bitPattern) | UInt64(floats[i + 1].bitPattern) << 32)
                    i += 2
                }
                if i < floats.count { mix(UInt64(floats[i].bitPattern)) }
            }
        }
        return hash
    }

    static func fingerprint(_ data: Data) -> UInt64 { HRTFCacheFormat.fingerprint(data) }

    static let magic: [UInt8] = Array("SSDECD\u{0}\u{1}".utf8)

    /// Header, then the three tables' lengths and raw Float32 contents (little-endian), written
    /// to a temporary file and renamed, so a reader never sees half a file.
    static func write(_ filters: AmbisonicDecodeFilters, path: String) throws {
        var data = Data(magic)
        func put<T>(_ value: T) { withUnsafeBytes(of: value) { data.append(contentsOf: $0) } }
        put(UInt32(filters.taps).littleEndian)
        for table in [filters.reversedFilters, filters.earLevelCorrections, filters.itdExcessSamples] {
            put(UInt32(table.count).littleEndian)
            table.withUnsafeBytes { data.append(contentsOf: $0) }
        }
        try HRTFCacheFormat.storeAtomically(data, path: path, what: "the decoder cache")
    }

    static func read(path: String) throws -> AmbisonicDecodeFilters {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return try data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> AmbisonicDecodeFilters in
            var offset = magic.count
            func count() throws -> Int {
                guard offset + 4 <= raw.count else { throw HRTFLoadError("truncated decoder cache") }
                defer { offset += 4 }
                return Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
            }
            func table() throws -> [Float] {
                let n = try count(), bytes = n * MemoryLayout<Float>.size
                guard offset + bytes <= raw.count else { throw HRTFLoadError("truncated decoder cache") }
                defer { offset += bytes }
                return [Float](unsafeUninitializedCapacity: n) { buffer, initialized in
                    UnsafeMutableRawBufferPointer(buffer).copyMemory(from: UnsafeRawBufferPointer(rebasing: raw[offset..<offset + bytes]))
                    initialized = n
                }
            }
            guard raw.count >= magic.count, Array(raw[0..<magic.count]) == magic else { throw HRTFLoadError("not a decoder cache") }
            let taps = try count()
            let filters = try table(), levels = try table(), excess = try table()
            guard offset == raw.count,
                  let decoder = AmbisonicDecodeFilters(validatingTaps: taps, reversedFilters: filters,
                                                       earLevelCorrections: levels, itdExcessSamples: excess)
            else { throw HRTFLoadError("inconsistent decoder cache") }
            return decoder
        }
    }
}
