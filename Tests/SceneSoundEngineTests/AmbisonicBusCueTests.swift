import Foundation
import Testing
import SceneSoundDSP
import SceneSoundEngine

/// Sources on the ambisonic bus against the KEMAR set's own cues — ITD within 30 µs, ILD
/// within 2 dB, in the horizontal plane all round and 30° above and below, ahead and at the
/// sides — with the renderer's cap at zero HRTF voices; the per-source voice path's errors
/// are printed beside.
@Suite struct AmbisonicBusCueTests {
    static let noise = CueAccuracyTests.noise
    static let busOnly: OfflineRender = {
        var render = OfflineRender()
        render.configuration.maximumHRTFVoices = 0
        return render
    }()
    /// The MagLS decoder without its per-ear level corrections, for comparison.
    static let decoderAlone: OfflineRender = {
        var render = busOnly
        render.busFilters = AmbisonicDecodeFilters.design(from: KEMAR.set, levelCorrection: false)
        return render
    }()
    static let directions: [(Double, Double)] = [(0, 0), (30, 0), (-30, 0), (60, 0), (-60, 0), (90, 0), (-90, 0),
                                                 (120, 0), (-120, 0), (180, 0), (0, 30), (0, -30),
                                                 (90, 30), (-90, 30), (90, -30), (-90, -30)]

    struct Errors { var itdMicroseconds: Double; var ildDecibels: Double }

    static func errors(_ render: OfflineRender, azimuthDegrees: Double, elevationDegrees: Double,
                       reference: BinauralCues) -> Errors {
        let out = render.renderStatic(noise, azimuthDegrees: azimuthDegrees, elevationDegrees: elevationDegrees)
        let cues = CueAnalysis.cues(left: out.left, right: out.right, sampleRateHz: KEMAR.rateHz)
        return Errors(itdMicroseconds: cues.itdMicroseconds - reference.itdMicroseconds,
                      ildDecibels: cues.interauralLevelDifferenceDecibels - reference.interauralLevelDifferenceDecibels)
    }

    @Test(arguments: directions)
    func busVoicesMatchTheDataset(azimuthDegrees: Double, elevationDegrees: Double) {
        let reference = KEMAR.referenceCues(azimuthDegrees: azimuthDegrees, elevationDegrees: elevationDegrees,
                                            noise: Self.noise)
        let bus = Self.errors(Self.busOnly, azimuthDegrees: azimuthDegrees, elevationDegrees: elevationDegrees,
                              reference: reference)
        let voice = Self.errors(OfflineRender(), azimuthDegrees: azimuthDegrees, elevationDegrees: elevationDegrees,
                                reference: reference)
        let alone = Self.errors(Self.decoderAlone, azimuthDegrees: azimuthDegrees, elevationDegrees: elevationDegrees,
                                reference: reference)
        print("cues at azimuth \(azimuthDegrees)°, elevation \(elevationDegrees)°: KEMAR ITD "
              + String(format: "%.0f µs, ILD %.2f dB; ", reference.itdMicroseconds, reference.interauralLevelDifferenceDecibels)
              + String(format: "bus error ITD %+.1f µs, ILD %+.2f dB; ", bus.itdMicroseconds, bus.ildDecibels)
              + String(format: "voice error ITD %+.1f µs, ILD %+.2f dB; ", voice.itdMicroseconds, voice.ildDecibels)
              + String(format: "MagLS without level corrections ILD %+.2f dB", alone.ildDecibels))
        #expect(abs(bus.itdMicroseconds) <= 30)
        #expect(abs(bus.ildDecibels) <= 2)
    }

    /// The field is rotated by the head: ahead with the head yawed 90° left sounds at −90°.
    @Test func aBusSourceAheadWithTheHeadTurnedLeftSoundsRight() {
        let turned = Self.busOnly.renderStatic(Self.noise, azimuthDegrees: 0, headYawDegrees: 90)
        let cues = CueAnalysis.cues(left: turned.left, right: turned.right, sampleRateHz: KEMAR.rateHz)
        let reference = KEMAR.referenceCues(azimuthDegrees: -90, noise: Self.noise)
        print("bus, ahead with the head at yaw 90°: ITD \(cues.itdMicroseconds) µs, ILD \(cues.interauralLevelDifferenceDecibels) dB (KEMAR −90°: \(reference.itdMicroseconds) µs, \(reference.interauralLevelDifferenceDecibels) dB)")
        #expect(abs(cues.itdMicroseconds - reference.itdMicroseconds) <= 30)
        #expect(abs(cues.interauralLevelDifferenceDecibels - reference.interauralLevelDifferenceDecibels) <= 2)
    }

    /// A move between the paths should change the timbre, not the loudness: the bus's level
    /// per ear within 0.5 dB of the voice's (the decoder's per-ear level corrections measure
    /// 0.05 dB; without them the far ear at 90° is 2.4 dB low, order 3 cannot hold the head
    /// shadow's depth).
    @Test(arguments: [0.0, 45, -90])
    func busLevelMatchesTheVoices(azimuthDegrees: Double) {
        let voice = OfflineRender().renderStatic(Self.noise, azimuthDegrees: azimuthDegrees)
        let bus = Self.busOnly.renderStatic(Self.noise, azimuthDegrees: azimuthDegrees)
        func energy(_ x: [Float]) -> Double { x.reduce(0) { $0 + Double($1) * Double($1) } }
        let leftDecibels = 10 * log10(energy(bus.left) / energy(voice.left))
        let rightDecibels = 10 * log10(energy(bus.right) / energy(voice.right))
        print("bus over voice at \(azimuthDegrees)°: left \(leftDecibels) dB, right \(rightDecibels) dB")
        #expect(abs(leftDecibels) <= 0.5)
        #expect(abs(rightDecibels) <= 0.5)
    }
}
