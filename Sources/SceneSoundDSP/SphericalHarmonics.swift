// Real spherical harmonics up to third order for the ambisonic bus, in the AmbiX convention:
// ACN channel order (channel = n² + n + m) and SN3D normalisation (every order's peak gain
// is 1, so W carries the source at unity). AmbiX is the interchange format of every current
// ambisonic tool, which keeps the bus inspectable with standard plug-ins.
//
// Ambisonic axes are x front, y left, z up. docs/ARCHITECTURE.md's are +x right, +y up, −z front, so
// ambisonic (x, y, z) = (−z, −x, y); the azimuth (counter-clockwise from the front) is the
// same in both.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

public enum SphericalHarmonics {
    public static let order = 3
    public static let channelCount = 16

    /// The order n of an ACN channel.
    @inline(__always)
    public static func order(ofChannel channel: Int) -> Int {
        channel == 0 ? 0 : channel < 4 ? 1 : channel < 9 ? 2 : 3
    }

    /// A direction in the listener's coordinates (docs/ARCHITECTURE.md) as a unit vector on the ambisonic axes
    /// (ahead for a zero vector).
    @inline(__always)
    public static func ambisonicAxes(_ v: Vector3) -> (x: Double, y: Double, z: Double) {
        let length = v.length
        guard length > 1e-12 else { return (1, 0, 0) }
        return (-v.z / length, -v.x / length, v.y / length)
    }

    /// The listener's coordinates of a unit vector on the ambisonic axes.
    @inline(__always)
    public static func designAxes(x: Double, y: Double, z: Double) -> Vector3 {
        Vector3(x: -y, y: z, z: -x)
    }

    /// The sixteen SN3D gains of a unit direction on the ambisonic axes.
    @inline(__always)
    public static func sn3d(x: Double, y: Double, z: Double) -> SIMD16<Double> {
        let x2 = x * x, y2 = y * y, z2 = z * z
        let s3 = 1.7320508075688772            // √3
        let s15 = 3.872983346207417            // √15
        let s58 = 0.7905694150420949           // √(5/8)
        let s38 = 0.6123724356957945           // √(3/8)
        return SIMD16(
            1,
            y, z, x,
            s3 * x * y, s3 * y * z, 0.5 * (3 * z2 - 1), s3 * x * z, 0.5 * s3 * (x2 - y2),
            s58 * y * (3 * x2 - y2), s15 * x * y * z, s38 * y * (5 * z2 - 1), 0.5 * z * (5 * z2 - 3),
            s38 * x * (5 * z2 - 1), 0.5 * s15 * z * (x2 - y2), s58 * x * (x2 - 3 * y2))
    }

    /// The SN3D gains towards a direction in the listener's coordinates (docs/ARCHITECTURE.md) (need not be unit).
    @inline(__always)
    public static func sn3d(_ v: Vector3) -> SIMD16<Float> {
        let a = ambisonicAxes(v)
        return SIMD16<Float>(sn3d(x: a.x, y: a.y, z: a.z))
    }

    /// ∫ Y_a² dΩ for an SN3D channel of order n is 4π / (2n + 1): the factor that turns a
    /// quadrature sum into a projection coefficient.
    @inline(__always)
    public static func projectionScale(order n: Int) -> Double {
        Double(2 * n + 1) / (4 * Double.pi)
    }
}

/// Gauss–Legendre nodes and weights on [−1, 1] (Newton's method on P_n), for quadrature
/// over the sphere: n nodes in z times 2n equally spaced azimuths integrate every spherical
/// polynomial of degree below 2n exactly. Off-line use only (allocates).
public enum GaussLegendre {
    public static func rule(count n: Int) -> (nodes: [Double], weights: [Double]) {
        precondition(n >= 2)
        var nodes = [Double](repeating: 0, count: n), weights = nodes
        for i in 0..<n {
            var x = cos(Double.pi * (Double(i) + 0.75) / (Double(n) + 0.5))
            var derivative = 1.0
            for _ in 0..<100 {
                var p0 = 1.0, p1 = x
                for k in 2...n {
                    let p2 = (Double(2 * k - 1) * x * p1 - Double(k - 1) * p0) / Double(k)
                    p0 = p1; p1 = p2
                }
                derivative = Double(n) * (x * p1 - p0) / (x * x - 1)
                let dx = p1 / derivative
                x -= dx
                if abs(dx) < 1e-15 { break }
            }
            nodes[i] = x
            weights[i] = 2 / ((1 - x * x) * derivative * derivative)
        }
        return (nodes, weights)
    }
}
