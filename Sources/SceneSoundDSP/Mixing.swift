// Small buffer operations shared by the voices and the bus, each with a scalar reference and
// a SIMD version.

public enum Mixing {
    /// output[n] += from[n] + (to[n] − from[n]) · (n + 1) / frames: a linear crossfade that
    /// reaches `to` exactly at the last sample.
    public static func crossfadeAddScalar(from a: UnsafePointer<Float>, to b: UnsafePointer<Float>,
                                          into output: UnsafeMutablePointer<Float>, frames: Int) {
        let inverse = 1 / Float(frames)
        for n in 0..<frames {
            output[n] += a[n] + (b[n] - a[n]) * (Float(n + 1) * inverse)
        }
    }

    public static func crossfadeAdd(from a: UnsafePointer<Float>, to b: UnsafePointer<Float>,
                                    into output: UnsafeMutablePointer<Float>, frames: Int) {
        let inverse = 1 / Float(frames)
        var ramp = SIMD8<Float>(1, 2, 3, 4, 5, 6, 7, 8) * inverse
        let step = SIMD8<Float>(repeating: 8 * inverse)
        let pa = UnsafeRawPointer(a), pb = UnsafeRawPointer(b), po = UnsafeMutableRawPointer(output)
        let size = MemoryLayout<Float>.stride
        var n = 0
        while n + 8 <= frames {
            let va = pa.loadUnaligned(fromByteOffset: n * size, as: SIMD8<Float>.self)
            let vb = pb.loadUnaligned(fromByteOffset: n * size, as: SIMD8<Float>.self)
            let vo = po.loadUnaligned(fromByteOffset: n * size, as: SIMD8<Float>.self)
            po.storeBytes(of: vo + va + (vb - va) * ramp, toByteOffset: n * size, as: SIMD8<Float>.self)
            ramp += step
            n += 8
        }
        while n < frames {
            output[n] += a[n] + (b[n] - a[n]) * (Float(n + 1) * inverse)
            n += 1
        }
    }

    public static func addScalar(_ a: UnsafePointer<Float>, into output: UnsafeMutablePointer<Float>, frames: Int) {
        for n in 0..<frames { output[n] += a[n] }
    }

    public static func add(_ a: UnsafePointer<Float>, into output: UnsafeMutablePointer<Float>, frames: Int) {
        let pa = UnsafeRawPointer(a), po = UnsafeMutableRawPointer(output)
        let size = MemoryLayout<Float>.stride
        var n = 0
        while n + 8 <= frames {
            let sum = po.loadUnaligned(fromByteOffset: n * size, as: SIMD8<Float>.self)
                + pa.loadUnaligned(fromByteOffset: n * size, as: SIMD8<Float>.self)
            po.storeBytes(of: sum, toByteOffset: n * size, as: SIMD8<Float>.self)
            n += 8
        }
        while n < frames { output[n] += a[n]; n += 1 }
    }

    /// Σ x[n]²: a level's raw material (the governor's RMS, the streams' meters).
    public static func sumOfSquaresScalar(_ x: UnsafePointer<Float>, frames: Int) -> Float {
        var total: Float = 0
        for n in 0..<frames { total += x[n] * x[n] }
        return total
    }

    public static func sumOfSquares(_ x: UnsafePointer<Float>, frames: Int) -> Float {
        let raw = UnsafeRawPointer(x), size = MemoryLayout<Float>.stride
        // Two sums, so that the adds do not wait on each other.
        var sum = SIMD8<Float>(), other = SIMD8<Float>()
        var n = 0
        while n &+ 16 <= frames {
            let v = raw.loadUnaligned(fromByteOffset: n &* size, as: SIMD8<Float>.self)
            let w = raw.loadUnaligned(fromByteOffset: (n &+ 8) &* size, as: SIMD8<Float>.self)
            sum += v * v
            other += w * w
            n &+= 16
        }
        sum += other
        while n &+ 8 <= frames {
            let v = raw.loadUnaligned(fromByteOffset: n &* size, as: SIMD8<Float>.self)
            sum += v * v
            n &+= 8
        }
        var total = sum.sum()
        while n < frames { total += x[n] * x[n]; n &+= 1 }
        return total
    }

    /// out[n] = x[n] for every frame, returning Σ x[n]² (as sumOfSquares): a read that
    /// measures its level in the same pass. `V`: the vector width (RenderKernels.copySummingSquares
    /// picks the CPU's).
    @inlinable @inline(__always)
    public static func copySummingSquares<V: SIMD>(_ x: UnsafePointer<Float>, to out: UnsafeMutablePointer<Float>,
                                                   frames: Int, in _: V.Type = SIMD8<Float>.self) -> Float
        where V.Scalar == Float {
        let raw = UnsafeRawPointer(x), target = UnsafeMutableRawPointer(out), size = MemoryLayout<Float>.stride
        let width = V.scalarCount
        var sum = V(), other = V()
        var n = 0
        while n &+ 2 &* width <= frames {
            let v = raw.loadUnaligned(fromByteOffset: n &* size, as: V.self)
            let w = raw.loadUnaligned(fromByteOffset: (n &+ width) &* size, as: V.self)
            target.storeBytes(of: v, toByteOffset: n &* size, as: V.self)
            target.storeBytes(of: w, toByteOffset: (n &+ width) &* size, as: V.self)
            sum += v * v
            other += w * w
            n &+= 2 &* width
        }
        sum += other
        var total = sum.sum()
        while n < frames { out[n] = x[n]; total += x[n] * x[n]; n &+= 1 }
        return total
    }
}
