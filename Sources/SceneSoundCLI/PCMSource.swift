import Foundation
import SceneSoundEngine
import SceneSoundMedia
import SceneSoundProtocol

/// Where `scenesound play` gets its audio: whole audio frames in `format`, chunk by chunk.
protocol PCMSource {
    var format: AudioFormat { get }
    /// Which speaker each channel feeds, when not the standard layout for the count.
    var channelMap: [ChannelPosition]? { get }
    /// Nil when unknown (stdin).
    var durationSeconds: Double? { get }
    /// The next chunk of whole frames, or nil at the end.
    mutating func nextChunk() throws -> [UInt8]?
    /// Called at the end: throws when the input ended badly (e.g. inside an audio frame).
    func checkComplete() throws
}

/// How much audio one chunk holds: small enough for smooth progress, large enough that the
/// per-call overhead does not matter.
let chunkSeconds = 0.1

/// A file, decoded (DecodedFile), sent a chunk at a time.
struct DecodedFileSource: PCMSource {
    private let file: DecodedFile
    private var nextFrame = 0
    private let framesPerChunk: Int

    init(path: String) throws {
        file = try DecodedFile(path: path)
        framesPerChunk = max(1, Int(Double(file.format.rateHz) * chunkSeconds))
    }

    var format: AudioFormat { file.format }
    var channelMap: [ChannelPosition]? { file.channelMap }
    var durationSeconds: Double? { Double(file.frameCount) / Double(file.format.rateHz) }

    mutating func nextChunk() throws -> [UInt8]? {
        guard nextFrame < file.frameCount else { return nil }
        let end = min(nextFrame + framesPerChunk, file.frameCount)
        defer { nextFrame = end }
        return file.bytes(frames: nextFrame..<end)
    }

    func checkComplete() throws {}
}

/// An audio file decoded by libsndfile for sending, as 32-bit float at the file's own rate,
/// with its channel map (FileChannelLayout): up to 7.1. A rate the protocol does not carry, more
/// than eight channels, or no audio at all, is an error naming the file.
struct DecodedFile {
    let format: AudioFormat
    let channelMap: [ChannelPosition]?
    /// Interleaved.
    let samples: [Float]
    var frameCount: Int { samples.count / Int(format.channels) }

    init(path: String) throws {
        let audio: DecodedAudio
        do { audio = try AudioFileReader.read(path: path) } catch let error as AudioFileError {
            throw RuntimeError(error.description)
        }
        let rate = audio.sampleRateHz
        guard rate.rounded() == rate, ProtocolLimits.rateHzRange.contains(UInt32(clamping: Int(rate))) else {
            throw RuntimeError("\(path): sample rate \(rate) Hz is not supported (accepted: 8000 to 192000 Hz)")
        }
        guard audio.frameCount > 0 else { throw RuntimeError("\(path): the file holds no audio") }
        let layout = try FileChannelLayout.of(audio, path: path)
        samples = audio.interleaved
        format = AudioFormat(sampleFormat: .f32le, rateHz: UInt32(rate), channels: UInt8(audio.channelCount))
        channelMap = layout == ChannelLayout.standard(channelCount: audio.channelCount)
            ? nil : layout.speakers.map { ChannelPosition(rawValue: UInt8($0.rawValue))! }
    }

    /// The samples as f32le bytes: the host's Float layout (Swift on Linux is little-endian only).
    func bytes(frames range: Range<Int>) -> [UInt8] {
        let channels = Int(format.channels)
        return samples[range.lowerBound * channels..<range.upperBound * channels].withUnsafeBytes { Array($0) }
    }
}

/// Raw interleaved PCM from standard input, in the format the options name.
struct StandardInputSource: PCMSource {
    let format: AudioFormat
    /// From --channel-map; nil: the standard layout for the count.
    let channelMap: [ChannelPosition]?
    var durationSeconds: Double? { nil }
    private var leftover: [UInt8] = []
    private let chunkBytes: Int

    init(format: AudioFormat, channelMap: [ChannelPosition]? = nil) {
        self.format = format
        self.channelMap = channelMap
        let framesPerChunk = max(1, Int(Double(format.rateHz) * chunkSeconds))
        chunkBytes = framesPerChunk * format.bytesPerFrame
    }

    mutating func nextChunk() throws -> [UInt8]? {
        var chunk = leftover
        leftover = []
        var buffer = [UInt8](repeating: 0, count: chunkBytes)
        while chunk.count < chunkBytes {
            let count = buffer.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress, chunkBytes - chunk.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw RuntimeError("reading standard input failed (\(String(cString: strerror(errno))))")
            }
            if count == 0 { break }
            chunk += buffer[..<count]
        }
        let whole = chunk.count - chunk.count % format.bytesPerFrame
        leftover = Array(chunk[whole...])
        return whole > 0 ? Array(chunk[..<whole]) : nil
    }

    func checkComplete() throws {
        guard leftover.isEmpty else {
            throw RuntimeError("standard input ended inside an audio frame: the last \(leftover.count) bytes were not played (frames are \(format.bytesPerFrame) bytes)")
        }
    }
}
