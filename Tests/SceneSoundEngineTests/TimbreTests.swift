import Foundation
import Testing
import SceneSoundDSP
import SceneSoundEngine

/// The direct path's timbre: white noise rendered through the engine at 36 directions
/// (azimuth every 30°, elevation −30°, 0°, +30°, at the set's measurement distance), both
/// ears' power per third octave averaged over the directions and divided by the input's.
/// Diffuse-field equalized, that average is flat; the raw KEMAR set colours it by ~19 dB.
@Suite struct TimbreTests {
    static let noise: [Float] = { var n = WhiteNoise(seed: 19); return n.samples(Int(KEMAR.rateHz), amplitude: 0.1) }()
    static let inputBands = BandAnalysis.thirdOctavePowers(of: noise, sampleRateHz: KEMAR.rateHz)
    static let distanceMetres = 1.4

    /// Decibels per band, rendered over input, with the distance model's gain taken out.
    static func averageResponse(hrtf: HRTFSet, maximumHRTFVoices: Int = EngineConfiguration.defaultMaximumHRTFVoices)
        -> [Double]
    {
        var render = OfflineRender()
        render.hrtf = hrtf
        render.configuration.maximumHRTFVoices = maximumHRTFVoices
        var sum = [Double](repeating: 0, count: inputBands.count), count = 0
        for elevation in [-30.0, 0, 30] {
            for azimuth in stride(from: 0.0, to: 360, by: 30) {
                let out = render.renderStatic(noise, azimuthDegrees: azimuth, elevationDegrees: elevation,
                                              distanceMetres: distanceMetres)
                for ear in [out.left, out.right] {
                    let bands = BandAnalysis.thirdOctavePowers(of: ear, sampleRateHz: KEMAR.rateHz)
                    for k in sum.indices { sum[k] += bands[k] / inputBands[k] }
                    count += 1
                }
            }
        }
        let distanceGain = render.configuration.distanceModel.gain(distanceMetres: distanceMetres)
        return sum.map { 10 * log10($0 / Double(count) / (distanceGain * distanceGain)) }
    }

    static func table(_ name: String, _ decibels: [Double]) -> String {
        name + ": " + zip(BandAnalysis.thirdOctavesHz, decibels).map { String(format: "%g Hz %+.1f", $0, $1) }
            .joined(separator: ", ") + String(format: " (spread %.1f dB)", decibels.max()! - decibels.min()!)
    }

    static let rawSet: HRTFSet = try! HRTFPreparation.prepare(KEMAR.rawMeasurements, sampleRateHz: KEMAR.rateHz)

    /// The same average taken from the equalized responses themselves (each band's mean
    /// |H|²): what a renderer adding nothing of its own would give.
    static func setAverage(_ measurements: [HRIRMeasurement]) -> [Double] {
        let n = 8192, fft = FFT(size: n), binHz = KEMAR.rateHz / Double(n)
        var sum = [Double](repeating: 0, count: BandAnalysis.thirdOctavesHz.count), count = 0
        for elevation in [-30.0, 0, 30] {
            for azimuth in stride(from: 0.0, to: 360, by: 30) {
                let m = KEMAR.measurement(azimuthDegrees: azimuth, elevationDegrees: elevation, among: measurements)
                for ear in [m.left, m.right] {
                    let power = DiffuseFieldResponse.powerSpectrum(ear, fft: fft)
                    for (b, centre) in BandAnalysis.thirdOctavesHz.enumerated() {
                        let low = Int((centre * pow(2, -1.0 / 6) / binHz).rounded(.up))
                        let high = Int((centre * pow(2, 1.0 / 6) / binHz).rounded(.down))
                        sum[b] += power[low...high].reduce(0, +) / Double(high - low + 1)
                    }
                    count += 1
                }
            }
        }
        return sum.map { 10 * log10($0 / Double(count)) }
    }

    /// Equalized for the desktop's field, the direct path is flat within ±1 dB of the input's
    /// level in every third octave from 200 Hz to 12.5 kHz (the raw set, measured the same way:
    /// a spread of 20.9 dB), and within ±0.5 dB of the equalized set's own average over these
    /// directions (what the renderer adds of its own).
    @Test func theDirectPathIsFlatOnAverage() {
        let equalized = Self.averageResponse(hrtf: KEMAR.set)
        let raw = Self.averageResponse(hrtf: Self.rawSet)
        let own = Self.setAverage(KEMAR.measurements)
        print(Self.table("hrtf_eq diffuse, voices, rendered over input", equalized))
        print(Self.table("hrtf_eq diffuse, the equalized responses' own average", own))
        print(Self.table("hrtf_eq none, voices, rendered over input", raw))
        for (f, (level, reference)) in zip(BandAnalysis.thirdOctavesHz, zip(equalized, own)) {
            #expect(abs(level) <= 1, "\(f) Hz: \(level) dB")
            #expect(abs(level - reference) <= 0.5, "\(f) Hz: \(level) dB rendered, \(reference) dB the set's own")
        }
        #expect(raw.max()! - raw.min()! > 10)
    }

    /// The ambisonic bus (every source on it) is made from the same equalized set.
    @Test func theBusIsFlatOnAverage() {
        let bus = Self.averageResponse(hrtf: KEMAR.set, maximumHRTFVoices: 0)
        print(Self.table("hrtf_eq diffuse, bus, rendered over input", bus))
        for (f, level) in zip(BandAnalysis.thirdOctavesHz, bus) {
            #expect(abs(level) <= 1, "\(f) Hz: \(level) dB")
        }
    }
}

