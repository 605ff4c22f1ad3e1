// Sound-field rotation of the third-order bus by the head's orientation.
//
// The matrices are the real spherical-harmonic rotation matrices, one block per order
// (3×3, 5×5, 7×7; W is invariant), computed exactly by projection rather than by the
// Ivanic–Ruedenberg recursion: M_ab = (2n+1)/4π ∫ Y_a(R⁻¹d) Y_b(d) dΩ, where the integrand
// is a spherical polynomial of degree ≤ 6, so a 4 × 8 Gauss–Legendre product rule gives it
// to rounding error. That is 32 harmonic evaluations per matrix — a few microseconds per
// sub-block — and there is no recursion whose sign conventions could silently disagree
// with the encoder's: both use the same `SphericalHarmonics.sn3d`.
//
// The field is encoded in world orientation and rotated into the head's frame once per
// sub-block, with the matrix glided linearly from the previous sub-block's, so a head turn
// never steps (at 360°/s a 128-frame sub-block turns less than 1°).

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

public enum AmbisonicRotationKernel {
    /// Entries of a block-diagonal rotation matrix: 1 + 9 + 25 + 49, row-major per block.
    public static let matrixCount = 84
    /// Where order n's block starts in the matrix storage, and its first ACN channel.
    /// Σ_{k<n} (2k+1)² = n(4n² − 1)/3: 0, 1, 10, 35.
    @inlinable @inline(__always) static func blockOffset(order n: Int) -> Int { n * (4 * n * n - 1) / 3 }

    /// out[a][t] = Σ_b (m0_ab + (m1_ab − m0_ab)·(t + 1)/frames) · in[b][t], over each order's
    /// block; channels are `inputStride` and `outputStride` floats apart. The reference.
    public static func rotateScalar(input: UnsafePointer<Float>, inputStride: Int,
                                    output: UnsafeMutablePointer<Float>, outputStride: Int, frames: Int,
                                    from m0: UnsafePointer<Float>, to m1: UnsafePointer<Float>) {
        for n in 0...SphericalHarmonics.order {
            let size = 2 * n + 1, first = n * n, block = blockOffset(order: n)
            for row in 0..<size {
                let out = output + (first + row) * outputStride
                for t in 0..<frames {
                    let ramp = Float(t + 1) / Float(frames)
                    var sum: Float = 0
                    for column in 0..<size {
                        let k = block + row * size + column
                        sum += (m0[k] + (m1[k] - m0[k]) * ramp) * input[(first + column) * inputStride + t]
                    }
                    out[t] = sum
                }
            }
        }
    }

    /// The same, eight frames at a time.
    @inlinable @inline(__always)
    public static func rotate(input: UnsafePointer<Float>, inputStride: Int,
                              output: UnsafeMutablePointer<Float>, outputStride: Int, frames: Int,
                              from m0: UnsafePointer<Float>, to m1: UnsafePointer<Float>) {
        let vectorFrames = frames & ~7
        let inverse = 1 / Float(frames)
        let size4 = MemoryLayout<Float>.stride
        let x = UnsafeRawPointer(input), y = UnsafeMutableRawPointer(output)
        for n in 0...SphericalHarmonics.order {
            let size = 2 * n + 1, first = n * n, block = blockOffset(order: n)
            for row in 0..<size {
                let outBase = (first + row) * outputStride * size4
                var t = 0
                var ramp = SIMD8<Float>(1, 2, 3, 4, 5, 6, 7, 8) * inverse
                let step = SIMD8<Float>(repeating: 8 * inverse)
                while t < vectorFrames {
                    var sum = SIMD8<Float>()
                    for column in 0..<size {
                        let k = block + row * size + column
                        let start = m0[k], delta = m1[k] - start
                        let v = x.loadUnaligned(fromByteOffset: ((first + column) * inputStride + t) * size4,
                                                as: SIMD8<Float>.self)
                        sum += (SIMD8(repeating: start) + SIMD8(repeating: delta) * ramp) * v
                    }
                    y.storeBytes(of: sum, toByteOffset: outBase + t * size4, as: SIMD8<Float>.self)
                    ramp += step
                    t += 8
                }
                while t < frames {
                    let r = Float(t + 1) * inverse
                    var sum: Float = 0
                    for column in 0..<size {
                        let k = block + row * size + column
                        sum += (m0[k] + (m1[k] - m0[k]) * r) * input[(first + column) * inputStride + t]
                    }
                    output[(first + row) * outputStride + t] = sum
                    t += 1
                }
            }
        }
    }
}

/// Computes rotation matrices from head orientations. Its quadrature tables are allocated
/// in init; `matrix(for:into:)` is real-time safe.
public final class AmbisonicRotator {
    private static let zNodes = 4, azimuthNodes = 8
    private let pointCount = zNodes * azimuthNodes
    /// Per quadrature point: its direction (docs/ARCHITECTURE.md's axes) and weight.
    private let directions: UnsafeMutablePointer<Vector3>
    private let weights: UnsafeMutablePointer<Double>
    /// Per point, the sixteen harmonics at the unrotated direction.
    private let harmonics: UnsafeMutablePointer<SIMD16<Double>>

    public init() {
        let rule = GaussLegendre.rule(count: Self.zNodes)
        directions = .allocate(capacity: pointCount)
        weights = .allocate(capacity: pointCount)
        harmonics = .allocate(capacity: pointCount)
        var i = 0
        for (z, w) in zip(rule.nodes, rule.weights) {
            let ring = (1 - z * z).squareRoot()
            for k in 0..<Self.azimuthNodes {
                let phi = 2 * Double.pi * Double(k) / Double(Self.azimuthNodes)
                let x = ring * cos(phi), y = ring * sin(phi)
                (directions + i).initialize(to: SphericalHarmonics.designAxes(x: x, y: y, z: z))
                (weights + i).initialize(to: w * 2 * Double.pi / Double(Self.azimuthNodes))
                (harmonics + i).initialize(to: SphericalHarmonics.sn3d(x: x, y: y, z: z))
                i += 1
            }
        }
    }

    deinit {
        directions.deallocate(); weights.deallocate(); harmonics.deallocate()
    }

    /// Writes the matrix (AmbisonicRotationKernel.matrixCount entries) that takes a field
    /// encoded in world orientation into the frame of a head turned by `orientation`: a
    /// source at world direction d comes out encoded at orientation⁻¹·d.
    public func matrix(for orientation: Quaternion, into m: UnsafeMutablePointer<Float>) {
        var sums = (SIMD16<Double>(), SIMD16<Double>(), SIMD16<Double>(), SIMD16<Double>(),
                    SIMD16<Double>(), SIMD16<Double>(), SIMD16<Double>(), SIMD16<Double>(),
                    SIMD16<Double>(), SIMD16<Double>(), SIMD16<Double>(), SIMD16<Double>(),
                    SIMD16<Double>(), SIMD16<Double>(), SIMD16<Double>(), SIMD16<Double>())
        // sums.a[b] accumulates Σ_i w_i Y_a(R⁻¹d_i) Y_b(d_i).
        let inverse = orientation.conjugate
        for i in 0..<pointCount {
            let r = SphericalHarmonics.ambisonicAxes(inverse.rotate(directions[i]))
            let rotated = SphericalHarmonics.sn3d(x: r.x, y: r.y, z: r.z) * weights[i]
            let base = harmonics[i]
            withUnsafeMutableBytes(of: &sums) { raw in
                let rows = raw.baseAddress!.assumingMemoryBound(to: SIMD16<Double>.self)
                for a in 1..<16 { rows[a] += rotated[a] * base }
            }
        }
        m[0] = 1
        withUnsafeBytes(of: &sums) { raw in
            let rows = raw.baseAddress!.assumingMemoryBound(to: SIMD16<Double>.self)
            for n in 1...SphericalHarmonics.order {
                let size = 2 * n + 1, first = n * n, block = AmbisonicRotationKernel.blockOffset(order: n)
                let scale = SphericalHarmonics.projectionScale(order: n)
                for row in 0..<size {
                    for column in 0..<size {
                        m[block + row * size + column] = Float(rows[first + row][first + column] * scale)
                    }
                }
            }
        }
    }
}
