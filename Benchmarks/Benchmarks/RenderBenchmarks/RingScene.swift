import SceneSoundDSP
import SceneSoundEngine
import SceneSoundSOFA

/// The throughput scene of docs/ARCHITECTURE.md "Quality and performance bars": N mono noise sources
/// evenly spaced on a 2 m ring around the listener, the head turning at 90°/s, so that every
/// source moves relative to the head in every sub-block (each voice crossfades two filters).
/// `scenesound bench` and Benchmarks/openal/openal_bench.c render the same scene.
enum RingScene {
    static let radiusMetres = 2.0
    static let yawDegreesPerSecond = 90.0
    static let sampleRateHz = 48000.0
    static let blockFrames = 256

    static var configuration: EngineConfiguration {
        EngineConfiguration(sampleRateHz: sampleRateHz, blockFrames: blockFrames)
    }

    /// Source `index` of `count`, at ear height, starting straight ahead and going round.
    static func position(ofSource index: Int, count: Int) -> Vector3 {
        let azimuth = 360.0 * Double(index) / Double(count)
        return SphericalPosition(azimuthDegrees: azimuth, distanceMetres: radiusMetres).cartesian
    }

    static func headPose(atSeconds seconds: Double) -> HeadPose {
        HeadPose(orientation: Quaternion(yawDegrees: yawDegreesPerSecond * seconds))
    }

    /// Summing N uncorrelated sources raises the level by √N; keep the mix near full scale
    /// so the limiter stays in its usual (mostly idle) state.
    static func sourceGain(count: Int) -> Float { Float(0.3 / Double(count).squareRoot()) }

    /// The real KEMAR set at 48 kHz, through the loader's disk cache (prepared once).
    static let hrtf: HRTFSet = {
        do {
            return try HRTFLoader().load(path: SOFAFile.defaultPath, sampleRateHz: sampleRateHz).set
        } catch {
            fatalError("cannot load the HRTF set at \(SOFAFile.defaultPath): \(error) (run scripts/deps)")
        }
    }()
}

/// Uniform white noise from a fixed seed (xorshift32), so every run renders the same audio.
struct NoiseTable {
    let samples: [Float]

    init(frames: Int, seed: UInt32 = 0x9E37_79B9) {
        var state = seed
        samples = (0..<frames).map { _ in
            state ^= state << 13; state ^= state >> 17; state ^= state << 5
            return Float(state) / Float(UInt32.max) * 2 - 1
        }
    }
}

/// A mono source input that loops a shared noise table from its own offset (so the sources
/// are mutually uncorrelated). Real-time safe: copies only.
final class LoopingNoiseInput: SourceInput {
    private let table: UnsafeMutableBufferPointer<Float>
    private var position: Int
    /// Channels beyond the first read the table from further offsets.
    private let channelCount: Int

    init(table: UnsafeMutableBufferPointer<Float>, offset: Int, channelCount: Int = 1) {
        self.table = table
        position = offset % table.count
        self.channelCount = channelCount
    }

    var isFinished: Bool { false }

    func read(into channels: UnsafeMutablePointer<UnsafeMutablePointer<Float>>, frames: Int) -> Int {
        for channel in 0..<channelCount {
            var written = 0, at = (position + channel * 7919) % table.count
            while written < frames {
                let n = min(frames - written, table.count - at)
                (channels[channel] + written).update(from: table.baseAddress! + at, count: n)
                written += n
                at = (at + n) % table.count
            }
        }
        position = (position + frames) % table.count
        return frames
    }
}
