import Foundation

/// The daemon's WAV output (32-bit float stereo) and the measurements the tests make on it.
struct StereoMix {
    let rateHz: Double
    /// (left + right) / 2 per frame: spatial filtering changes each ear's level and phase, not
    /// a tone's frequency, so the mono sum keeps what the tests measure.
    let mono: [Float]
    /// Each ear, for the cues of a sound's direction.
    let left: [Float], right: [Float]

    init(wavPath: String) throws {
        let data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: wavPath)))
        func u32(_ at: Int) -> Int { Int(data[at]) | Int(data[at + 1]) << 8 | Int(data[at + 2]) << 16 | Int(data[at + 3]) << 24 }
        func u16(_ at: Int) -> Int { Int(data[at]) | Int(data[at + 1]) << 8 }
        var offset = 12, rate = 0, channels = 0, bits = 0
        var samples: [Float] = []
        while offset + 8 <= data.count {  // RIFF chunks: id, size, body
            let id = String(decoding: data[offset..<offset + 4], as: UTF8.self), size = u32(offset + 4)
            if id == "fmt " { channels = u16(offset + 10); rate = u32(offset + 12); bits = u16(offset + 22) }
            if id == "data" {
                let end = min(data.count, offset + 8 + size)
                samples = stride(from: offset + 8, to: end - 3, by: 4).map { Float(bitPattern: UInt32(u32($0))) }
            }
            offset += 8 + size + size % 2
        }
        guard channels == 2, bits == 32, rate > 0 else {
            throw DaemonFailure(description: "unexpected WAV: \(channels) channels, \(bits) bits")
        }
        rateHz = Double(rate)
        mono = stride(from: 0, to: samples.count - 1, by: 2).map { (samples[$0] + samples[$0 + 1]) / 2 }
        left = stride(from: 0, to: samples.count - 1, by: 2).map { samples[$0] }
        right = stride(from: 1, to: samples.count, by: 2).map { samples[$0] }
    }

    /// From the first to the last frame louder than `threshold`.
    func audibleRange(threshold: Float = 0.01) -> Range<Int>? {
        guard let first = mono.firstIndex(where: { abs($0) > threshold }),
              let last = mono.lastIndex(where: { abs($0) > threshold }) else { return nil }
        return first..<last + 1
    }

    func seconds(_ range: Range<Int>) -> Double { Double(range.count) / rateHz }

    /// A pure tone's frequency from its rising zero crossings, interpolated between samples.
    func frequencyHz(in range: Range<Int>) -> Double {
        var crossings: [Double] = []
        for index in range.dropFirst() where mono[index - 1] < 0 && mono[index] >= 0 {
            let fraction = Double(-mono[index - 1] / (mono[index] - mono[index - 1]))
            crossings.append(Double(index - 1) + fraction)
        }
        guard crossings.count > 2, let first = crossings.first, let last = crossings.last else { return 0 }
        return Double(crossings.count - 1) * rateHz / (last - first)
    }

    func peak(in range: Range<Int>) -> Float { mono[range].map(abs).max() ?? 0 }

    /// The middle part of a range, away from fades and the spatializer's crossfades.
    func middle(of range: Range<Int>, fraction: Double = 0.5) -> Range<Int> {
        let trim = Int(Double(range.count) * (1 - fraction) / 2)
        return range.lowerBound + trim..<range.upperBound - trim
    }
}
