import CSndFile
import Foundation

public struct AudioFileError: Error, CustomStringConvertible, Equatable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// A decoded audio file: interleaved float samples in [−1, 1].
public struct DecodedAudio: Sendable {
    public var sampleRateHz: Double
    public var channelCount: Int
    public var interleaved: [Float]

    public init(sampleRateHz: Double, channelCount: Int, interleaved: [Float]) {
        self.sampleRateHz = sampleRateHz
        self.channelCount = channelCount
        self.interleaved = interleaved
    }

    public var frameCount: Int { channelCount > 0 ? interleaved.count / channelCount : 0 }
    public var durationSeconds: Double { Double(frameCount) / sampleRateHz }

    /// One channel's samples.
    public func channel(_ index: Int) -> [Float] {
        stride(from: index, to: interleaved.count, by: channelCount).map { interleaved[$0] }
    }
}

/// Reads any format libsndfile decodes (WAV, FLAC, Ogg Vorbis, AIFF, …).
public enum AudioFileReader {
    public static func read(path: String) throws -> DecodedAudio {
        var info = SF_INFO()
        guard let file = sf_open(path, Int32(SFM_READ), &info) else {
            let reason = String(cString: sf_strerror(nil))
            if !FileManager.default.fileExists(atPath: path) {
                throw AudioFileError("\(path): no such file")
            }
            throw AudioFileError("\(path): not a readable audio file (\(reason))")
        }
        defer { sf_close(file) }
        guard info.channels > 0, info.samplerate > 0 else {
            throw AudioFileError("\(path): the file declares no channels or no sample rate")
        }
        // Decoded floats are normalised to [−1, 1] whatever the source format.
        sf_command(file, Int32(SFC_SET_NORM_FLOAT), nil, Int32(SF_TRUE))
        let channels = Int(info.channels)
        var samples: [Float] = []
        samples.reserveCapacity(Int(max(0, info.frames)) * channels)
        let chunkFrames = 16384
        var chunk = [Float](repeating: 0, count: chunkFrames * channels)
        while true {
            let got = chunk.withUnsafeMutableBufferPointer { sf_readf_float(file, $0.baseAddress, sf_count_t(chunkFrames)) }
            if got <= 0 { break }
            samples.append(contentsOf: chunk[0..<Int(got) * channels])
        }
        if sf_error(file) != 0 {
            throw AudioFileError("\(path): decoding failed (\(String(cString: sf_strerror(file))))")
        }
        return DecodedAudio(sampleRateHz: Double(info.samplerate), channelCount: channels, interleaved: samples)
    }
}

/// Writes 32-bit float WAV. By default the file appears under its name only when `finish`
/// succeeds (it is written beside it and renamed), so a failed run leaves no partial output.
/// `inPlace` writes the named file directly, for a long-running recording that others read
/// while it grows (with `flushHeader` after each write).
public final class AudioFileWriter {
    public let path: String
    private let temporaryPath: String
    private var file: OpaquePointer?
    public let channelCount: Int
    public private(set) var framesWritten = 0

    public init(path: String, sampleRateHz: Int, channelCount: Int, inPlace: Bool = false) throws {
        self.path = path
        self.channelCount = channelCount
        let url = URL(fileURLWithPath: path)
        temporaryPath = inPlace ? path : url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).\(getpid()).partial").path
        var info = SF_INFO()
        info.samplerate = Int32(sampleRateHz)
        info.channels = Int32(channelCount)
        info.format = Int32(SF_FORMAT_WAV | SF_FORMAT_FLOAT)
        guard let file = sf_open(temporaryPath, Int32(SFM_WRITE), &info) else {
            throw AudioFileError("\(path): cannot create (\(String(cString: sf_strerror(nil))))")
        }
        self.file = file
    }

    deinit { discard() }

    /// Appends interleaved frames.
    public func write(_ interleaved: UnsafePointer<Float>, frames: Int) throws {
        guard let file else { throw AudioFileError("\(path): already closed") }
        let written = sf_writef_float(file, interleaved, sf_count_t(frames))
        guard written == frames else {
            throw AudioFileError("\(path): write failed (\(String(cString: sf_strerror(file))))")
        }
        framesWritten += frames
    }

    public func write(_ interleaved: [Float]) throws {
        try interleaved.withUnsafeBufferPointer { try write($0.baseAddress!, frames: $0.count / channelCount) }
    }

    /// Flushes the header so that the file on disk is a valid WAV of everything written so far
    /// (used by the daemon's wav output while it runs).
    public func flushHeader() {
        guard let file else { return }
        sf_command(file, Int32(SFC_UPDATE_HEADER_NOW), nil, 0)
    }

    /// Closes the file and moves it into place.
    public func finish() throws {
        guard let file else { return }
        self.file = nil
        guard sf_close(file) == 0 else {
            unlink(temporaryPath)
            throw AudioFileError("\(path): closing failed")
        }
        guard temporaryPath == path || rename(temporaryPath, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporaryPath)
            throw AudioFileError("\(path): cannot move into place (\(reason))")
        }
    }

    /// Closes and deletes what was written (an in-place recording is only closed: it is the
    /// user's data).
    public func discard() {
        if let file {
            sf_close(file)
            self.file = nil
            if temporaryPath != path { unlink(temporaryPath) }
        }
    }
}
