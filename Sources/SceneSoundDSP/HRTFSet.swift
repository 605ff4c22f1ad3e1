// A prepared HRTF set: minimum-phase filters and per-ear delays on a regular
// azimuth × elevation grid, interpolated bilinearly so that a moving source never jumps
// between measured directions.

import Synchronization

/// One measured head-related impulse response pair at the output rate.
public struct HRIRMeasurement: Sendable {
    public var azimuthDegrees: Double
    public var elevationDegrees: Double
    public var left: [Float]
    public var right: [Float]
    /// The source's distance from the head's centre (the SOFA SourcePosition radius), when known.
    public var distanceMetres: Double?

    public init(azimuthDegrees: Double, elevationDegrees: Double, left: [Float], right: [Float],
                distanceMetres: Double? = nil) {
        self.azimuthDegrees = azimuthDegrees
        self.elevationDegrees = elevationDegrees
        self.left = left
        self.right = right
        self.distanceMetres = distanceMetres
    }
}

public final class HRTFSet: @unchecked Sendable {  // immutable after init
    public let sampleRateHz: Double
    /// Filter length, a multiple of 8 so that the fast kernels need no tail loop.
    public let filterTaps: Int
    public let azimuthStepDegrees: Double
    public let elevationStepDegrees: Double
    public let azimuthCount: Int
    public let elevationCount: Int
    /// Node-major, then ear (left, right), then taps — stored time-reversed, as the FIR
    /// kernel consumes them.
    public let reversedFilters: [Float]
    /// Node-major, then ear: the onset delay of each ear in samples.
    public let delaysSamples: [Float]
    /// Number of measurements the set was prepared from (for status display).
    public let measurementCount: Int
    /// The least share of a measured response's energy that its truncated filter kept, and
    /// the median share over all responses.
    public let minimumRetainedEnergyFraction: Double
    public let medianRetainedEnergyFraction: Double
    /// How far from the head's centre the set was measured: nearer sources get the near-field
    /// corrections (NearField).
    public let measurementDistanceMetres: Double
    /// Assumed for a set whose measurements carry no distance (MIT KEMAR's).
    public static let assumedMeasurementDistanceMetres = 1.4
    /// Added to every onset delay the set gives (`delays`, `interpolate`), on the voices and the
    /// bus alike: the voices' fractional-delay interpolator (SpectralVoiceMix.delayCoefficients)
    /// reads three samples ahead of its delay, and the set's leading ear is at one sample.
    public static let delayLookAheadSamples: Float = 3

    public var nodeCount: Int { azimuthCount * elevationCount }
    /// The largest onset delay a voice may be given: the set's, plus the growth of the lagging
    /// ear's delay for near sources (NearField). Kept, not searched for: every source's voices
    /// ask for it when they are made.
    public let maximumDelaySamples: Float

    /// The near-field corrections for the set's measurement distance: made on first use (a few
    /// milliseconds) unless given at init (the loader's cache keeps them with the set).
    public var nearField: NearField {
        nearFieldMade.withLock { made in
            if let made { return made }
            let field = NearField(measurementDistanceMetres: measurementDistanceMetres, sampleRateHz: sampleRateHz)
            made = field
            return field
        }
    }
    private let nearFieldMade: Mutex<NearField?>

    public init(sampleRateHz: Double, filterTaps: Int, azimuthStepDegrees: Double, elevationStepDegrees: Double,
                reversedFilters: [Float], delaysSamples: [Float], measurementCount: Int,
                minimumRetainedEnergyFraction: Double, medianRetainedEnergyFraction: Double,
                measurementDistanceMetres: Double = HRTFSet.assumedMeasurementDistanceMetres, nearField: NearField? = nil) {
        precondition(nearField.map { $0.measurementDistanceMetres == max(measurementDistanceMetres, NearField.minimumDistanceMetres)
                                     && $0.sampleRateHz == sampleRateHz } ?? true)
        nearFieldMade = Mutex(nearField)
        precondition(filterTaps > 0 && filterTaps % 8 == 0)
        let azimuthCount = Int((360 / azimuthStepDegrees).rounded())
        let elevationCount = Int((180 / elevationStepDegrees).rounded()) + 1
        precondition(reversedFilters.count == azimuthCount * elevationCount * 2 * filterTaps)
        precondition(delaysSamples.count == azimuthCount * elevationCount * 2)
        self.sampleRateHz = sampleRateHz
        self.filterTaps = filterTaps
        self.azimuthStepDegrees = azimuthStepDegrees
        self.elevationStepDegrees = elevationStepDegrees
        self.azimuthCount = azimuthCount
        self.elevationCount = elevationCount
        self.reversedFilters = reversedFilters
        self.delaysSamples = delaysSamples
        maximumDelaySamples = (delaysSamples.max() ?? 0) + Self.delayLookAheadSamples
            + NearField.delayMarginSamples(sampleRateHz: sampleRateHz)
        self.measurementCount = measurementCount
        self.minimumRetainedEnergyFraction = minimumRetainedEnergyFraction
        self.medianRetainedEnergyFraction = medianRetainedEnergyFraction
        self.measurementDistanceMetres = measurementDistanceMetres
    }

    /// The four grid nodes around a direction and their bilinear weights.
    public struct Neighbourhood: Sendable {
        public var nodes: (Int, Int, Int, Int)
        public var weights: (Float, Float, Float, Float)
    }

    public func neighbourhood(azimuthDegrees: Double, elevationDegrees: Double) -> Neighbourhood {
        // Azimuths come from atan2, within one turn: the remainder (fmod, slow) only for others.
        var az = azimuthDegrees >= -360 && azimuthDegrees < 360 ? azimuthDegrees
                                                               : azimuthDegrees.truncatingRemainder(dividingBy: 360)
        if az < 0 { az += 360 }
        let el = min(90, max(-90, elevationDegrees))
        let a = az / azimuthStepDegrees
        let e = (el + 90) / elevationStepDegrees
        let a0 = min(Int(a), azimuthCount - 1), e0 = min(Int(e), elevationCount - 1)
        let a1 = (a0 + 1) % azimuthCount, e1 = min(e0 + 1, elevationCount - 1)
        let fa = Float(a - Double(a0)), fe = Float(e - Double(e0))
        return Neighbourhood(
            nodes: (e0 * azimuthCount + a0, e0 * azimuthCount + a1, e1 * azimuthCount + a0, e1 * azimuthCount + a1),
            weights: ((1 - fa) * (1 - fe), fa * (1 - fe), (1 - fa) * fe, fa * fe))
    }

    /// Writes the interpolated filters (time-reversed, `filterTaps` each) and per-ear delays
    /// for a direction. Real-time safe: reads the set, writes only the caller's buffers.
    public func interpolate(azimuthDegrees: Double, elevationDegrees: Double,
                            reversedLeft: UnsafeMutablePointer<Float>, reversedRight: UnsafeMutablePointer<Float>)
        -> (left: Float, right: Float)
    {
        let hood = neighbourhood(azimuthDegrees: azimuthDegrees, elevationDegrees: elevationDegrees)
        return reversedFilters.withUnsafeBufferPointer { filters in
            blend(filters.baseAddress!, hood, ear: 0, into: reversedLeft)
            blend(filters.baseAddress!, hood, ear: 1, into: reversedRight)
            return (blendDelay(hood, ear: 0), blendDelay(hood, ear: 1))
        }
    }

    /// The per-ear delays alone for a direction (cheap: four nodes, two ears).
    public func delays(azimuthDegrees: Double, elevationDegrees: Double) -> (left: Float, right: Float) {
        delays(neighbourhood(azimuthDegrees: azimuthDegrees, elevationDegrees: elevationDegrees))
    }

    /// The same for a neighbourhood already found.
    public func delays(_ hood: Neighbourhood) -> (left: Float, right: Float) {
        (blendDelay(hood, ear: 0), blendDelay(hood, ear: 1))
    }

    @inline(__always)
    private func blend(_ filters: UnsafePointer<Float>, _ hood: Neighbourhood, ear: Int, into out: UnsafeMutablePointer<Float>) {
        let taps = filterTaps
        let (n0, n1, n2, n3) = hood.nodes
        let (w0, w1, w2, w3) = hood.weights
        let p0 = filters + (n0 * 2 + ear) * taps, p1 = filters + (n1 * 2 + ear) * taps
        let p2 = filters + (n2 * 2 + ear) * taps, p3 = filters + (n3 * 2 + ear) * taps
        for i in 0..<taps {
            out[i] = w0 * p0[i] + w1 * p1[i] + w2 * p2[i] + w3 * p3[i]
        }
    }

    @inline(__always)
    private func blendDelay(_ hood: Neighbourhood, ear: Int) -> Float {
        let (n0, n1, n2, n3) = hood.nodes
        let (w0, w1, w2, w3) = hood.weights
        return delaysSamples.withUnsafeBufferPointer { d in
            w0 * d[n0 * 2 + ear] + w1 * d[n1 * 2 + ear] + w2 * d[n2 * 2 + ear] + w3 * d[n3 * 2 + ear]
        } + Self.delayLookAheadSamples
    }
}
