// Turns measured HRIR pairs (already at the output rate) into an HRTFSet: a minimum-phase
// filter per ear, truncated to at most 128 taps at 48 kHz, plus a fractional onset delay per
// ear that restores the measured interaural time difference; then resampled onto a regular
// direction grid.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

public enum HRTFPreparationError: Error, Equatable, CustomStringConvertible {
    case noMeasurements
    case emptyResponse(index: Int)

    public var description: String {
        switch self {
        case .noMeasurements: return "the HRTF set has no measurements"
        case .emptyResponse(let index): return "measurement \(index) has an empty impulse response"
        }
    }
}

public enum HRTFPreparation {
    public static let gridStepDegrees = 5.0
    /// Every onset delay is at least this long: the fractional-delay interpolator needs one
    /// sample of look-ahead.
    public static let minimumDelaySamples: Float = 1
    /// Bumped whenever the preparation changes, so that on-disk caches are rebuilt.
    public static let version: UInt32 = 4

    /// The filter length at a rate: 128 taps at 48 kHz, scaled with the rate, rounded up to 8.
    public static func filterTaps(sampleRateHz: Double) -> Int {
        let taps = Int((128 * sampleRateHz / 48000).rounded(.up))
        return (taps + 7) / 8 * 8
    }

    public struct PreparedPair {
        public var left: [Float]
        public var right: [Float]
        public var leftDelaySamples: Float
        public var rightDelaySamples: Float
        /// Each ear's share of its measured energy kept by the truncation.
        public var leftRetainedEnergyFraction: Double
        public var rightRetainedEnergyFraction: Double
    }

    /// Minimum-phase filters and onset delays for one measured pair; `timing`: the pair whose
    /// interaural delay to keep, when `m` is an equalized version of it (whose rebuilt low
    /// frequencies would move the cross-correlation's peak).
    public static func preparePair(_ m: HRIRMeasurement, taps: Int, sampleRateHz: Double,
                                   timing: HRIRMeasurement? = nil) -> PreparedPair {
        let length = max(m.left.count, m.right.count, taps)
        let fullLeft = MinimumPhase.filter(from: m.left, outputLength: length)
        let fullRight = MinimumPhase.filter(from: m.right, outputLength: length)
        let left = Array(fullLeft.prefix(taps)), right = Array(fullRight.prefix(taps))

        // The minimum-phase pair has lost the measured interaural delay (and keeps a little
        // low-frequency group delay of its own): measure both with the same cross-correlation
        // and put the difference back as a delay on the lagging ear.
        let measured = CueAnalysis.itdSeconds(left: (timing ?? m).left, right: (timing ?? m).right, sampleRateHz: sampleRateHz)
        let residual = CueAnalysis.itdSeconds(left: left, right: right, sampleRateHz: sampleRateHz)
        let lagSamples = Float((measured - residual) * sampleRateHz)
        return PreparedPair(left: left, right: right,
                            leftDelaySamples: minimumDelaySamples + max(0, -lagSamples),
                            rightDelaySamples: minimumDelaySamples + max(0, lagSamples),
                            leftRetainedEnergyFraction: energyRatio(left, m.left),
                            rightRetainedEnergyFraction: energyRatio(right, m.right))
    }

    /// `equalization`: `.diffuse` equalizes the measurements first (DiffuseFieldEqualization);
    /// the interaural delays stay the measured ones.
    public static func prepare(_ measured: [HRIRMeasurement], sampleRateHz: Double,
                               equalization: HRTFEqualization = .none) throws -> HRTFSet {
        try validate(measured)
        let measurements = equalization == .diffuse
            ? DiffuseFieldEqualization.equalize(measured, sampleRateHz: sampleRateHz) : measured
        return try prepare(measurements, sampleRateHz: sampleRateHz, timing: measured)
    }

    static func validate(_ measurements: [HRIRMeasurement]) throws {
        guard !measurements.isEmpty else { throw HRTFPreparationError.noMeasurements }
        for (i, m) in measurements.enumerated() where m.left.isEmpty || m.right.isEmpty {
            throw HRTFPreparationError.emptyResponse(index: i)
        }
    }

    /// The set from `measurements` (already equalized as wanted), each pair's interaural
    /// delay taken from the same index of `timing` (the measurements they were made from).
    public static func prepare(_ measurements: [HRIRMeasurement], sampleRateHz: Double,
                               timing measured: [HRIRMeasurement]) throws -> HRTFSet {
        try validate(measurements)
        precondition(measured.count == measurements.count)
        let distances = measurements.compactMap(\.distanceMetres).filter { $0 > 0 }.sorted()
        let taps = filterTaps(sampleRateHz: sampleRateHz)
        let pairs = zip(measurements, measured).map { preparePair($0, taps: taps, sampleRateHz: sampleRateHz, timing: $1) }
        let directions = measurements.map {
            SphericalPosition(azimuthDegrees: $0.azimuthDegrees, elevationDegrees: $0.elevationDegrees).cartesian
        }

        let step = gridStepDegrees
        let azimuthCount = Int(360 / step), elevationCount = Int(180 / step) + 1
        var filters = [Float](repeating: 0, count: azimuthCount * elevationCount * 2 * taps)
        var delays = [Float](repeating: 0, count: azimuthCount * elevationCount * 2)
        for e in 0..<elevationCount {
            for a in 0..<azimuthCount {
                let node = e * azimuthCount + a
                let direction = SphericalPosition(azimuthDegrees: Double(a) * step,
                                                  elevationDegrees: Double(e) * step - 90).cartesian
                for (index, weight) in inverseDistanceWeights(to: direction, among: directions) {
                    let pair = pairs[index]
                    for t in 0..<taps {  // stored time-reversed for the FIR kernel
                        filters[(node * 2) * taps + t] += weight * pair.left[taps - 1 - t]
                        filters[(node * 2 + 1) * taps + t] += weight * pair.right[taps - 1 - t]
                    }
                    delays[node * 2] += weight * pair.leftDelaySamples
                    delays[node * 2 + 1] += weight * pair.rightDelaySamples
                }
            }
        }
        let retained = pairs.flatMap { [$0.leftRetainedEnergyFraction, $0.rightRetainedEnergyFraction] }.sorted()
        return HRTFSet(sampleRateHz: sampleRateHz, filterTaps: taps, azimuthStepDegrees: step,
                       elevationStepDegrees: step, reversedFilters: filters, delaysSamples: delays,
                       measurementCount: measurements.count,
                       minimumRetainedEnergyFraction: retained[0],
                       medianRetainedEnergyFraction: retained[retained.count / 2],
                       measurementDistanceMetres: distances.isEmpty ? HRTFSet.assumedMeasurementDistanceMetres
                                                                    : distances[distances.count / 2])
    }

    /// The nearest measured directions (at most four) with inverse-square angular-distance
    /// weights summing to one; a direction that was measured gets that measurement alone.
    static func inverseDistanceWeights(to direction: Vector3, among directions: [Vector3]) -> [(Int, Float)] {
        let neighbours = 4
        var nearest: [(index: Int, angle: Double)] = []
        for (i, d) in directions.enumerated() {
            let angle = acos(max(-1, min(1, d.dot(direction))))
            if nearest.count < neighbours || angle < nearest[nearest.count - 1].angle {
                nearest.append((i, angle))
                nearest.sort { $0.angle < $1.angle }
                if nearest.count > neighbours { nearest.removeLast() }
            }
        }
        if nearest[0].angle < 1e-6 { return [(nearest[0].index, 1)] }
        let raw = nearest.map { 1 / ($0.angle * $0.angle) }
        let total = raw.reduce(0, +)
        return zip(nearest, raw).map { ($0.index, Float($1 / total)) }
    }

    /// Energy of `truncated` over the energy of `measured`.
    public static func energyRatio(_ truncated: [Float], _ measured: [Float]) -> Double {
        var kept = 0.0, total = 0.0
        for v in truncated { kept += Double(v) * Double(v) }
        for v in measured { total += Double(v) * Double(v) }
        return total > 0 ? min(1, kept / total) : 1
    }
}
