// Encoding mono sources into the third-order bus (one field per ear, see AmbisonicBusVoice):
// sixteen gains from each source's direction (SphericalHarmonics.sn3d times its level). The
// bus is encoded in world orientation, so a still source under a turning head keeps constant
// gains: the sum of all such sources over a sub-block is one small matrix product (fields ×
// sources · sources × frames), which `encodeSum` computes with the field in registers. A
// source whose gains change glides linearly across the span so that it never steps: a
// second term with the input ramped (EncodeTerms).

public enum AmbisonicEncoderKernel {
    /// bus[a][t] += x[t] · (g0[a] + (g1[a] − g0[a]) · (t + 1) / frames), channels
    /// `channelStride` floats apart. The reference.
    public static func encodeScalar(input x: UnsafePointer<Float>, frames: Int,
                                    from g0: SIMD16<Float>, to g1: SIMD16<Float>,
                                    bus: UnsafeMutablePointer<Float>, channelStride: Int) {
        for a in 0..<SphericalHarmonics.channelCount {
            let out = bus + a * channelStride
            for t in 0..<frames {
                out[t] += x[t] * (g0[a] + (g1[a] - g0[a]) * (Float(t + 1) / Float(frames)))
            }
        }
    }

    /// bus[a][t] += Σ_s inputs[s][t] · gains[16 s + a]: `count` sources at constant gains, in
    /// one pass over the field. The field is held in registers — four channels by sixteen
    /// frames at a time where there are sixteen 256-bit registers (`wideRegisters`, the AVX2
    /// build), by eight otherwise — while every source is added, so each source costs its
    /// multiply-adds and little memory traffic. With thirty-two 512-bit registers and fused
    /// multiply-adds (`everyChannelInRegisters`, the AVX-512 build) all sixteen channels of
    /// sixteen frames stay in registers: each source's frames are loaded once, not four times.
    /// `fusedMultiplyAdd` (a build with FMA): each product and sum is one instruction, which
    /// leaves the loop fewer to issue; elsewhere `addingProduct` would call `fmaf`.
    @inlinable @inline(__always)
    public static func encodeSum(inputs: UnsafePointer<UnsafePointer<Float>>, gains: UnsafePointer<Float>, count: Int,
                                 frames: Int, bus: UnsafeMutablePointer<Float>, channelStride: Int,
                                 wideRegisters: Bool = false, everyChannelInRegisters: Bool = false,
                                 fusedMultiplyAdd: Bool = false) {
        guard count > 0 else { return }
        let out = UnsafeMutableRawPointer(bus)
        let stride = channelStride &* MemoryLayout<Float>.stride
        var t = 0
        if everyChannelInRegisters { encodeEveryChannel(inputs, gains, count, frames, out, stride, &t) }
        if wideRegisters {
            encodeRows(of: SIMD16<Float>.self, inputs, gains, count, frames, out, stride, fusedMultiplyAdd, &t)
        }
        encodeRows(of: SIMD8<Float>.self, inputs, gains, count, frames, out, stride, fusedMultiplyAdd, &t)
        let chunkFrames = t
        guard chunkFrames < frames else { return }
        for s in 0..<count {
            let x = inputs[s], g = gains + s &* SphericalHarmonics.channelCount
            for a in 0..<SphericalHarmonics.channelCount {
                let row = bus + a &* channelStride
                for t in chunkFrames..<frames { row[t] += x[t] * g[a] }
            }
        }
    }

    /// Frames from `t` sixteen at a time, every channel held in registers while every source
    /// is added (a build with 32 vector registers of 16 floats and fused multiply-adds; elsewhere
    /// it would spill and call fma).
    @inlinable @inline(__always)
    static func encodeEveryChannel(_ inputs: UnsafePointer<UnsafePointer<Float>>, _ gains: UnsafePointer<Float>,
                                   _ count: Int, _ frames: Int, _ out: UnsafeMutableRawPointer, _ stride: Int,
                                   _ t: inout Int) {
        typealias V = SIMD16<Float>
        let size = MemoryLayout<Float>.stride
        while t &+ V.scalarCount <= frames {
            let o = t &* size
            var a0 = out.loadUnaligned(fromByteOffset: o &+ 0 &* stride, as: V.self)
            var a1 = out.loadUnaligned(fromByteOffset: o &+ 1 &* stride, as: V.self)
            var a2 = out.loadUnaligned(fromByteOffset: o &+ 2 &* stride, as: V.self)
            var a3 = out.loadUnaligned(fromByteOffset: o &+ 3 &* stride, as: V.self)
            var a4 = out.loadUnaligned(fromByteOffset: o &+ 4 &* stride, as: V.self)
            var a5 = out.loadUnaligned(fromByteOffset: o &+ 5 &* stride, as: V.self)
            var a6 = out.loadUnaligned(fromByteOffset: o &+ 6 &* stride, as: V.self)
            var a7 = out.loadUnaligned(fromByteOffset: o &+ 7 &* stride, as: V.self)
            var a8 = out.loadUnaligned(fromByteOffset: o &+ 8 &* stride, as: V.self)
            var a9 = out.loadUnaligned(fromByteOffset: o &+ 9 &* stride, as: V.self)
            var a10 = out.loadUnaligned(fromByteOffset: o &+ 10 &* stride, as: V.self)
            var a11 = out.loadUnaligned(fromByteOffset: o &+ 11 &* stride, as: V.self)
            var a12 = out.loadUnaligned(fromByteOffset: o &+ 12 &* stride, as: V.self)
            var a13 = out.loadUnaligned(fromByteOffset: o &+ 13 &* stride, as: V.self)
            var a14 = out.loadUnaligned(fromByteOffset: o &+ 14 &* stride, as: V.self)
            var a15 = out.loadUnaligned(fromByteOffset: o &+ 15 &* stride, as: V.self)
            var g = gains
            for s in 0..<count {
                let x = UnsafeRawPointer(inputs[s] + t).loadUnaligned(as: V.self)
                a0 = a0.addingProduct(x, V(repeating: g[0]))
                a1 = a1.addingProduct(x, V(repeating: g[1]))
                a2 = a2.addingProduct(x, V(repeating: g[2]))
                a3 = a3.addingProduct(x, V(repeating: g[3]))
                a4 = a4.addingProduct(x, V(repeating: g[4]))
                a5 = a5.addingProduct(x, V(repeating: g[5]))
                a6 = a6.addingProduct(x, V(repeating: g[6]))
                a7 = a7.addingProduct(x, V(repeating: g[7]))
                a8 = a8.addingProduct(x, V(repeating: g[8]))
                a9 = a9.addingProduct(x, V(repeating: g[9]))
                a10 = a10.addingProduct(x, V(repeating: g[10]))
                a11 = a11.addingProduct(x, V(repeating: g[11]))
                a12 = a12.addingProduct(x, V(repeating: g[12]))
                a13 = a13.addingProduct(x, V(repeating: g[13]))
                a14 = a14.addingProduct(x, V(repeating: g[14]))
                a15 = a15.addingProduct(x, V(repeating: g[15]))
                g += SphericalHarmonics.channelCount
            }
            out.storeBytes(of: a0, toByteOffset: o &+ 0 &* stride, as: V.self)
            out.storeBytes(of: a1, toByteOffset: o &+ 1 &* stride, as: V.self)
            out.storeBytes(of: a2, toByteOffset: o &+ 2 &* stride, as: V.self)
            out.storeBytes(of: a3, toByteOffset: o &+ 3 &* stride, as: V.self)
            out.storeBytes(of: a4, toByteOffset: o &+ 4 &* stride, as: V.self)
            out.storeBytes(of: a5, toByteOffset: o &+ 5 &* stride, as: V.self)
            out.storeBytes(of: a6, toByteOffset: o &+ 6 &* stride, as: V.self)
            out.storeBytes(of: a7, toByteOffset: o &+ 7 &* stride, as: V.self)
            out.storeBytes(of: a8, toByteOffset: o &+ 8 &* stride, as: V.self)
            out.storeBytes(of: a9, toByteOffset: o &+ 9 &* stride, as: V.self)
            out.storeBytes(of: a10, toByteOffset: o &+ 10 &* stride, as: V.self)
            out.storeBytes(of: a11, toByteOffset: o &+ 11 &* stride, as: V.self)
            out.storeBytes(of: a12, toByteOffset: o &+ 12 &* stride, as: V.self)
            out.storeBytes(of: a13, toByteOffset: o &+ 13 &* stride, as: V.self)
            out.storeBytes(of: a14, toByteOffset: o &+ 14 &* stride, as: V.self)
            out.storeBytes(of: a15, toByteOffset: o &+ 15 &* stride, as: V.self)
            t &+= V.scalarCount
        }
    }

    /// Frames from `t` in vectors of `V`, four channels at a time held in registers while every
    /// source is added, while whole vectors fit; `stride`: bytes between channels.
    @inlinable @inline(__always)
    static func encodeRows<V: SIMD>(of _: V.Type, _ inputs: UnsafePointer<UnsafePointer<Float>>, _ gains: UnsafePointer<Float>,
                                    _ count: Int, _ frames: Int, _ out: UnsafeMutableRawPointer, _ stride: Int,
                                    _ fusedMultiplyAdd: Bool, _ t: inout Int) where V.Scalar == Float {
        let size = MemoryLayout<Float>.stride
        @inline(__always) func add(_ sum: inout V, _ x: V, _ gain: Float) {
            if fusedMultiplyAdd { sum = sum.addingProduct(x, V(repeating: gain)) } else { sum += x * V(repeating: gain) }
        }
        while t &+ V.scalarCount <= frames {
            var channel = 0
            while channel < SphericalHarmonics.channelCount {
                let o = channel &* stride &+ t &* size
                var a0 = out.loadUnaligned(fromByteOffset: o, as: V.self)
                var a1 = out.loadUnaligned(fromByteOffset: o &+ stride, as: V.self)
                var a2 = out.loadUnaligned(fromByteOffset: o &+ 2 &* stride, as: V.self)
                var a3 = out.loadUnaligned(fromByteOffset: o &+ 3 &* stride, as: V.self)
                var g = gains + channel
                for s in 0..<count {
                    let x = UnsafeRawPointer(inputs[s] + t).loadUnaligned(as: V.self)
                    add(&a0, x, g[0]); add(&a1, x, g[1]); add(&a2, x, g[2]); add(&a3, x, g[3])
                    g += SphericalHarmonics.channelCount
                }
                out.storeBytes(of: a0, toByteOffset: o, as: V.self)
                out.storeBytes(of: a1, toByteOffset: o &+ stride, as: V.self)
                out.storeBytes(of: a2, toByteOffset: o &+ 2 &* stride, as: V.self)
                out.storeBytes(of: a3, toByteOffset: o &+ 3 &* stride, as: V.self)
                channel &+= 4
            }
            t &+= V.scalarCount
        }
    }
}

/// One source channel on the bus. The interaural delay is applied per source, before
/// encoding, as on the HRTF voices (HRTFSet.delays), and each ear's delayed signal goes into
/// that ear's field; the decoder's filters then only have to carry the time-aligned
/// (minimum-phase) responses, which vary smoothly enough with direction for third order to
/// hold their magnitudes. A third-order projection of the delayed responses instead loses most
/// of the ITD (measured: 65 µs for KEMAR's 276 µs at 30°), since the interaural phase needs
/// more than order 3 above ~1 kHz.
///
/// The delays are whole samples (the encoder reads the input that many samples back): at
/// 48 kHz that is within 10.4 µs of the set's delay per ear, or 15.6 µs while the hysteresis
/// holds a delay that is moving, well inside the bus's ±60 µs ITD budget, and it costs nothing
/// per sample. A change of delay crossfades the two readings across the sub-block.
///
/// The delays read the caller's input in place, `historyLength` samples back into the history
/// the caller keeps before it (RenderSource's planar buffers): at 1024 sources a copy of every
/// span into the voice costs more than the sum it feeds. Only while the low-pass is on does
/// the voice filter a copy, keeping the filtered history in its own buffer.
///
/// Keeps the gains it reached, its low-pass, its delays and, while filtering, its input history.
public final class AmbisonicBusVoice {
    public let maximumFrames: Int
    /// Past input the delays read (the largest delay, whole samples): the caller keeps this
    /// many samples of history before every input it passes.
    public let historyLength: Int
    /// historyLength samples of filtered history, then the latest span (`heldFrames` of them);
    /// current only while `filtersCopy`.
    let input: UnsafeMutablePointer<Float>
    @exclusivity(unchecked) private var heldFrames = 0
    /// The last span was filtered here (the history in `input` is the one to read).
    @exclusivity(unchecked) private var filtersCopy = false
    /// Samples since the low-pass last changed the signal: once they cover the history, the
    /// caller's (unfiltered) history is the voice's and the input can be read in place.
    @exclusivity(unchecked) private var unfilteredFrames: Int
    @exclusivity(unchecked) var gains = SIMD16<Float>()
    /// Each ear's level correction applied with `gains` (AmbisonicDecodeFilters.earLevels).
    @exclusivity(unchecked) var earLevels = SIMD2<Float>(1, 1)
    @exclusivity(unchecked) var lowpass = OnePoleLowpass()
    /// Each ear's delay, in whole samples.
    @exclusivity(unchecked) var delays: (left: Int, right: Int) = (0, 0)
    @exclusivity(unchecked) var started = false

    public init(maximumDelaySamples: Float, maximumFrames: Int) {
        self.maximumFrames = maximumFrames
        historyLength = Self.historyLength(maximumDelaySamples: maximumDelaySamples)
        unfilteredFrames = historyLength
        input = .allocate(capacity: historyLength + maximumFrames)
        input.initialize(repeating: 0, count: historyLength + maximumFrames)
    }

    /// The history a voice for delays up to `maximumDelaySamples` reads before its input.
    public static func historyLength(maximumDelaySamples: Float) -> Int {
        Int(maximumDelaySamples.rounded(.up)) + 1
    }

    deinit { input.deallocate() }

    /// True while the voice still contributes (its gains have not reached zero).
    public var isSounding: Bool { !gains.isZero }

    /// The harmonics of `direction`, kept while it stays put (a still source under a turning
    /// head: the bus is in world orientation).
    func harmonics(_ direction: Vector3) -> SIMD16<Float> {
        if direction != harmonicsDirection {
            harmonicsDirection = direction
            cachedHarmonics = SphericalHarmonics.sn3d(direction)
        }
        return cachedHarmonics
    }
    @exclusivity(unchecked) private var harmonicsDirection = Vector3(x: 0, y: 0, z: 0)
    @exclusivity(unchecked) private var cachedHarmonics = SphericalHarmonics.sn3d(Vector3(x: 0, y: 0, z: 0))

    /// The span to encode, with `historyLength` samples of history before it: `source` itself
    /// while the low-pass passes everything, else a filtered copy.
    func span(_ source: UnsafePointer<Float>, frames: Int, lowpassCoefficient: Float) -> UnsafePointer<Float> {
        let passes = lowpass.coefficient == 1 && lowpassCoefficient == 1
        if passes && unfilteredFrames >= historyLength {
            lowpass.pass(source, frames: frames)
            filtersCopy = false
            unfilteredFrames = min(unfilteredFrames + frames, Int(Int32.max))
            return source
        }
        let x: UnsafeMutablePointer<Float>
        if filtersCopy {
            if heldFrames > 0 { input.update(from: input + heldFrames, count: historyLength) }
            x = input + historyLength
            x.update(from: source, count: frames)
        } else {
            // Until now the input was read in place, unfiltered: its history is the voice's.
            input.update(from: source - historyLength, count: historyLength + frames)
            x = input + historyLength
        }
        heldFrames = frames
        filtersCopy = true
        lowpass.process(x, frames: frames, targetCoefficient: lowpassCoefficient)
        unfilteredFrames = passes ? unfilteredFrames + frames : 0
        return UnsafePointer(x)
    }

    /// The whole-sample delay for `delaySamples`: the nearest, held while it stays within
    /// 0.75 samples so that a delay hovering at a half sample does not crossfade every block.
    func wholeDelay(_ delaySamples: Float, current: Int) -> Int {
        let nearest = min(max(Int(delaySamples.rounded()), 0), historyLength)
        guard started, abs(delaySamples - Float(current)) <= 0.75 else { return nearest }
        return current
    }

    /// While the source plays on its HRTF voice: the voice falls silent, and a move back to
    /// the bus starts from the caller's history (a full one: an empty one would put a step
    /// into the crossfade where the delayed signal begins).
    public func follow() {
        filtersCopy = false
        unfilteredFrames = max(unfilteredFrames, historyLength)
        gains = SIMD16<Float>()
        started = false
    }
}
