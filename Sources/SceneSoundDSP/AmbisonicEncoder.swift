// Encoding a mono source into the third-order bus (one field per ear, see AmbisonicBusVoice):
// sixteen gains from its direction (SphericalHarmonics.sn3d times the source's level), glided
// linearly across each sub-block
// from the previous sub-block's gains so that a moving source never steps. The bus is
// encoded in world orientation, so a still source under a turning head keeps constant gains
// and takes the cheaper constant-gain path.

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

    /// The same, eight frames at a time across all sixteen channels (the input is loaded
    /// once per eight frames).
    public static func encode(input x: UnsafePointer<Float>, frames: Int,
                              from g0: SIMD16<Float>, to g1: SIMD16<Float>,
                              bus: UnsafeMutablePointer<Float>, channelStride: Int) {
        let size = MemoryLayout<Float>.stride
        let input = UnsafeRawPointer(x), out = UnsafeMutableRawPointer(bus)
        let vectorFrames = frames & ~7
        let inverse = 1 / Float(frames)
        if g0 == g1 {
            var t = 0
            while t < vectorFrames {
                let v = input.loadUnaligned(fromByteOffset: t * size, as: SIMD8<Float>.self)
                for a in 0..<SphericalHarmonics.channelCount {
                    let offset = (a * channelStride + t) * size
                    let sum = out.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self) + v * g1[a]
                    out.storeBytes(of: sum, toByteOffset: offset, as: SIMD8<Float>.self)
                }
                t += 8
            }
        } else {
            let delta = g1 - g0
            var ramp = SIMD8<Float>(1, 2, 3, 4, 5, 6, 7, 8) * inverse
            let step = SIMD8<Float>(repeating: 8 * inverse)
            var t = 0
            while t < vectorFrames {
                let v = input.loadUnaligned(fromByteOffset: t * size, as: SIMD8<Float>.self)
                for a in 0..<SphericalHarmonics.channelCount {
                    let offset = (a * channelStride + t) * size
                    let gain = SIMD8(repeating: g0[a]) + SIMD8(repeating: delta[a]) * ramp
                    let sum = out.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self) + v * gain
                    out.storeBytes(of: sum, toByteOffset: offset, as: SIMD8<Float>.self)
                }
                ramp += step
                t += 8
            }
        }
        for t in vectorFrames..<frames {
            for a in 0..<SphericalHarmonics.channelCount {
                bus[a * channelStride + t] += x[t] * (g0[a] + (g1[a] - g0[a]) * (Float(t + 1) * inverse))
            }
        }
    }
}

/// One source channel on the bus. The interaural delay is applied per source, before
/// encoding, exactly as on the HRTF voices (HRTFSet.delays, the same Lagrange interpolator),
/// and each ear's delayed signal goes into that ear's field; the decoder's filters then only
/// have to carry the time-aligned (minimum-phase) responses, which vary smoothly enough with
/// direction for third order to hold their magnitudes. A third-order projection of the
/// delayed responses instead loses most of the ITD (measured: 65 µs for KEMAR's 276 µs at
/// 30°), since the interaural phase needs more than order 3 above ~1 kHz.
///
/// Keeps the gains it reached, its low-pass, its delays and their input history.
public final class AmbisonicBusVoice {
    public let maximumFrames: Int
    /// Past input kept for the delay lines (largest delay + interpolator reach).
    let historyLength: Int
    let input: UnsafeMutablePointer<Float>   // historyLength + maximumFrames
    var gains = SIMD16<Float>()
    var lowpass = OnePoleLowpass()
    var delays: (left: Float, right: Float) = (0, 0)
    var started = false

    public init(maximumDelaySamples: Float, maximumFrames: Int) {
        self.maximumFrames = maximumFrames
        historyLength = Int(maximumDelaySamples.rounded(.up)) + 4
        input = .allocate(capacity: historyLength + maximumFrames)
        input.initialize(repeating: 0, count: historyLength + maximumFrames)
    }

    deinit { input.deallocate() }

    /// True while the voice still contributes (its gains have not reached zero).
    public var isSounding: Bool { gains != SIMD16<Float>() }

    /// Keeps the delay lines' history current while the source plays on its HRTF voice, so
    /// that a move to the bus starts from a full delay line (an empty one would put a step
    /// into the crossfade where the delayed signal begins).
    public func follow(_ source: UnsafePointer<Float>, frames: Int) {
        if frames >= historyLength {
            input.update(from: source + (frames - historyLength), count: historyLength)
        } else {
            input.update(from: input + frames, count: historyLength - frames)
            (input + historyLength - frames).update(from: source, count: frames)
        }
        gains = SIMD16<Float>()
        started = false
    }

    /// Forgets all past audio: the next encode starts from silence at its target.
    public func reset() {
        input.update(repeating: 0, count: historyLength + maximumFrames)
        gains = SIMD16<Float>()
        lowpass.reset()
        started = false
    }
}
