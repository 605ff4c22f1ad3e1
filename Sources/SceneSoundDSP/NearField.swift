// Sources nearer than the set's measurement distance (KEMAR's: 1.4 m; windows on a desk sit
// at 0.5–0.8 m). A measured set holds the far field only; three corrections bring it near:
//
// - the distance variation function (Kan, Jin & van Schaik 2009): each ear's response times
//   the ratio of a rigid sphere's response at the source's distance to its response at the
//   measurement distance, for that ear's angle of incidence (Duda & Martens 1998). At 90°,
//   0.5 m against 1.4 m, the near ear gains ~1.2 dB and the far ear loses ~1.4 dB beyond
//   the inverse distance law; the level difference grows at every frequency. Tabulated here
//   per band, incidence angle and distance when the set is loaded; a voice's filters and the
//   bus take each ear's mean over the bands from 200 Hz to 6.3 kHz (broadbandGain).
// - parallax: each ear sees a near source from its own direction. Its response is the set's
//   for the point where the line from the ear through the source meets the measurement
//   sphere (3D Tune-In's method): ahead at 0.5 m, 6.4° to each side. It brings the response's
//   spectrum, not its level: the distance variation above already holds how the ear's view
//   changes, so a voice scales each ear's parallax response to the energy of the head-centred
//   one (SpectralVoiceMix.prepareFilters), as the bus's level is.
// - the interaural delay's growth: each ear's path to the source (straight where the ear sees
//   it, else the tangent and the arc around the sphere) against the path the set's response
//   for that direction already holds; the difference delays the lagging ear (+14 µs at 90°,
//   0.5 m).
//
// The table the render reads (each ear's mean gain over the broadband bands) is made in init
// and its lookups are real-time safe; the table of every band (bandGains) is made on its first
// use.

import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

public final class NearField: @unchecked Sendable {  // immutable after init
    public let measurementDistanceMetres: Double
    public let headRadiusMetres: Double
    public let sampleRateHz: Double
    /// Nearer sources are rendered as at this distance.
    public static let minimumDistanceMetres = 0.1
    public static let defaultHeadRadiusMetres = 0.0875
    public static let speedOfSoundMetresPerSecond = 343.0
    /// The bands the gains are tabulated at (the variation is smooth in frequency: 0.5 dB
    /// across the audible range at 0.5 m).
    public static let bandCentresHz: [Double] = [50, 100, 200, 400, 800, 1600, 3150, 6300, 12500, 20000]
    public var bandCount: Int { Self.bandCentresHz.count }

    static let angleStepDegrees = 5.0
    static let angleCount = 37
    static let distanceCount = 48
    /// Per incidence angle, per distance (evenly spaced in 1 / distance, the first the
    /// measurement distance), per band: the sphere's level, dB, the inverse distance law taken
    /// out. Made on bandGains' first call (the render needs only `broadbandTable`): its bands
    /// above 6.3 kHz are most of the series' terms, which every start of the engine paid for.
    private let table = Mutex<[Float]?>(nil)
    /// Per incidence angle and distance: the mean over `broadbandBands` of each band's level
    /// there less its level at the measurement distance (dB) — broadbandGain's sum,
    /// interpolated once instead of band by band (the interpolation is linear: the same value).
    private let broadbandTable: [Float]

    /// Makes the render's table: the sphere's series at every angle, distance and broadband
    /// band, ~25 M instructions (a few milliseconds of every start, unless a cache holds it:
    /// `restored`, the HRTF cache's).
    public convenience init(measurementDistanceMetres: Double, sampleRateHz: Double,
                            headRadiusMetres: Double = NearField.defaultHeadRadiusMetres) {
        let far = max(measurementDistanceMetres, Self.minimumDistanceMetres)
        let levels = Self.levels(bands: Self.broadbandBands, measurementDistanceMetres: far, headRadiusMetres: headRadiusMetres)
        let bands = Self.broadbandBands.count
        var broadband = [Float](repeating: 0, count: Self.angleCount * Self.distanceCount)
        for a in 0..<Self.angleCount {
            for d in 0..<Self.distanceCount {
                var sum: Float = 0
                for b in 0..<bands {
                    sum += levels[(a * Self.distanceCount + d) * bands + b] - levels[(a * Self.distanceCount) * bands + b]
                }
                broadband[a * Self.distanceCount + d] = sum / Float(bands)
            }
        }
        self.init(measurementDistanceMetres: far, sampleRateHz: sampleRateHz, headRadiusMetres: headRadiusMetres,
                  broadbandTable: broadband)
    }

    private init(measurementDistanceMetres: Double, sampleRateHz: Double, headRadiusMetres: Double, broadbandTable: [Float]) {
        self.measurementDistanceMetres = measurementDistanceMetres
        self.headRadiusMetres = headRadiusMetres
        self.sampleRateHz = sampleRateHz
        self.broadbandTable = broadbandTable
        maximumDelayCorrectionSamples = Float(2 * headRadiusMetres / Self.speedOfSoundMetresPerSecond * sampleRateHz)
    }

    /// The render's table as made (`broadbandLevels`), for a cache to keep; `tableVersion`
    /// changes whenever what it holds would.
    public var broadbandLevels: [Float] { broadbandTable }
    public static let tableVersion = 1

    /// The corrections from a table `broadbandLevels` gave before, for the same distance and
    /// head; nil if it is not one of this layout (a cache of another version, or damaged).
    public static func restored(measurementDistanceMetres: Double, sampleRateHz: Double,
                                headRadiusMetres: Double = NearField.defaultHeadRadiusMetres,
                                broadbandLevels: [Float]) -> NearField? {
        guard broadbandLevels.count == angleCount * distanceCount, broadbandLevels.allSatisfy(\.isFinite),
              measurementDistanceMetres >= minimumDistanceMetres else { return nil }
        return NearField(measurementDistanceMetres: measurementDistanceMetres, sampleRateHz: sampleRateHz,
                         headRadiusMetres: headRadiusMetres, broadbandTable: broadbandLevels)
    }

    /// The sphere's level (dB) per incidence angle, distance and band of `bands` (indices into
    /// `bandCentresHz`), in that order.
    private static func levels(bands: ClosedRange<Int>, measurementDistanceMetres far: Double,
                               headRadiusMetres: Double) -> [Float] {
        var table = [Float](repeating: 0, count: angleCount * distanceCount * bands.count)
        let incidences = (0..<angleCount).map { Double($0) * angleStepDegrees * .pi / 180 }
        for d in 0..<distanceCount {
            let r = distance(index: Double(d), near: minimumDistanceMetres, far: far)
            for (b, f) in bandCentresHz[bands].enumerated() {
                let magnitudes = sphereMagnitudes(radiusMetres: headRadiusMetres, distanceMetres: r,
                                                  incidenceRadians: incidences, frequencyHz: f)
                for a in 0..<angleCount {
                    table[(a * distanceCount + d) * bands.count + b] = Float(20 * log10(magnitudes[a]))
                }
            }
        }
        return table
    }

    /// The largest growth of an ear's delay (the lagging one's) these corrections give.
    public let maximumDelayCorrectionSamples: Float

    /// The headroom a set's delays need for near sources at a rate (HRTFSet adds it).
    public static func delayMarginSamples(sampleRateHz: Double) -> Float {
        Float((2 * defaultHeadRadiusMetres / speedOfSoundMetresPerSecond * sampleRateHz).rounded(.up))
    }

    /// Distance index i of `distanceCount` (0 = the measurement distance), evenly in 1 / r.
    static func distance(index: Double, near: Double, far: Double) -> Double {
        let x = index / Double(distanceCount - 1)
        return 1 / (1 / far + x * (1 / near - 1 / far))
    }

    /// |H| of a rigid sphere's surface pressure for a point source at `distanceMetres` from its
    /// centre, `incidenceRadians` from the receiver, relative to the free field at the centre
    /// (Duda & Martens 1998, their series and recurrences).
    public static func sphereMagnitude(radiusMetres a: Double, distanceMetres r: Double, incidenceRadians theta: Double,
                                       frequencyHz f: Double) -> Double {
        sphereMagnitudes(radiusMetres: a, distanceMetres: r, incidenceRadians: [theta], frequencyHz: f)[0]
    }

    /// `sphereMagnitude` for several angles of incidence at once: the series' terms are an
    /// angle-independent factor (its Hankel-function ratios over their denominator, from the
    /// distance and frequency alone) times the angle's Legendre polynomial, so the factor is made
    /// once per term for all angles, and each angle sums its own terms and stops on its own
    /// (compared squared: no root per term). The near-field table's 37 angles cost about what
    /// one did; its levels in single precision are the same as the angle-by-angle series'.
    public static func sphereMagnitudes(radiusMetres a: Double, distanceMetres r: Double, incidenceRadians thetas: [Double],
                                        frequencyHz f: Double) -> [Double] {
        typealias C = (re: Double, im: Double)
        func mul(_ x: C, _ y: C) -> C { (x.re * y.re - x.im * y.im, x.re * y.im + x.im * y.re) }
        func div(_ x: C, _ y: C) -> C {
            let d = y.re * y.re + y.im * y.im
            return ((x.re * y.re + x.im * y.im) / d, (x.im * y.re - x.re * y.im) / d)
        }
        func add(_ x: C, _ y: C) -> C { (x.re + y.re, x.im + y.im) }
        func scale(_ x: C, _ s: Double) -> C { (x.re * s, x.im * s) }
        func abs(_ x: C) -> Double { (x.re * x.re + x.im * x.im).squareRoot() }
        let mu = 2 * Double.pi * max(f, 1) * a / speedOfSoundMetresPerSecond, rho = r / a
        let zr: C = (0, -1 / (mu * rho)), za: C = (0, -1 / mu)  // 1 / (i·μρ), 1 / (i·μ)
        var qr2 = zr, qr1 = mul(zr, add((1, 0), scale(zr, -1)))
        var qa2 = za, qa1 = mul(za, add((1, 0), scale(za, -1)))
        let first = div(zr, mul(za, add(za, (-1, 0))))
        let zaSquared = mul(za, za)
        let secondNumerator = mul(zr, add(zr, (-1, 0)))
        let secondDenominator = mul(za, add(add(scale(zaSquared, 2), scale(za, -2)), (1, 0)))
        // Per angle: cos θ, the Legendre polynomials' last two, the sum, its last two ratios.
        let count = thetas.count
        let x = thetas.map { cos($0) }
        var p2 = [Double](repeating: 1, count: count), p1 = x
        var sums = [C](repeating: (0, 0), count: count)
        var oldRatio = [Double](repeating: 1, count: count), newRatio = [Double](repeating: 0, count: count)
        var running = [Bool](repeating: true, count: count)
        // A term's ratio to the sum, squared (the series stops once two in a row are below 1e-10).
        func squaredRatio(_ term: C, _ sum: C) -> Double {
            (term.re * term.re + term.im * term.im) / (sum.re * sum.re + sum.im * sum.im)
        }
        let second = div(secondNumerator, secondDenominator)
        for i in 0..<count {
            let term = scale(second, 3 * x[i])
            sums[i] = add(first, term)
            newRatio[i] = squaredRatio(term, sums[i])
        }
        var m = 2.0, left = count
        while left > 0 && m < 400 {
            let qr = add(scale(mul(zr, qr1), -(2 * m - 1)), qr2)
            let qa = add(scale(mul(za, qa1), -(2 * m - 1)), qa2)
            let factor = scale(div(qr, add(scale(mul(za, qa), m + 1), scale(qa1, -1))), 2 * m + 1)
            // Within ~0.12 m at low frequencies the series converges slowly (as (a / r)^m) and
            // the ratios overflow first, past m ≈ 150, where the terms left are below 1e-9 of the
            // sum: stop there with the sums so far (the series' own stopping test made them NaN).
            guard factor.re.isFinite && factor.im.isFinite else { break }
            for i in 0..<count where running[i] {
                let p = ((2 * m - 1) * x[i] * p1[i] - (m - 1) * p2[i]) / m
                let term = scale(factor, p)
                sums[i] = add(sums[i], term)
                p2[i] = p1[i]; p1[i] = p
                oldRatio[i] = newRatio[i]
                newRatio[i] = squaredRatio(term, sums[i])
                if !(oldRatio[i] > 1e-20 || newRatio[i] > 1e-20) {
                    running[i] = false
                    left -= 1
                }
            }
            m += 1
            qr2 = qr1; qr1 = qr; qa2 = qa1; qa1 = qa
        }
        return sums.map { rho * abs($0) / mu }
    }

    /// Each band's amplitude gain for an ear `incidenceDegrees` from a source at
    /// `distanceMetres` (0 = on its axis) whose response is taken from the set's measurement
    /// `measuredIncidenceDegrees` from it (parallax moves it): the sphere's response there over
    /// its response for that measurement, into `gains` (`bandCount` values). 1 at the
    /// measurement distance. Not for the render thread: the first call makes the table of
    /// every band (locked, a few milliseconds); the render takes broadbandGain.
    public func bandGains(incidenceDegrees: Double, distanceMetres: Double, measuredIncidenceDegrees: Double? = nil,
                          into gains: UnsafeMutablePointer<Float>) {
        let far = measurementDistanceMetres
        let r = min(far, max(Self.minimumDistanceMetres, distanceMetres))
        let x = (1 / r - 1 / far) / (1 / Self.minimumDistanceMetres - 1 / far) * Double(Self.distanceCount - 1)
        let bands = Self.bandCentresHz.count
        let table = self.table.withLock { table in
            if table == nil {
                table = Self.levels(bands: 0...(bands - 1), measurementDistanceMetres: far, headRadiusMetres: headRadiusMetres)
            }
            return table!
        }
        table.withUnsafeBufferPointer { t in
            @inline(__always) func level(_ incidence: Double, _ distanceIndex: Double, _ b: Int) -> Float {
                let a = min(180, max(0, incidence)) / Self.angleStepDegrees
                let d0 = min(Int(distanceIndex), Self.distanceCount - 2), a0 = min(Int(a), Self.angleCount - 2)
                let fd = Float(distanceIndex - Double(d0)), fa = Float(a - Double(a0))
                let p00 = (a0 * Self.distanceCount + d0) * bands + b, p01 = p00 + bands
                let p10 = p00 + Self.distanceCount * bands, p11 = p10 + bands
                return (1 - fa) * ((1 - fd) * t[p00] + fd * t[p01]) + fa * ((1 - fd) * t[p10] + fd * t[p11])
            }
            for b in 0..<bands {
                let decibels = level(incidenceDegrees, x, b) - level(measuredIncidenceDegrees ?? incidenceDegrees, 0, b)
                gains[b] = expf(decibels * (Float(M_LN10) / 20))
            }
        }
    }

    /// The bands `broadbandGain` averages (200 Hz to 6.3 kHz, where the ear weighs level most).
    public static let broadbandBands = 2...7

    /// One amplitude gain for the ear: the mean over `broadbandBands` of the bands' gains in
    /// dB. Real-time safe. A voice's filters take this rather than a gain per bin: a real gain
    /// per bin is a zero-phase filter whose left half wraps around the voices' circular
    /// convolution, and that made a source at 1 m click once per span (MotionTests, 50 times
    /// a static render's discontinuity); the bands differ by at most 0.5 dB below 4 kHz.
    public func broadbandGain(incidenceDegrees: Double, distanceMetres: Double) -> Float {
        let far = measurementDistanceMetres
        let r = min(far, max(Self.minimumDistanceMetres, distanceMetres))
        let x = (1 / r - 1 / far) / (1 / Self.minimumDistanceMetres - 1 / far) * Double(Self.distanceCount - 1)
        let a = min(180, max(0, incidenceDegrees)) / Self.angleStepDegrees
        let d0 = min(Int(x), Self.distanceCount - 2), a0 = min(Int(a), Self.angleCount - 2)
        let fd = Float(x - Double(d0)), fa = Float(a - Double(a0))
        return broadbandTable.withUnsafeBufferPointer { t in
            let p00 = a0 * Self.distanceCount + d0, p01 = p00 + 1
            let p10 = p00 + Self.distanceCount, p11 = p10 + 1
            let mean = (1 - fa) * ((1 - fd) * t[p00] + fd * t[p01]) + fa * ((1 - fd) * t[p10] + fd * t[p11])
            return expf(mean * (Float(M_LN10) / 20))
        }
    }

    /// What a near source at `position` (head-relative, metres) asks of each ear: the
    /// direction to take its response from, the delay to add to it (samples), and its angle of
    /// incidence for the gains.
    public struct Ears: Sendable {
        public var left: (azimuthDegrees: Double, elevationDegrees: Double)
        public var right: (azimuthDegrees: Double, elevationDegrees: Double)
        public var delayCorrectionSamples: (left: Float, right: Float)
        public var incidenceDegrees: (left: Double, right: Double)
        /// The same for the measurement each ear's response is taken from.
        public var measuredIncidenceDegrees: (left: Double, right: Double)
    }

    /// Real-time safe. `position` at least `minimumDistanceMetres` from the head's centre.
    public func ears(of position: Vector3) -> Ears {
        let a = headRadiusMetres, far = measurementDistanceMetres
        let r = max(position.length, Self.minimumDistanceMetres)
        let p = position * (r / max(position.length, 1e-9))
        let unit = p * (1 / r)
        func ear(_ side: Double) -> (direction: (Double, Double), extraMetres: Double, incidence: Double, measured: Double) {
            let axis = Vector3(x: side, y: 0, z: 0)  // left ear on −x (azimuth +90°), right on +x
            let e = axis * a
            let toSource = p - e
            let v = toSource * (1 / toSource.length)
            let ev = e.dot(v)
            let s = -ev + (ev * ev - a * a + far * far).squareRoot()
            let onSphere = e + v * s
            let seen = SphericalPosition(cartesian: onSphere)
            let incidence = acos(max(-1, min(1, unit.dot(axis))))
            let measuredIncidence = acos(max(-1, min(1, onSphere.dot(axis) / far)))
            let extra = (Self.pathMetres(radius: a, distance: r, incidenceRadians: incidence) - r)
                - (Self.pathMetres(radius: a, distance: far, incidenceRadians: measuredIncidence) - far)
            return ((seen.azimuthDegrees, seen.elevationDegrees), extra, incidence * 180 / .pi, measuredIncidence * 180 / .pi)
        }
        let left = ear(-1), right = ear(1)
        // Only the difference matters (the renderer adds no propagation delay): the lagging
        // ear is delayed further.
        let common = min(left.extraMetres, right.extraMetres)
        let perMetre = sampleRateHz / Self.speedOfSoundMetresPerSecond
        let limit = maximumDelayCorrectionSamples
        return Ears(left: left.direction, right: right.direction,
                    delayCorrectionSamples: (min(limit, Float((left.extraMetres - common) * perMetre)),
                                             min(limit, Float((right.extraMetres - common) * perMetre))),
                    incidenceDegrees: (left.incidence, right.incidence),
                    measuredIncidenceDegrees: (left.measured, right.measured))
    }

    /// The path from a source at `distance` to a point on a sphere of `radius`, `incidence`
    /// from it: straight while the point sees the source, else the tangent and the arc.
    static func pathMetres(radius a: Double, distance r: Double, incidenceRadians theta: Double) -> Double {
        let tangentAngle = acos(min(1, a / r))
        if theta <= tangentAngle { return max(0, r * r + a * a - 2 * a * r * cos(theta)).squareRoot() }
        return max(0, r * r - a * a).squareRoot() + a * (theta - tangentAngle)
    }
}
