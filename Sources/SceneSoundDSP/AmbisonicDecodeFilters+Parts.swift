// A bus decoder rebuilt from its parts, as a cache stores them (the design itself is
// AmbisonicDecodeFilters.design).

extension AmbisonicDecodeFilters {
    /// The decoder made of a design's parts; nil when they do not fit together (a damaged
    /// store): `reversedFilters` holds two ears' `taps` per ambisonic channel, and the two
    /// tables have one entry per node (two for the levels, one per ear).
    public init?(validatingTaps taps: Int, reversedFilters: [Float], earLevelCorrections: [Float],
                 itdExcessSamples: [Float]) {
        guard taps > 0, reversedFilters.count == SphericalHarmonics.channelCount * 2 * taps,
              !itdExcessSamples.isEmpty, earLevelCorrections.count == 2 * itdExcessSamples.count
        else { return nil }
        self.taps = taps
        self.reversedFilters = reversedFilters
        self.earLevelCorrections = earLevelCorrections
        self.itdExcessSamples = itdExcessSamples
    }
}
