import Testing
import SceneSoundDSP
import SceneSoundEngine

/// The rendered cues against the KEMAR set's own (docs/ARCHITECTURE.md "Quality and performance bars").
@Suite struct CueAccuracyTests {
    static let noise: [Float] = { var n = WhiteNoise(seed: 42); return n.samples(24000, amplitude: 0.5) }()

    @Test(arguments: [0.0, 30, -30, 60, -60, 90, -90, 120, -120, 180])
    func dryNoiseMatchesTheDataset(azimuthDegrees: Double) {
        let reference = KEMAR.referenceCues(azimuthDegrees: azimuthDegrees, noise: Self.noise)
        let out = OfflineRender().renderStatic(Self.noise, azimuthDegrees: azimuthDegrees)
        let rendered = CueAnalysis.cues(left: out.left, right: out.right, sampleRateHz: KEMAR.rateHz)
        print("azimuth \(azimuthDegrees)°: ITD \(rendered.itdMicroseconds) µs (KEMAR \(reference.itdMicroseconds)), ILD \(rendered.interauralLevelDifferenceDecibels) dB (KEMAR \(reference.interauralLevelDifferenceDecibels))")
        #expect(abs(rendered.itdMicroseconds - reference.itdMicroseconds) <= 30)
        #expect(abs(rendered.interauralLevelDifferenceDecibels - reference.interauralLevelDifferenceDecibels) <= 1.5)
    }

    /// The measurement itself against the reference figures in docs/ARCHITECTURE.md.
    @Test(arguments: [(30.0, 276.0, 8.5), (60, 529, 13.9), (90, 706, 11.8)])
    func datasetCuesMatchTheDesignFigures(azimuthDegrees: Double, itdMicroseconds: Double, ildDecibels: Double) {
        for side in [1.0, -1.0] {
            let cues = KEMAR.referenceCues(azimuthDegrees: side * azimuthDegrees, noise: Self.noise,
                                           among: KEMAR.rawMeasurements)
            #expect(abs(cues.itdMicroseconds - side * itdMicroseconds) <= 30)
            #expect(abs(cues.interauralLevelDifferenceDecibels - side * ildDecibels) <= 1.5)
        }
    }
}
