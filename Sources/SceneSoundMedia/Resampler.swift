import CSoxr

/// Sample-rate conversion through libsoxr at its very-high-quality setting, for whole
/// buffers (files, HRTF measurements) and for streams fed block by block.
public final class Resampler {
    public let inputRateHz: Double
    public let outputRateHz: Double
    public let channelCount: Int
    private let soxr: soxr_t

    public init(inputRateHz: Double, outputRateHz: Double, channelCount: Int) throws {
        self.inputRateHz = inputRateHz
        self.outputRateHz = outputRateHz
        self.channelCount = channelCount
        var ioSpec = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I)
        var quality = soxr_quality_spec(UInt(SOXR_VHQ), 0)
        var error: soxr_error_t?
        guard let handle = soxr_create(inputRateHz, outputRateHz, UInt32(channelCount), &error, &ioSpec, &quality, nil),
              error == nil
        else {
            throw AudioFileError("cannot resample from \(inputRateHz) Hz to \(outputRateHz) Hz: \(error.map { String(cString: $0) } ?? "soxr_create failed")")
        }
        soxr = handle
    }

    deinit { soxr_delete(soxr) }

    /// Converts more interleaved input; pass an empty array at the end to flush the tail.
    public func process(_ interleaved: [Float]) -> [Float] {
        let inFrames = interleaved.count / channelCount
        let capacity = Int((Double(inFrames) * outputRateHz / inputRateHz).rounded(.up)) + 1024
        var output = [Float](repeating: 0, count: capacity * channelCount)
        var produced = 0
        var consumed = 0
        interleaved.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out in
                var done = 0
                soxr_process(soxr, inFrames > 0 ? input.baseAddress : nil, inFrames, &consumed,
                             out.baseAddress, capacity, &done)
                produced = done
            }
        }
        if inFrames == 0 {
            // Flushing may take several calls to drain the filter's delay line.
            var tail = Array(output[0..<produced * channelCount])
            while produced > 0 {
                produced = 0
                output.withUnsafeMutableBufferPointer { out in
                    var done = 0
                    soxr_process(soxr, nil, 0, nil, out.baseAddress, capacity, &done)
                    produced = done
                }
                tail.append(contentsOf: output[0..<produced * channelCount])
            }
            return tail
        }
        return Array(output[0..<produced * channelCount])
    }

    /// Converts a whole buffer, tail included.
    public static func resample(_ interleaved: [Float], channelCount: Int, from inputRateHz: Double,
                                to outputRateHz: Double) throws -> [Float] {
        guard inputRateHz != outputRateHz else { return interleaved }
        let resampler = try Resampler(inputRateHz: inputRateHz, outputRateHz: outputRateHz, channelCount: channelCount)
        var out = resampler.process(interleaved)
        out.append(contentsOf: resampler.process([]))
        return out
    }
}

extension DecodedAudio {
    /// This audio at another rate.
    public func resampled(to rateHz: Double) throws -> DecodedAudio {
        guard rateHz != sampleRateHz else { return self }
        return DecodedAudio(sampleRateHz: rateHz, channelCount: channelCount,
                            interleaved: try Resampler.resample(interleaved, channelCount: channelCount,
                                                                from: sampleRateHz, to: rateHz),
                            channelMap: channelMap)
    }
}
