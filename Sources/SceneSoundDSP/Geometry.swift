// Coordinates follow docs/ARCHITECTURE.md "Conventions": right-handed, metres; the neutral head at the origin looking
// down −z, +x right, +y up (OpenAL's convention). Directions follow SOFA/AES69: azimuth
// counter-clockwise seen from above (0° ahead, +90° left), elevation +90° up.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@inline(__always) func radians(_ degrees: Double) -> Double { degrees * .pi / 180 }
@inline(__always) func degrees(_ radians: Double) -> Double { radians * 180 / .pi }

public struct Vector3: Equatable, Sendable {
    public var x: Double
    public var y: Double
    public var z: Double

    public init(x: Double, y: Double, z: Double) {
        self.x = x; self.y = y; self.z = z
    }

    public static let zero = Vector3(x: 0, y: 0, z: 0)

    public var length: Double { (x * x + y * y + z * z).squareRoot() }

    public static func + (a: Vector3, b: Vector3) -> Vector3 { Vector3(x: a.x + b.x, y: a.y + b.y, z: a.z + b.z) }
    public static func - (a: Vector3, b: Vector3) -> Vector3 { Vector3(x: a.x - b.x, y: a.y - b.y, z: a.z - b.z) }
    public static func * (a: Vector3, s: Double) -> Vector3 { Vector3(x: a.x * s, y: a.y * s, z: a.z * s) }

    public func dot(_ o: Vector3) -> Double { x * o.x + y * o.y + z * o.z }

    public func cross(_ o: Vector3) -> Vector3 {
        Vector3(x: y * o.z - z * o.y, y: z * o.x - x * o.z, z: x * o.y - y * o.x)
    }
}

/// A direction and distance from the listener, in the SOFA convention.
public struct SphericalPosition: Equatable, Sendable {
    public var azimuthDegrees: Double
    public var elevationDegrees: Double
    public var distanceMetres: Double

    public init(azimuthDegrees: Double, elevationDegrees: Double = 0, distanceMetres: Double = 1) {
        self.azimuthDegrees = azimuthDegrees
        self.elevationDegrees = elevationDegrees
        self.distanceMetres = distanceMetres
    }

    public init(cartesian v: Vector3) {
        let r = v.length
        guard r > 1e-12 else {
            self.init(azimuthDegrees: 0, elevationDegrees: 0, distanceMetres: 0)
            return
        }
        // Forward is −z and left is −x, so azimuth = atan2(−x, −z).
        let horizontal = (v.x * v.x + v.z * v.z).squareRoot()
        self.init(azimuthDegrees: degrees(atan2(-v.x, -v.z)),
                  elevationDegrees: degrees(atan2(v.y, horizontal)),
                  distanceMetres: r)
    }

    public var cartesian: Vector3 {
        let az = radians(azimuthDegrees), el = radians(elevationDegrees)
        let c = cos(el)
        return Vector3(x: -sin(az) * c * distanceMetres, y: sin(el) * distanceMetres, z: -cos(az) * c * distanceMetres)
    }
}

/// A rotation as a unit quaternion (w + xi + yj + zk).
public struct Quaternion: Equatable, Sendable {
    public var w: Double
    public var x: Double
    public var y: Double
    public var z: Double

    public init(w: Double, x: Double, y: Double, z: Double) {
        self.w = w; self.x = x; self.y = y; self.z = z
    }

    public static let identity = Quaternion(w: 1, x: 0, y: 0, z: 0)

    public init(axis: Vector3, angleRadians: Double) {
        let n = axis.length
        let s = sin(angleRadians / 2) / (n > 0 ? n : 1)
        self.init(w: cos(angleRadians / 2), x: axis.x * s, y: axis.y * s, z: axis.z * s)
    }

    /// Head orientation from yaw, pitch and roll in degrees. Positive yaw turns the head left
    /// (counter-clockwise about +y, like azimuth), positive pitch looks up (about +x), positive
    /// roll tilts the head to the right (clockwise about the forward axis −z seen from
    /// behind). Applied yaw, then pitch, then roll, in the head's own frame.
    public init(yawDegrees: Double, pitchDegrees: Double = 0, rollDegrees: Double = 0) {
        let yaw = Quaternion(axis: Vector3(x: 0, y: 1, z: 0), angleRadians: radians(yawDegrees))
        let pitch = Quaternion(axis: Vector3(x: 1, y: 0, z: 0), angleRadians: radians(pitchDegrees))
        let roll = Quaternion(axis: Vector3(x: 0, y: 0, z: -1), angleRadians: radians(rollDegrees))
        self = (yaw * pitch * roll).normalized
    }

    public static func * (a: Quaternion, b: Quaternion) -> Quaternion {
        Quaternion(w: a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
                   x: a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
                   y: a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
                   z: a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w)
    }

    public var conjugate: Quaternion { Quaternion(w: w, x: -x, y: -y, z: -z) }

    public var normalized: Quaternion {
        let n = (w * w + x * x + y * y + z * z).squareRoot()
        guard n > 0 else { return .identity }
        return Quaternion(w: w / n, x: x / n, y: y / n, z: z / n)
    }

    /// Rotates `v` by this quaternion (q v q*).
    public func rotate(_ v: Vector3) -> Vector3 {
        let u = Vector3(x: x, y: y, z: z)
        let t = u.cross(v) * 2
        return v + t * w + u.cross(t)
    }

    /// Yaw in degrees (rotation about +y of the head's forward vector), for display.
    public var yawDegrees: Double {
        let f = rotate(Vector3(x: 0, y: 0, z: -1))
        return degrees(atan2(-f.x, -f.z))
    }

    /// Spherical interpolation; takes the short way round.
    public static func slerp(_ a: Quaternion, _ b: Quaternion, _ t: Double) -> Quaternion {
        var b = b
        var d = a.w * b.w + a.x * b.x + a.y * b.y + a.z * b.z
        if d < 0 { b = Quaternion(w: -b.w, x: -b.x, y: -b.y, z: -b.z); d = -d }
        if d > 0.9995 {
            return Quaternion(w: a.w + (b.w - a.w) * t, x: a.x + (b.x - a.x) * t,
                              y: a.y + (b.y - a.y) * t, z: a.z + (b.z - a.z) * t).normalized
        }
        let theta = acos(d), s = sin(theta)
        let wa = sin((1 - t) * theta) / s, wb = sin(t * theta) / s
        return Quaternion(w: a.w * wa + b.w * wb, x: a.x * wa + b.x * wb,
                          y: a.y * wa + b.y * wb, z: a.z * wa + b.z * wb)
    }
}

/// Where the listener's head is and how it is turned.
public struct HeadPose: Equatable, Sendable {
    public var orientation: Quaternion
    public var positionMetres: Vector3

    public init(orientation: Quaternion = .identity, positionMetres: Vector3 = .zero) {
        self.orientation = orientation
        self.positionMetres = positionMetres
    }

    public static let neutral = HeadPose()

    /// The position of a world point as seen from the head.
    public func relative(_ world: Vector3) -> SphericalPosition {
        SphericalPosition(cartesian: orientation.conjugate.rotate(world - positionMetres))
    }

    public static func interpolate(_ a: HeadPose, _ b: HeadPose, _ t: Double) -> HeadPose {
        HeadPose(orientation: .slerp(a.orientation, b.orientation, t),
                 positionMetres: a.positionMetres + (b.positionMetres - a.positionMetres) * t)
    }
}
