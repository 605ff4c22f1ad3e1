// A listener's own head on a measured set: its interaural time differences scaled by head size.

extension HRTFSet {
    /// The MIT KEMAR's head width (the default set), taken as a set's own when it gives none.
    public static let kemarHeadWidthCentimetres = 15.2
    /// The head widths `--head-width-cm` accepts: children's heads to the largest adults'.
    public static let headWidthRangeCentimetres = 10.0...25.0

    /// The ITD's scale for a listener whose head is `widthCentimetres` wide, on a set measured
    /// on a head `setWidthCentimetres` wide. The ITD grows with the head's effective radius
    /// (Woodworth: (a / c)(θ + sin θ)); of the head's dimensions in Algazi, Avendano & Duda's
    /// (2001) fit of that radius the width weighs by far the most, and with depth and height
    /// taken to grow with it, the radius, and so the ITD, is proportional to the width.
    public static func interauralDelayScale(headWidthCentimetres width: Double,
                                            setHeadWidthCentimetres setWidth: Double = kemarHeadWidthCentimetres) -> Double {
        width / setWidth
    }

    /// The same set with every direction's ITD scaled by `factor`: the far ear's onset delay
    /// moves away from (or towards) the near ear's, which stays; the filters are shared.
    public func scalingInterauralDelays(by factor: Double) -> HRTFSet {
        precondition(factor > 0 && factor.isFinite)
        guard factor != 1 else { return self }
        var delays = delaysSamples
        let scale = Float(factor)
        for node in 0..<nodeCount {
            let left = delays[2 * node], right = delays[2 * node + 1]
            let near = min(left, right)
            delays[2 * node] = near + (left - near) * scale
            delays[2 * node + 1] = near + (right - near) * scale
        }
        return HRTFSet(sampleRateHz: sampleRateHz, filterTaps: filterTaps, azimuthStepDegrees: azimuthStepDegrees,
                       elevationStepDegrees: elevationStepDegrees, reversedFilters: reversedFilters,
                       delaysSamples: delays, measurementCount: measurementCount,
                       minimumRetainedEnergyFraction: minimumRetainedEnergyFraction,
                       medianRetainedEnergyFraction: medianRetainedEnergyFraction)
    }
}
