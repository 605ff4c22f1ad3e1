import ArgumentParser
import Foundation
import SceneSoundDSP
import SceneSoundEngine
import SceneSoundMedia
import SceneSoundSOFA

// Also the daemon's --room and --hrtf-eq: scenesoundd links this module (one conformance per program).
extension Room: ExpressibleByArgument {}
extension HRTFEqualization: ExpressibleByArgument {}

/// Options shared by every verb that renders through the engine.
struct RenderingOptions: ParsableArguments {
    @Option(name: .customLong("hrtf"), help: ArgumentHelp("The HRTF set (any AES69 SOFA file).", valueName: "FILE.sofa"))
    var hrtfPath: String = SOFAFile.defaultPath

    @Option(name: .customLong("hrtf-eq"), help: ArgumentHelp("How the set is equalized: diffuse (diffuse-field, a neutral timbre) or none (as measured).", valueName: "diffuse|none"))
    var hrtfEqualization: HRTFEqualization = .diffuse

    @Option(name: .customLong("rate"), parsing: .unconditional, help: ArgumentHelp("Output sample rate.", valueName: "HZ"))
    var rateHz: Int = 48000

    @Option(name: .customLong("block"), parsing: .unconditional, help: ArgumentHelp("Render quantum in frames (128–8192, a multiple of 128 above 256).", valueName: "FRAMES"))
    var blockFrames: Int = 256

    @Option(name: .customLong("hrtf-voices"), parsing: .unconditional,
            help: ArgumentHelp("The cap on per-source HRTF voices; the rest go to the ambisonic bus (0: the bus alone).",
                               valueName: "N"))
    var maximumHRTFVoices: Int = EngineConfiguration().maximumHRTFVoices

    func validate() throws {
        guard maximumHRTFVoices >= 0 else {
            throw ValidationError("--hrtf-voices \(maximumHRTFVoices) is out of range (accepted: 0 or more)")
        }
        guard EngineConfiguration.sampleRateRange.contains(Double(rateHz)) else {
            throw ValidationError("--rate \(rateHz) is out of range (accepted: 8000 to 192000 Hz)")
        }
        let block = EngineConfiguration(blockFrames: blockFrames)
        guard EngineConfiguration.blockFramesRange.contains(blockFrames),
              blockFrames % block.subBlockCount == 0
        else {
            throw ValidationError("--block \(blockFrames) is not usable (accepted: 128 to 8192 frames that split into equal parts of at least 128)")
        }
    }

    func loadHRTF() throws -> HRTFSet {
        do {
            return try HRTFLoader().load(path: hrtfPath, sampleRateHz: Double(rateHz), equalization: hrtfEqualization).set
        } catch let error as HRTFLoadError {
            throw RuntimeError("\(error.description); pass --hrtf with an AES69 SOFA file")
        }
    }

    /// The bus decoder for `hrtf`, cached on disk like the prepared set.
    func loadBusFilters(for hrtf: HRTFSet) -> AmbisonicDecodeFilters {
        AmbisonicDecoderCache().filters(for: hrtf).filters
    }
}

struct RenderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render",
        abstract: "Render a file binaurally, offline, through the same engine as the server.",
        discussion: """
            Directions follow SOFA: azimuth counter-clockwise from straight ahead (+90 = left), \
            elevation up. A stereo input renders as two sources a little apart; 3 to 8 channels \
            (up to 7.1) as virtual speakers at the ITU-R positions, their front towards --azimuth \
            (the file's channel map, else WAVE order: FL FR FC LFE BL BR SL SR). The output is \
            32-bit float stereo WAV at --rate; it appears only when the render succeeded.
            """)

    @Argument(help: ArgumentHelp("Input audio file (any format libsndfile reads, 1 to 8 channels).", valueName: "IN"))
    var inputPath: String

    @Option(name: [.customShort("o"), .customLong("output")], help: ArgumentHelp("Output WAV file.", valueName: "OUT.wav"))
    var outputPath: String

    @Option(name: .customLong("azimuth"), parsing: .unconditional, help: ArgumentHelp("Source azimuth in degrees.", valueName: "DEG"))
    var azimuthDegrees: Double = 0

    @Option(name: .customLong("elevation"), parsing: .unconditional, help: ArgumentHelp("Source elevation in degrees.", valueName: "DEG"))
    var elevationDegrees: Double = 0

    @Option(name: .customLong("distance"), parsing: .unconditional, help: ArgumentHelp("Source distance in metres.", valueName: "M"))
    var distanceMetres: Double = 1

    @Option(name: .customLong("head-yaw"), parsing: .unconditional, help: ArgumentHelp("Head yaw at the start, degrees (+ = turned left).", valueName: "DEG"))
    var headYawDegrees: Double = 0

    @Option(name: .customLong("yaw-rate"), parsing: .unconditional, help: ArgumentHelp("Head turning speed, degrees per second.", valueName: "DEG_PER_S"))
    var yawRateDegreesPerSecond: Double = 0

    @Option(name: .customLong("room"), help: "Late reverb for externalisation: none, small or medium.")
    var room: Room = .none

    @OptionGroup var rendering: RenderingOptions

    func validate() throws {
        guard distanceMetres > 0, distanceMetres.isFinite else {
            throw ValidationError("--distance \(distanceMetres) must be a positive number of metres")
        }
        guard (-90...90).contains(elevationDegrees) else {
            throw ValidationError("--elevation \(elevationDegrees) is out of range (accepted: -90 to 90 degrees)")
        }
    }

    func run() throws {
        let hrtf = try rendering.loadHRTF()
        let audio: DecodedAudio
        do {
            let decoded = try AudioFileReader.read(path: inputPath)
            guard ChannelLayout.channelCountRange.contains(decoded.channelCount) else {
                throw RuntimeError("\(inputPath): \(decoded.channelCount) channels are not supported (accepted: 1 to 8)")
            }
            guard EngineConfiguration.sampleRateRange.contains(decoded.sampleRateHz) else {
                throw RuntimeError("\(inputPath): sample rate \(Int(decoded.sampleRateHz)) Hz is not supported (accepted: 8000 to 192000)")
            }
            audio = try decoded.resampled(to: Double(rendering.rateHz))
        } catch let error as AudioFileError {
            throw RuntimeError(error.description)
        }

        let configuration = EngineConfiguration(sampleRateHz: Double(rendering.rateHz), blockFrames: rendering.blockFrames,
                                                room: room, maximumHRTFVoices: rendering.maximumHRTFVoices)
        let renderer = SpatialRenderer(hrtf: hrtf, configuration: configuration, maximumSources: 1,
                                       busFilters: rendering.loadBusFilters(for: hrtf))
        // Offline, the render's speed says nothing about overload: the paths follow the cap
        // alone, so the same command gives the same file on a busy machine.
        renderer.governor.simulatedLoadFraction = 0
        let position = SphericalPosition(azimuthDegrees: azimuthDegrees, elevationDegrees: elevationDegrees,
                                         distanceMetres: distanceMetres).cartesian
        let layout = try FileChannelLayout.of(audio, path: inputPath)
        let input = BufferInput(interleaved: audio.interleaved, channelCount: audio.channelCount)
        let source = RenderSource(
            input: input, channelCount: audio.channelCount, layout: layout, mode: .anchored,
            channelPositions: RenderSource.channelPositions(around: position, layout: layout,
                                                            spreadDegrees: configuration.stereoSpreadDegrees),
            gain: 1, hrtf: hrtf, maximumFrames: configuration.blockFrames)
        renderer.add(source)

        let writer: AudioFileWriter
        do {
            writer = try AudioFileWriter(path: outputPath, sampleRateHz: rendering.rateHz, channelCount: 2)
        } catch let error as AudioFileError {
            throw RuntimeError(error.description)
        }
        let block = configuration.blockFrames
        // The whole input, then the filters' and the room's tail; the limiter's delay is
        // trimmed from the start so that the output lines up with the input.
        let totalFrames = audio.frameCount + renderer.tailFrames
        let latency = renderer.latencyFrames
        var output = [Float](repeating: 0, count: block * 2)
        var rendered = 0, written = 0
        do {
            renderer.setHeadPose(headPose(atSeconds: 0), glide: false)
            while written < totalFrames {
                rendered += block
                renderer.setHeadPose(headPose(atSeconds: Double(rendered) / Double(rendering.rateHz)))
                try output.withUnsafeMutableBufferPointer { buffer in
                    renderer.render(into: buffer.baseAddress!)
                    let skip = max(0, min(block, latency - (rendered - block)))
                    let count = min(block - skip, totalFrames - written)
                    if count > 0 {
                        try writer.write(buffer.baseAddress! + 2 * skip, frames: count)
                        written += count
                    }
                }
            }
            try writer.finish()
        } catch let error as AudioFileError {
            writer.discard()
            throw RuntimeError(error.description)
        }
    }

    private func headPose(atSeconds t: Double) -> HeadPose {
        HeadPose(orientation: Quaternion(yawDegrees: headYawDegrees + yawRateDegreesPerSecond * t))
    }
}
