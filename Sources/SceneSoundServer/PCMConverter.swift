import SceneSoundMedia
import SceneSoundProtocol

/// Turns a stream's wire PCM into interleaved Float at the engine's rate: integer formats are
/// scaled to [−1, 1), other rates go through libsoxr. Runs on the event loop.
final class PCMConverter {
    let format: AudioFormat
    let engineRateHz: Double
    private var resampler: Resampler?
    private var floats: [Float] = []

    init(format: AudioFormat, engineRateHz: Double) throws {
        self.format = format
        self.engineRateHz = engineRateHz
        if Double(format.rateHz) != engineRateHz {
            resampler = try Resampler(inputRateHz: Double(format.rateHz), outputRateHz: engineRateHz,
                                      channelCount: Int(format.channels))
        }
    }

    /// Engine frames per wire frame.
    var rateRatio: Double { engineRateHz / Double(format.rateHz) }

    /// Converts whole frames of PCM (the caller checked the length).
    func convert(_ pcm: ArraySlice<UInt8>) -> [Float] {
        Self.decode(pcm, format: format.sampleFormat, into: &floats)
        guard let resampler else { return floats }
        return resampler.process(floats)
    }

    /// The resampler's remaining tail (at a drain); the next data starts a fresh filter.
    func flush() -> [Float] {
        guard let resampler else { return [] }
        let tail = resampler.process([])
        self.resampler = try? Resampler(inputRateHz: Double(format.rateHz), outputRateHz: engineRateHz,
                                        channelCount: Int(format.channels))
        return tail
    }

    static func decode(_ pcm: ArraySlice<UInt8>, format: SampleFormat, into out: inout [Float]) {
        out.removeAll(keepingCapacity: true)
        pcm.withUnsafeBytes { raw in
            switch format {
            case .s16le:
                let count = raw.count / 2
                out.reserveCapacity(count)
                for i in 0..<count {
                    out.append(Float(Int16(littleEndian: raw.loadUnaligned(fromByteOffset: i * 2, as: Int16.self))) / 32768)
                }
            case .s32le:
                let count = raw.count / 4
                out.reserveCapacity(count)
                for i in 0..<count {
                    out.append(Float(Int32(littleEndian: raw.loadUnaligned(fromByteOffset: i * 4, as: Int32.self))) / 2_147_483_648)
                }
            case .f32le:
                let count = raw.count / 4
                out.reserveCapacity(count)
                for i in 0..<count {
                    out.append(Float(bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: i * 4, as: UInt32.self))))
                }
            }
        }
    }
}
