// Distance attenuation as OpenAL's "inverse distance clamped" and PHASE's fade-out culling:
// gain = ref / (ref + rolloff · (d − ref)) with d clamped to [ref, max]; past the cull
// distance the source fades to silence (and stops costing CPU).

public struct DistanceModel: Equatable, Sendable {
    public var referenceDistanceMetres: Double
    public var rolloffFactor: Double
    public var maximumDistanceMetres: Double
    public var cullDistanceMetres: Double
    /// How long a source takes to fade out after it passes the cull distance (or back in).
    public var cullFadeSeconds: Double

    public init(referenceDistanceMetres: Double = 1, rolloffFactor: Double = 1, maximumDistanceMetres: Double = 100,
                cullDistanceMetres: Double = 200, cullFadeSeconds: Double = 0.25) {
        self.referenceDistanceMetres = referenceDistanceMetres
        self.rolloffFactor = rolloffFactor
        self.maximumDistanceMetres = maximumDistanceMetres
        self.cullDistanceMetres = cullDistanceMetres
        self.cullFadeSeconds = cullFadeSeconds
    }

    public func gain(distanceMetres: Double) -> Double {
        let ref = referenceDistanceMetres
        let d = min(max(distanceMetres, ref), max(maximumDistanceMetres, ref))
        let denominator = ref + rolloffFactor * (d - ref)
        return denominator > 0 ? ref / denominator : 1
    }

    public func isCulled(distanceMetres: Double) -> Bool { distanceMetres >= cullDistanceMetres }

    /// Air absorption as a first-order low-pass whose corner falls with distance: none inside
    /// 10 m, about 9 kHz at 100 m.
    public func airAbsorptionCutoffHz(distanceMetres: Double) -> Double {
        distanceMetres <= 10 ? .infinity : 20000 * (20 / distanceMetres).squareRoot()
    }
}
