// Amplitude panning over loudspeakers on a horizontal ring: 2-D VBAP (Pulkki 1997) between the
// two speakers adjacent to the source's direction, the pair's gains normalized to constant power.
// For two speakers at ±30° this is the tangent law. Where two neighbours are 180° or more apart
// (the back of a stereo pair) no pair can make the direction: the source is pinned to the nearer
// speaker, as a pan pot beyond its end.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

public struct SpeakerPanner: Sendable {
    /// Per output channel, its azimuth in degrees (SOFA: counter-clockwise, +90 = left); nil for
    /// a channel that takes no panned sound (the LFE).
    public let azimuthsDegrees: [Double?]

    /// The ring's pairs of neighbours, by ascending azimuth: channel indices, and the inverse of
    /// the matrix of their unit vectors when they make a pair (less than 180° apart).
    private struct Pair: Sendable {
        var first: Int, second: Int
        var firstAzimuthRadians: Double, arcRadians: Double
        var inverse: (Double, Double, Double, Double)?
    }
    private let pairs: [Pair]

    /// Directions within this of a speaker feed it alone, exactly (no rounding leaks into the
    /// others: a 5.1 stream's channel then lands on its speaker bit for bit in gain).
    static let snapDegrees = 1e-6

    public init(azimuthsDegrees: [Double?]) {
        self.azimuthsDegrees = azimuthsDegrees
        let ring = azimuthsDegrees.enumerated().compactMap { index, azimuth in
            azimuth.map { (index: index, radians: Self.wrapped($0 * .pi / 180)) }
        }.sorted { $0.radians < $1.radians }
        precondition(!ring.isEmpty, "a panner needs at least one speaker")
        var pairs: [Pair] = []
        for i in ring.indices {
            let a = ring[i], b = ring[(i + 1) % ring.count]
            var arc = b.radians - a.radians
            if arc <= 0 { arc += 2 * .pi }
            var inverse: (Double, Double, Double, Double)?
            if arc < .pi - 1e-9 && ring.count > 1 {
                // L = [[cos a, sin a], [cos b, sin b]] (rows: speakers); g = p · L⁻¹.
                let (c1, s1, c2, s2) = (cos(a.radians), sin(a.radians), cos(b.radians), sin(b.radians))
                let det = c1 * s2 - s1 * c2
                inverse = (s2 / det, -s1 / det, -c2 / det, c1 / det)
            }
            pairs.append(Pair(first: a.index, second: b.index, firstAzimuthRadians: a.radians, arcRadians: arc,
                              inverse: inverse))
        }
        self.pairs = pairs
    }

    /// The ITU-R layout of `channels` output channels in the WAVE order (2: FL FR at ±30°; 6:
    /// 5.1 with surrounds at ±110°; 8: 7.1 with sides at ±90°, backs at ±135°), the LFE left out.
    public static func itu(channelCount: Int) -> SpeakerPanner {
        switch channelCount {
        case 2: return SpeakerPanner(azimuthsDegrees: [30, -30])
        case 6: return SpeakerPanner(azimuthsDegrees: [30, -30, 0, nil, 110, -110])
        case 8: return SpeakerPanner(azimuthsDegrees: [30, -30, 0, nil, 135, -135, 90, -90])
        default: preconditionFailure("no ITU-R layout of \(channelCount) channels")
        }
    }

    public var channelCount: Int { azimuthsDegrees.count }

    /// Writes every channel's gain for a source at `azimuthDegrees` into `gains`
    /// (`channelCount` floats): at most two non-zero, their squares summing to one.
    /// Allocation-free (render thread).
    public func gains(azimuthDegrees: Double, into gains: UnsafeMutablePointer<Float>) {
        gains.update(repeating: 0, count: azimuthsDegrees.count)
        let direction = Self.wrapped(azimuthDegrees * .pi / 180)
        let snap = Self.snapDegrees * .pi / 180
        for pair in pairs {
            var offset = direction - pair.firstAzimuthRadians
            if offset < 0 { offset += 2 * .pi }
            if offset < snap || offset > 2 * .pi - snap {
                gains[pair.first] = 1
                return
            }
            guard offset <= pair.arcRadians else { continue }
            if abs(offset - pair.arcRadians) < snap {
                gains[pair.second] = 1
                return
            }
            guard let m = pair.inverse else {
                // No pair spans this gap: the nearer of its two ends.
                gains[offset <= pair.arcRadians / 2 ? pair.first : pair.second] = 1
                return
            }
            let (px, py) = (cos(direction), sin(direction))
            let g1 = max(0, px * m.0 + py * m.2), g2 = max(0, px * m.1 + py * m.3)
            let norm = (g1 * g1 + g2 * g2).squareRoot()
            gains[pair.first] = Float(g1 / norm)
            gains[pair.second] = Float(g2 / norm)
            return
        }
        gains[pairs[0].first] = 1  // one speaker alone
    }

    /// −π ..< π.
    static func wrapped(_ radians: Double) -> Double {
        var r = radians.truncatingRemainder(dividingBy: 2 * .pi)
        if r >= .pi { r -= 2 * .pi }
        if r < -.pi { r += 2 * .pi }
        return r
    }
}
