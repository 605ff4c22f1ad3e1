import SceneSoundProtocol

/// One client's upload of one sample in progress (SPEC.md 6.6): chunks arrive in order and
/// are converted to engine Float as they come, so a large sample is never held twice as wire
/// bytes and Float.
final class SampleUploadAssembler {
    let name: String
    let format: AudioFormat
    let totalBytes: Int
    private(set) var receivedBytes = 0
    private let converter: PCMConverter
    private var samples: [Float] = []

    init(first chunk: SampleUpload, engineRateHz: Double) throws {
        name = chunk.name
        format = chunk.format
        totalBytes = Int(chunk.totalBytes)
        converter = try PCMConverter(format: chunk.format, engineRateHz: engineRateHz)
        samples.reserveCapacity(Int((Double(totalBytes / format.bytesPerFrame) * converter.rateRatio).rounded(.up) + 64)
                                * Int(format.channels))
    }

    /// Whether `chunk` continues this upload: same format and size, at the next offset.
    func isNext(_ chunk: SampleUpload) -> Bool {
        chunk.format == format && Int(chunk.totalBytes) == totalBytes && Int(chunk.offsetBytes) == receivedBytes
    }

    var isComplete: Bool { receivedBytes == totalBytes }

    func append(_ chunk: SampleUpload) {
        samples += converter.convert(chunk.pcm)
        receivedBytes += chunk.pcm.count
    }

    /// The finished sample (with the resampler's tail).
    func finish() -> CachedSample {
        samples += converter.flush()
        return CachedSample(name: name, channelCount: Int(format.channels), samples: samples)
    }

    /// Seconds of audio the whole sample holds, from its header alone.
    static func durationSeconds(of chunk: SampleUpload) -> Double {
        Double(Int(chunk.totalBytes) / chunk.format.bytesPerFrame) / Double(chunk.format.rateHz)
    }
}
