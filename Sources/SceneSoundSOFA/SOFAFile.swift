import CMySofa
import Foundation
import SceneSoundDSP
import SceneSoundMedia

public struct HRTFLoadError: Error, CustomStringConvertible, Equatable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// The measured HRIRs of a SOFA (AES69) file, as libmysofa reads them.
public struct SOFAFile: Sendable {
    public var path: String
    public var sampleRateHz: Double
    public var measurements: [HRIRMeasurement]

    public static let defaultPath = "/usr/share/libmysofa/default.sofa"

    /// Reads and validates a SOFA file. Measured onset delays (Data.Delay) are folded into
    /// the responses so that later stages see one plain impulse response per ear.
    public static func load(path: String) throws -> SOFAFile {
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw HRTFLoadError("\(path): no such readable SOFA file")
        }
        var error: Int32 = 0
        guard let hrtf = mysofa_load(path, &error), error == MYSOFA_OK else {
            throw HRTFLoadError("\(path): not a valid SOFA file (\(describe(error)))")
        }
        defer { mysofa_free(hrtf) }
        let check = mysofa_check(hrtf)
        guard check == MYSOFA_OK else {
            throw HRTFLoadError("\(path): unsupported SOFA layout (\(describe(check)))")
        }
        mysofa_tospherical(hrtf)
        let h = hrtf.pointee
        guard h.R == 2 else { throw HRTFLoadError("\(path): needs 2 receivers (ears), has \(h.R)") }
        guard h.DataSamplingRate.elements >= 1 else { throw HRTFLoadError("\(path): no sampling rate") }
        let rate = Double(h.DataSamplingRate.values[0])
        guard rate >= 8000, rate <= 384_000 else { throw HRTFLoadError("\(path): implausible sampling rate \(rate) Hz") }
        let m = Int(h.M), n = Int(h.N)
        let delays = h.DataDelay
        func delay(_ measurement: Int, _ ear: Int) -> Int {
            // Data.Delay is [I R] (one pair for all) or [M R]; in samples.
            guard let values = delays.values, delays.elements > 0 else { return 0 }
            let index = delays.elements >= UInt32(m * 2) ? measurement * 2 + ear : ear % Int(delays.elements)
            return max(0, Int(values[index].rounded()))
        }
        var measurements: [HRIRMeasurement] = []
        measurements.reserveCapacity(m)
        for i in 0..<m {
            let position = h.SourcePosition.values + i * 3  // azimuth°, elevation°, radius
            var ears: [[Float]] = []
            for ear in 0..<2 {
                let start = h.DataIR.values + (i * 2 + ear) * n
                let pad = delay(i, ear)
                ears.append([Float](repeating: 0, count: pad) + Array(UnsafeBufferPointer(start: start, count: n)))
            }
            measurements.append(HRIRMeasurement(azimuthDegrees: Double(position[0]), elevationDegrees: Double(position[1]),
                                                left: ears[0], right: ears[1], distanceMetres: Double(position[2])))
        }
        return SOFAFile(path: path, sampleRateHz: rate, measurements: measurements)
    }

    /// The same measurements at another rate (libsoxr, very high quality).
    public func resampled(to rateHz: Double) throws -> [HRIRMeasurement] {
        guard rateHz != sampleRateHz else { return measurements }
        return try measurements.map { m in
            var r = m
            r.left = try Resampler.resample(m.left, channelCount: 1, from: sampleRateHz, to: rateHz)
            r.right = try Resampler.resample(m.right, channelCount: 1, from: sampleRateHz, to: rateHz)
            return r
        }
    }

    static func describe(_ code: Int32) -> String {
        switch code {
        case Int32(MYSOFA_INVALID_FORMAT): return "invalid format"
        case Int32(MYSOFA_UNSUPPORTED_FORMAT): return "unsupported format"
        case Int32(MYSOFA_NO_MEMORY): return "out of memory"
        case Int32(MYSOFA_READ_ERROR): return "read error"
        case Int32(MYSOFA_INVALID_ATTRIBUTES): return "invalid attributes"
        case Int32(MYSOFA_INVALID_DIMENSIONS): return "invalid dimensions"
        case Int32(MYSOFA_INVALID_COORDINATE_TYPE): return "invalid coordinate type"
        case Int32(MYSOFA_ONLY_EMITTER_WITH_ECI_SUPPORTED): return "only one emitter supported"
        case Int32(MYSOFA_ONLY_DELAYS_WITH_IR_OR_MR_SUPPORTED): return "delays must be IR or MR"
        case Int32(MYSOFA_ONLY_THE_SAME_SAMPLING_RATE_SUPPORTED): return "all measurements must share one rate"
        case Int32(MYSOFA_RECEIVERS_WITH_RCI_SUPPORTED), Int32(MYSOFA_RECEIVERS_WITH_CARTESIAN_SUPPORTED),
             Int32(MYSOFA_INVALID_RECEIVER_POSITIONS): return "unsupported receiver positions"
        case Int32(MYSOFA_ONLY_SOURCES_WITH_MC_SUPPORTED): return "unsupported source positions"
        default: return "libmysofa error \(code)"
        }
    }
}
