import Foundation
import Testing
import SceneSoundDSP
import SceneSoundEngine

/// Sources nearer than the set's measurement distance (KEMAR: 1.4 m), as windows on a desk
/// are: measured on rendered white noise against the rigid-sphere model (NearField).
@Suite struct NearFieldTests {
    /// Quiet enough that the limiter (−1 dBFS) never acts at 0.5 m.
    static let noise: [Float] = { var n = WhiteNoise(seed: 7); return n.samples(Int(KEMAR.rateHz), amplitude: 0.05) }()
    static let bandsHz: [Double] = [200, 250, 315, 400, 500, 630, 800, 1000, 1250, 1600, 2000, 2500, 3150, 4000]
    static let far = KEMAR.set.measurementDistanceMetres

    static func bands(_ signal: [Float]) -> [Double] {
        BandAnalysis.thirdOctavePowers(of: signal, centresHz: bandsHz, sampleRateHz: KEMAR.rateHz)
    }

    static func decibels(_ ratio: Double) -> Double { 10 * log10(ratio) }
    static func energy(_ x: [Float]) -> Double { x.reduce(0) { $0 + Double($1) * Double($1) } }

    static func renderAt(azimuthDegrees: Double, distanceMetres: Double) -> (left: [Float], right: [Float]) {
        OfflineRender().renderStatic(noise, azimuthDegrees: azimuthDegrees, distanceMetres: distanceMetres)
    }

    /// The sphere's ILD change per band for a source on the left ear's axis, r over R.
    static func modelILDChange(_ frequencyHz: Double, distanceMetres r: Double) -> Double {
        func ear(_ incidence: Double, _ d: Double) -> Double {
            NearField.sphereMagnitude(radiusMetres: NearField.defaultHeadRadiusMetres, distanceMetres: d,
                                      incidenceRadians: incidence, frequencyHz: frequencyHz)
        }
        return 20 * log10(ear(0, r) / ear(.pi, r)) - 20 * log10(ear(0, far) / ear(.pi, far))
    }

    /// At 90°, 0.5 m over 1.4 m: the ILD grows per third octave as the sphere's (±0.5 dB), the
    /// near ear rises 10 ± 1 dB, the far ear 7.5 ± 1.5 dB (inverse distance alone: 8.9 dB).
    @Test func aLateralSourceAtHalfAMetre() {
        let near = Self.renderAt(azimuthDegrees: 90, distanceMetres: 0.5)
        let away = Self.renderAt(azimuthDegrees: 90, distanceMetres: Self.far)
        let (nl, nr, fl, fr) = (Self.bands(near.left), Self.bands(near.right), Self.bands(away.left), Self.bands(away.right))
        var lines: [String] = []
        for (b, f) in Self.bandsHz.enumerated() {
            let rendered = Self.decibels(nl[b] / nr[b]) - Self.decibels(fl[b] / fr[b])
            let model = Self.modelILDChange(f, distanceMetres: 0.5)
            lines.append(String(format: "%g Hz %+.2f (sphere %+.2f)", f, rendered, model))
            #expect(abs(rendered - model) <= 0.5, "\(f) Hz: ILD change \(rendered) dB, the sphere's \(model) dB")
        }
        let nearEar = Self.decibels(Self.energy(near.left) / Self.energy(away.left))
        let farEar = Self.decibels(Self.energy(near.right) / Self.energy(away.right))
        print("90°, 0.5 m over \(Self.far) m, ILD change per third octave: " + lines.joined(separator: ", "))
        print(String(format: "90°, 0.5 m over %.1f m: near ear %+.2f dB, far ear %+.2f dB", Self.far, nearEar, farEar))
        #expect(abs(nearEar - 10) <= 1)
        #expect(abs(farEar - 7.5) <= 1.5)
    }

    /// Ahead at 0.5 m each ear takes its response 6.4° to its side, symmetrically: no level
    /// difference appears (|ILD| ≤ 0.3 dB), and the ITD stays zero.
    @Test func aSourceAheadAtHalfAMetreStaysCentred() {
        let near = Self.renderAt(azimuthDegrees: 0, distanceMetres: 0.5)
        let cues = CueAnalysis.cues(left: near.left, right: near.right, sampleRateHz: KEMAR.rateHz)
        print("ahead at 0.5 m: ILD \(cues.interauralLevelDifferenceDecibels) dB, ITD \(cues.itdMicroseconds) µs")
        #expect(abs(cues.interauralLevelDifferenceDecibels) <= 0.3)
        #expect(abs(cues.itdMicroseconds) <= 10)
    }

    /// The far ear's path around the head grows as the source nears: at 90°, 0.5 m, the ITD
    /// is 14 µs longer than at 1.4 m (ray model; ±10 µs).
    @Test func theITDGrowsNearTheHead() {
        let near = Self.renderAt(azimuthDegrees: 90, distanceMetres: 0.5)
        let away = Self.renderAt(azimuthDegrees: 90, distanceMetres: Self.far)
        let grown = CueAnalysis.cues(left: near.left, right: near.right, sampleRateHz: KEMAR.rateHz).itdMicroseconds
            - CueAnalysis.cues(left: away.left, right: away.right, sampleRateHz: KEMAR.rateHz).itdMicroseconds
        print("90°: ITD at 0.5 m minus at \(Self.far) m: \(grown) µs")
        #expect(abs(abs(grown) - 14) <= 10)
    }

    /// A window 0.8 m to the left; the head moves 0.3 m towards it (opentrack's x): it then
    /// sounds as a window at 0.5 m does, ear by ear, within 0.2 dB, louder by the distance law
    /// and with the level difference the sphere gains.
    @Test func aHeadMovingTowardAWindowBringsItNear() {
        let moved = OfflineRender().render(Self.noise) { _ in
            (Vector3(x: -0.8, y: 0, z: 0), HeadPose(positionMetres: Vector3(x: -0.3, y: 0, z: 0)))
        }
        let still = Self.renderAt(azimuthDegrees: 90, distanceMetres: 0.8)
        let near = Self.renderAt(azimuthDegrees: 90, distanceMetres: 0.5)
        let left = Self.decibels(Self.energy(moved.left) / Self.energy(near.left))
        let right = Self.decibels(Self.energy(moved.right) / Self.energy(near.right))
        let gained = Self.decibels(Self.energy(moved.left) / Self.energy(still.left))
        print(String(format: "head moved 0.3 m toward a window at 0.8 m: left %+.2f dB, right %+.2f dB against one at 0.5 m; near ear %+.2f dB over staying",
                     left, right, gained))
        // The level difference grows as the sphere's does from 0.8 to 0.5 m (at 1 kHz: 1.5 dB).
        let grown = CueAnalysis.ildDecibels(left: moved.left, right: moved.right)
            - CueAnalysis.ildDecibels(left: still.left, right: still.right)
        let model = Self.modelILDChange(1000, distanceMetres: 0.5) - Self.modelILDChange(1000, distanceMetres: 0.8)
        print(String(format: "  its ILD grew %+.2f dB (the sphere at 1 kHz: %+.2f dB)", grown, model))
        #expect(abs(left) <= 0.2 && abs(right) <= 0.2)
        #expect(gained >= 3)
        #expect(abs(grown - model) <= 0.5)
    }
}
