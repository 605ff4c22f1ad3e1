// Distance attenuation as OpenAL's inverse distance and PHASE's fade-out culling:
// gain = ref / (ref + rolloff · (d − ref)) with d clamped to [minimum, max]; past the cull
// distance the source fades to silence (and stops costing CPU). The reference is the
// listener's distance to the screen (0.6 m): a window there plays at unity, a nearer one
// louder (no clamp at the reference: windows on a desk sit 0.5–0.8 m away), down to a floor
// that keeps a source at the head finite.

public struct DistanceModel: Equatable, Sendable {
    public var referenceDistanceMetres: Double
    /// Nearer sources play as loud as at this distance.
    public var minimumDistanceMetres: Double
    public var rolloffFactor: Double
    public var maximumDistanceMetres: Double
    public var cullDistanceMetres: Double
    /// How long a source takes to fade out after it passes the cull distance (or back in).
    public var cullFadeSeconds: Double

    /// The listener's distance to the screen's centre (ScreenSpace's default, the server's
    /// `listener_distance`).
    public static let defaultReferenceDistanceMetres = 0.6
    public static let defaultMinimumDistanceMetres = 0.1

    public init(referenceDistanceMetres: Double = DistanceModel.defaultReferenceDistanceMetres,
                minimumDistanceMetres: Double = DistanceModel.defaultMinimumDistanceMetres, rolloffFactor: Double = 1,
                maximumDistanceMetres: Double = 100, cullDistanceMetres: Double = 200, cullFadeSeconds: Double = 0.25) {
        self.referenceDistanceMetres = referenceDistanceMetres
        self.minimumDistanceMetres = minimumDistanceMetres
        self.rolloffFactor = rolloffFactor
        self.maximumDistanceMetres = maximumDistanceMetres
        self.cullDistanceMetres = cullDistanceMetres
        self.cullFadeSeconds = cullFadeSeconds
    }

    public func gain(distanceMetres: Double) -> Double {
        let ref = referenceDistanceMetres
        let d = min(max(distanceMetres, minimumDistanceMetres), max(maximumDistanceMetres, ref))
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
