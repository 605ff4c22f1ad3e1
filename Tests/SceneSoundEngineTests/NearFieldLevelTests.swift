import Foundation
import Testing
import SceneSoundDSP
import SceneSoundEngine

/// A source sounds as loud wherever the overload governor puts it — on its own HRTF voice or on
/// the ambisonic bus — and as loud as the distance law and the near field say, ear by ear: white
/// noise rendered with every source on a voice (the default cap) and with none (`--hrtf-voices 0`),
/// per ear, broadband, at azimuths every 30°, elevations −30° to +60°, 0.3 to 2 m. The law: the
/// DistanceModel's gain over its gain at the set's measurement distance, times the near field's
/// gain for the ear (NearField.broadbandGain at its head-centred incidence), against each path's
/// own render at the measurement distance.
@Suite struct NearFieldLevelTests {
    static let noise: [Float] = { var n = WhiteNoise(seed: 11); return n.samples(24000, amplitude: 0.05) }()
    static let busOnly: OfflineRender = { var r = OfflineRender(); r.configuration.maximumHRTFVoices = 0; return r }()
    static let far = KEMAR.set.measurementDistanceMetres
    static let distancesMetres = [0.3, 0.5, 0.7, 1.0, 2.0]
    static let elevationsDegrees = [-30.0, 0, 30, 60]
    static let field = NearField(measurementDistanceMetres: far, sampleRateHz: KEMAR.rateHz)

    static func energy(_ x: [Float]) -> Double { x.reduce(0) { $0 + Double($1) * Double($1) } }
    static func decibels(_ x: [Float], over y: [Float]) -> Double { 10 * log10(energy(x) / energy(y)) }

    /// The level each ear should gain from the measurement distance to `distanceMetres`, dB.
    static func law(azimuthDegrees: Double, elevationDegrees: Double, distanceMetres: Double) -> (left: Double, right: Double) {
        let model = OfflineRender().configuration.distanceModel
        let distance = 20 * log10(model.gain(distanceMetres: distanceMetres) / model.gain(distanceMetres: far))
        guard distanceMetres < far else { return (distance, distance) }
        let ears = field.ears(of: SphericalPosition(azimuthDegrees: azimuthDegrees, elevationDegrees: elevationDegrees,
                                                    distanceMetres: distanceMetres).cartesian)
        func near(_ incidence: Double) -> Double {
            20 * log10(Double(field.broadbandGain(incidenceDegrees: incidence, distanceMetres: distanceMetres)))
        }
        return (distance + near(ears.incidenceDegrees.left), distance + near(ears.incidenceDegrees.right))
    }

    @Test(arguments: elevationsDegrees)
    func voiceAndBusAtOneLevel(elevationDegrees: Double) {
        var lines: [String] = []
        var worst = [Double: (voiceBus: Double, voiceLaw: Double, busLaw: Double)]()
        for azimuth in stride(from: 0.0, to: 360, by: 30) {
            let reference = OfflineRender().renderStatic(Self.noise, azimuthDegrees: azimuth,
                                                         elevationDegrees: elevationDegrees, distanceMetres: Self.far)
            let busReference = Self.busOnly.renderStatic(Self.noise, azimuthDegrees: azimuth,
                                                         elevationDegrees: elevationDegrees, distanceMetres: Self.far)
            for r in Self.distancesMetres {
                let voice = OfflineRender().renderStatic(Self.noise, azimuthDegrees: azimuth,
                                                         elevationDegrees: elevationDegrees, distanceMetres: r)
                let bus = Self.busOnly.renderStatic(Self.noise, azimuthDegrees: azimuth,
                                                    elevationDegrees: elevationDegrees, distanceMetres: r)
                let law = Self.law(azimuthDegrees: azimuth, elevationDegrees: elevationDegrees, distanceMetres: r)
                let voiceBus = (Self.decibels(voice.left, over: bus.left), Self.decibels(voice.right, over: bus.right))
                let voiceLaw = (Self.decibels(voice.left, over: reference.left) - law.left,
                                Self.decibels(voice.right, over: reference.right) - law.right)
                let busLaw = (Self.decibels(bus.left, over: busReference.left) - law.left,
                              Self.decibels(bus.right, over: busReference.right) - law.right)
                lines.append(String(format: "%3.0f° %.1f m: voice−bus %+.2f/%+.2f, voice−law %+.2f/%+.2f, bus−law %+.2f/%+.2f",
                                    azimuth, r, voiceBus.0, voiceBus.1, voiceLaw.0, voiceLaw.1, busLaw.0, busLaw.1))
                var cell = worst[r] ?? (0, 0, 0)
                cell.voiceBus = max(cell.voiceBus, abs(voiceBus.0), abs(voiceBus.1))
                cell.voiceLaw = max(cell.voiceLaw, abs(voiceLaw.0), abs(voiceLaw.1))
                cell.busLaw = max(cell.busLaw, abs(busLaw.0), abs(busLaw.1))
                worst[r] = cell
                #expect(abs(voiceBus.0) <= 0.5 && abs(voiceBus.1) <= 0.5,
                        "\(azimuth)°, \(elevationDegrees)°, \(r) m: voice over bus \(voiceBus) dB (left, right)")
                #expect(abs(voiceLaw.0) <= 0.5 && abs(voiceLaw.1) <= 0.5,
                        "\(azimuth)°, \(elevationDegrees)°, \(r) m: voice against the law \(voiceLaw) dB")
                #expect(abs(busLaw.0) <= 0.5 && abs(busLaw.1) <= 0.5,
                        "\(azimuth)°, \(elevationDegrees)°, \(r) m: bus against the law \(busLaw) dB")
            }
        }
        print("elevation \(elevationDegrees)°, level per ear (left/right, dB):\n  " + lines.joined(separator: "\n  "))
        print("elevation \(elevationDegrees)°, largest per distance: " + Self.distancesMetres.map { r in
            String(format: "%.1f m voice−bus %.2f, voice−law %.2f, bus−law %.2f", r, worst[r]!.voiceBus, worst[r]!.voiceLaw,
                   worst[r]!.busLaw)
        }.joined(separator: "; "))
    }
}
