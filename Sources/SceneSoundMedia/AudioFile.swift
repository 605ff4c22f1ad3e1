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
    /// The file's channel map, in PulseAudio's names (`front-left`, `lfe`, `rear-left`, …;
    /// ChannelMapNames), when it declares one (libsndfile's SFC_GET_CHANNEL_MAP_INFO).
    public var channelMap: [String]?

    public init(sampleRateHz: Double, channelCount: Int, interleaved: [Float], channelMap: [String]? = nil) {
        self.sampleRateHz = sampleRateHz
        self.channelCount = channelCount
        self.interleaved = interleaved
        self.channelMap = channelMap
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
        return DecodedAudio(sampleRateHz: Double(info.samplerate), channelCount: channels, interleaved: samples,
                            channelMap: ChannelMapNames.read(file, channelCount: channels))
    }
}

/// libsndfile's channel positions by PulseAudio's names, which `paplay --channel-map` and
/// the CLI use too.
public enum ChannelMapNames {
    static let byPosition: [Int32: String] = [
        Int32(SF_CHANNEL_MAP_MONO): "mono",
        Int32(SF_CHANNEL_MAP_LEFT): "front-left", Int32(SF_CHANNEL_MAP_RIGHT): "front-right",
        Int32(SF_CHANNEL_MAP_CENTER): "front-center",
        Int32(SF_CHANNEL_MAP_FRONT_LEFT): "front-left", Int32(SF_CHANNEL_MAP_FRONT_RIGHT): "front-right",
        Int32(SF_CHANNEL_MAP_FRONT_CENTER): "front-center", Int32(SF_CHANNEL_MAP_REAR_CENTER): "rear-center",
        Int32(SF_CHANNEL_MAP_REAR_LEFT): "rear-left", Int32(SF_CHANNEL_MAP_REAR_RIGHT): "rear-right",
        Int32(SF_CHANNEL_MAP_LFE): "lfe",
        Int32(SF_CHANNEL_MAP_FRONT_LEFT_OF_CENTER): "front-left-of-center",
        Int32(SF_CHANNEL_MAP_FRONT_RIGHT_OF_CENTER): "front-right-of-center",
        Int32(SF_CHANNEL_MAP_SIDE_LEFT): "side-left", Int32(SF_CHANNEL_MAP_SIDE_RIGHT): "side-right",
        Int32(SF_CHANNEL_MAP_TOP_CENTER): "top-center",
        Int32(SF_CHANNEL_MAP_TOP_FRONT_LEFT): "top-front-left", Int32(SF_CHANNEL_MAP_TOP_FRONT_RIGHT): "top-front-right",
        Int32(SF_CHANNEL_MAP_TOP_FRONT_CENTER): "top-front-center",
        Int32(SF_CHANNEL_MAP_TOP_REAR_LEFT): "top-rear-left", Int32(SF_CHANNEL_MAP_TOP_REAR_RIGHT): "top-rear-right",
        Int32(SF_CHANNEL_MAP_TOP_REAR_CENTER): "top-rear-center",
    ]
    /// For writing: each name's libsndfile position (LEFT, RIGHT and CENTER for the front
    /// speakers: the ones its WAVE_FORMAT_EXTENSIBLE writer knows).
    static let byName: [String: Int32] = {
        var names: [String: Int32] = [:]
        for (position, name) in byPosition { names[name] = min(names[name] ?? .max, position) }
        return names
    }()

    /// The open file's map, nil when it declares none (or a position of no name here).
    static func read(_ file: OpaquePointer, channelCount: Int) -> [String]? {
        var positions = [Int32](repeating: 0, count: channelCount)
        let ok = positions.withUnsafeMutableBytes {
            sf_command(file, Int32(SFC_GET_CHANNEL_MAP_INFO), $0.baseAddress, Int32($0.count))
        }
        guard ok == Int32(SF_TRUE) else { return nil }
        return positions.map { byPosition[$0] ?? "sndfile-position-\($0)" }
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

    /// `channelMap`: PulseAudio's names of the channels (ChannelMapNames), written into the
    /// file's header (WAVE_FORMAT_EXTENSIBLE's channel mask).
    public init(path: String, sampleRateHz: Int, channelCount: Int, inPlace: Bool = false,
                channelMap: [String]? = nil) throws {
        self.path = path
        self.channelCount = channelCount
        let url = URL(fileURLWithPath: path)
        temporaryPath = inPlace ? path : url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).\(getpid()).partial").path
        var info = SF_INFO()
        info.samplerate = Int32(sampleRateHz)
        info.channels = Int32(channelCount)
        // A channel map needs WAVE_FORMAT_EXTENSIBLE (its channel mask).
        info.format = Int32((channelMap == nil ? SF_FORMAT_WAV : SF_FORMAT_WAVEX) | SF_FORMAT_FLOAT)
        guard let file = sf_open(temporaryPath, Int32(SFM_WRITE), &info) else {
            throw AudioFileError("\(path): cannot create (\(String(cString: sf_strerror(nil))))")
        }
        self.file = file
        if let channelMap {
            var positions = try channelMap.map { name in
                guard let position = ChannelMapNames.byName[name] else {
                    throw AudioFileError("\(path): channel '\(name)' has no libsndfile position")
                }
                return position
            }
            let ok = positions.withUnsafeMutableBytes {
                sf_command(file, Int32(SFC_SET_CHANNEL_MAP_INFO), $0.baseAddress, Int32($0.count))
            }
            guard positions.count == channelCount, ok == Int32(SF_TRUE) else {
                discard()
                throw AudioFileError("\(path): the channel map \(channelMap.joined(separator: ",")) cannot be written")
            }
        }
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
