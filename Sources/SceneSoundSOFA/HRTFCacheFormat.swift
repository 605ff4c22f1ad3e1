import Foundation
import SceneSoundDSP

/// The on-disk layout of a prepared set: a fixed little-endian header, then the delays, the
/// filters and the near field's table (`NearField.broadbandLevels`) as raw Float32. Written
/// to a temporary file and renamed, so a reader never sees half a file.
enum HRTFCacheFormat {
    static let magic: [UInt8] = Array("SSHRTF\u{0}\u{4}".utf8)

    /// FNV-1a, 64 bits: identifies the file's content, not its name or time.
    static func fingerprint(_ data: Data) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        data.withUnsafeBytes { bytes in
            for b in bytes { hash = (hash ^ UInt64(b)) &* 0x0000_0100_0000_01b3 }
        }
        return hash
    }

    static func write(_ set: HRTFSet, path: String) throws {
        var data = Data(magic)
        func put<T>(_ value: T) { withUnsafeBytes(of: value) { data.append(contentsOf: $0) } }
        put(set.sampleRateHz.bitPattern.littleEndian)
        put(UInt32(set.filterTaps).littleEndian)
        put(set.azimuthStepDegrees.bitPattern.littleEndian)
        put(set.elevationStepDegrees.bitPattern.littleEndian)
        put(UInt32(set.measurementCount).littleEndian)
        put(set.minimumRetainedEnergyFraction.bitPattern.littleEndian)
        put(set.medianRetainedEnergyFraction.bitPattern.littleEndian)
        put(set.measurementDistanceMetres.bitPattern.littleEndian)
        put(UInt32(set.delaysSamples.count).littleEndian)
        put(UInt32(set.reversedFilters.count).littleEndian)
        let nearField = set.nearField.broadbandLevels
        put(UInt32(nearField.count).littleEndian)
        set.delaysSamples.withUnsafeBytes { data.append(contentsOf: $0) }
        set.reversedFilters.withUnsafeBytes { data.append(contentsOf: $0) }
        nearField.withUnsafeBytes { data.append(contentsOf: $0) }
        try storeAtomically(data, path: path, what: "the HRTF cache")
    }

    /// Written to a temporary file and renamed, so that a reader (another process starting at
    /// the same moment) never sees half a file.
    static func storeAtomically(_ data: Data, path: String, what: String) throws {
        let temporary = path + ".\(getpid()).tmp"
        try data.write(to: URL(fileURLWithPath: temporary))
        guard rename(temporary, path) == 0 else {
            unlink(temporary)
            throw HRTFLoadError("cannot store \(what) at \(path)")
        }
    }

    static func read(path: String) throws -> HRTFSet {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return try data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> HRTFSet in
            var offset = 0
            func take<T: FixedWidthInteger>(_: T.Type) throws -> T {
                guard offset + MemoryLayout<T>.size <= raw.count else { throw HRTFLoadError("truncated HRTF cache") }
                defer { offset += MemoryLayout<T>.size }
                return T(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: T.self))
            }
            func floats(_ count: Int) throws -> [Float] {
                let bytes = count * MemoryLayout<Float>.size
                guard offset + bytes <= raw.count else { throw HRTFLoadError("truncated HRTF cache") }
                defer { offset += bytes }
                return [Float](unsafeUninitializedCapacity: count) { buffer, initialized in
                    UnsafeMutableRawBufferPointer(buffer).copyMemory(from: UnsafeRawBufferPointer(rebasing: raw[offset..<offset + bytes]))
                    initialized = count
                }
            }
            guard raw.count >= magic.count, Array(raw[0..<magic.count]) == magic else { throw HRTFLoadError("not an HRTF cache") }
            offset = magic.count
            let rate = Double(bitPattern: try take(UInt64.self))
            let taps = Int(try take(UInt32.self))
            let azStep = Double(bitPattern: try take(UInt64.self))
            let elStep = Double(bitPattern: try take(UInt64.self))
            let measurements = Int(try take(UInt32.self))
            let retained = Double(bitPattern: try take(UInt64.self))
            let medianRetained = Double(bitPattern: try take(UInt64.self))
            let distance = Double(bitPattern: try take(UInt64.self))
            let delayCount = Int(try take(UInt32.self))
            let filterCount = Int(try take(UInt32.self))
            let nearFieldCount = Int(try take(UInt32.self))
            let delays = try floats(delayCount)
            let filters = try floats(filterCount)
            let nearFieldLevels = try floats(nearFieldCount)
            guard offset == raw.count, taps > 0, distance > 0, taps % 8 == 0, azStep > 0, elStep > 0,
                  let nearField = NearField.restored(measurementDistanceMetres: max(distance, NearField.minimumDistanceMetres),
                                                     sampleRateHz: rate, broadbandLevels: nearFieldLevels),
                  delayCount == Int((360 / azStep).rounded()) * (Int((180 / elStep).rounded()) + 1) * 2,
                  filterCount == delayCount * taps
            else { throw HRTFLoadError("inconsistent HRTF cache") }
            return HRTFSet(sampleRateHz: rate, filterTaps: taps, azimuthStepDegrees: azStep, elevationStepDegrees: elStep,
                           reversedFilters: filters, delaysSamples: delays, measurementCount: measurements,
                           minimumRetainedEnergyFraction: retained, medianRetainedEnergyFraction: medianRetained,
                           measurementDistanceMetres: distance, nearField: nearField)
        }
    }
}
