import ArgumentParser
import Foundation
import SceneSoundDSP
import SceneSoundEngine

#if canImport(Glibc)
import Glibc
#endif
import SceneSoundPlatform

/// `scenesound bench`: the throughput scene of docs/ARCHITECTURE.md "Quality and performance bars" — N
/// mono noise sources on a 2 m ring, the head turning at 90°/s — through the real engine
/// (streams, rings, command queue), offline and as fast as it goes. Prints one JSON line.
/// Benchmarks/openal/openal_bench.c renders the same scene with OpenAL Soft for comparison.
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure the engine's CPU cost on N moving sources (one JSON line).",
        discussion: """
            cpu_seconds_per_audio_second is the render thread's CPU time (CLOCK_THREAD_CPUTIME_ID, \
            so other load on the machine does not inflate it) spent in Engine.render, over the \
            audio rendered; 1.0 means one core is fully busy keeping up in real time. Feeding \
            the streams' rings (the server's side) is not counted.
            """)

    @Option(name: .customLong("sources"), parsing: .unconditional, help: ArgumentHelp("Number of mono noise sources on the ring.", valueName: "N"))
    var sourceCount: Int = 64

    @Option(name: .customLong("seconds"), parsing: .unconditional, help: ArgumentHelp("Audio seconds to render (after a short warm-up).", valueName: "S"))
    var seconds: Double = 10

    @Flag(name: .customLong("floor"), help: """
        Measure the floor instead: each source's block read from its ring, then a plain FFT \
        convolution (the sources the voice cap allows) or the bus's 32 multiply-adds a sample.
        """)
    var floor = false

    @Option(name: .customLong("speakers"), help: ArgumentHelp("""
        Render for loudspeakers instead of headphones (head-tracked binaural): 2.0, 5.1 or 7.1, \
        into as many output channels.
        """, valueName: "LAYOUT"))
    var speakers: String?

    @OptionGroup var rendering: RenderingOptions

    static let ringRadiusMetres = 2.0
    static let yawDegreesPerSecond = 90.0

    func validate() throws {
        guard (1...4096).contains(sourceCount) else {
            throw ValidationError("--sources \(sourceCount) is out of range (accepted: 1 to 4096)")
        }
        guard seconds > 0, seconds <= 3600 else {
            throw ValidationError("--seconds \(seconds) is out of range (accepted: more than 0, up to 3600)")
        }
        if let speakers, SpeakerLayout(rawValue: speakers) == nil {
            throw ValidationError("--speakers \(speakers) is not a layout (accepted: 2.0, 5.1, 7.1)")
        }
        if speakers != nil && floor {
            throw ValidationError("--speakers and --floor do not go together (the floor is the binaural path's)")
        }
    }

    func run() throws {
        if floor { return try runFloor() }
        let hrtf = try rendering.loadHRTF()
        let scene = BenchScene(hrtf: hrtf, busFilters: rendering.loadBusFilters(for: hrtf), sourceCount: sourceCount,
                               configuration: EngineConfiguration(sampleRateHz: Double(rendering.rateHz),
                                                                  blockFrames: rendering.blockFrames,
                                                                  maximumHRTFVoices: rendering.maximumHRTFVoices),
                               rendering: speakers.flatMap(SpeakerLayout.init(rawValue:)).map {
                                   OutputRendering(method: .speakers($0))
                               } ?? .headphones)
        let result = scene.measure(seconds: seconds)
        let fields = commonFields(renderCPUSeconds: result.renderCPUSeconds, audioSeconds: result.audioSeconds) + [
            // The governor's split at the end of the run (voices: a stereo source counts two).
            ("hrtf_voices", "\(scene.engine.hrtfVoiceCount)"),
            ("bus_voices", "\(scene.engine.busVoiceCount)"),
            ("kernels", "\"\(RenderKernels.fastest.name)\""),
            ("rendering", "\"\(scene.rendering)\""),
            ("governor_moves_to_bus", "\(scene.engine.governorMovesToBus)"),
            ("governor_moves_to_hrtf", "\(scene.engine.governorMovesToHRTF)"),
            ("peak_block_load", String(format: "%.3f", result.peakBlockLoad)),
            ("wall_seconds", String(format: "%.3f", result.wallSeconds)),
        ]
        print("{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}")
    }

    /// What every run prints first: the CPU per audio second and the run's shape.
    private func commonFields(renderCPUSeconds: Double, audioSeconds: Double) -> [(String, String)] {
        [
            ("cpu_seconds_per_audio_second", String(format: "%.4f", renderCPUSeconds / audioSeconds)),
            ("sources", "\(sourceCount)"),
            ("seconds", String(format: "%.3f", audioSeconds)),
            ("block_frames", "\(rendering.blockFrames)"),
            ("rate_hz", "\(rendering.rateHz)"),
        ]
    }

    /// The floor for the engine's split: as many sources on voices as the cap allows.
    private func runFloor() throws {
        let scene = BenchFloor(hrtf: try rendering.loadHRTF(), sourceCount: sourceCount,
                               voiceCount: min(sourceCount, rendering.maximumHRTFVoices), blockFrames: rendering.blockFrames,
                               sampleRateHz: Double(rendering.rateHz),
                               spanFrames: EngineConfiguration.voiceSpanFrames(blockFrames: rendering.blockFrames))
        let result = scene.measure(seconds: seconds)
        let fields = commonFields(renderCPUSeconds: result.renderCPUSeconds, audioSeconds: result.audioSeconds) + [
            ("floor", "true"),
            ("hrtf_voices", "\(scene.voiceCount)"),
            ("bus_voices", "\(sourceCount - scene.voiceCount)"),
            ("kernels", "\"\(RenderKernels.fastest.name)\""),
            ("wall_seconds", String(format: "%.3f", result.wallSeconds)),
        ]
        print("{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}")
    }
}

/// The ring scene set up on an `Engine` exactly as the server would: one `EngineStream` per
/// source with its own `AudioRing`, added and placed through the command queue, the head pose
/// sent before every block.
final class BenchScene {
    let engine: Engine
    let configuration: EngineConfiguration
    /// Binaural head-tracked (headphones), or a speaker layout's panning.
    let rendering: OutputRendering
    private let feeder: BenchRings
    private let output: UnsafeMutablePointer<Float>
    private var renderedFrames = 0

    init(hrtf: HRTFSet, busFilters: AmbisonicDecodeFilters? = nil, sourceCount: Int, configuration: EngineConfiguration,
         rendering: OutputRendering = .headphones) {
        self.configuration = configuration
        self.rendering = rendering
        engine = Engine(hrtf: hrtf, configuration: configuration, maximumStreams: sourceCount,
                        maximumScenes: sourceCount, busFilters: busFilters)
        feeder = BenchRings(count: sourceCount, blockFrames: configuration.blockFrames,
                            sampleRateHz: configuration.sampleRateHz)
        output = .allocate(capacity: rendering.channelCount * configuration.blockFrames)
        // Offline there is no deadline to protect, and the blocks' wall-clock times on a busy
        // machine would have the governor move voices to the bus: the split is the cap's.
        engine.renderer.governor.simulatedLoadFraction = 0

        let gain = Float(0.3 / Double(sourceCount).squareRoot())  // keeps the mix near full scale
        var commands: [EngineCommand] = []
        for index in 0..<sourceCount {
            let input = RingInput(ring: feeder.rings[index])
            input.setIdle(false)
            let azimuth = 360.0 * Double(index) / Double(sourceCount)
            let position = SphericalPosition(azimuthDegrees: azimuth, distanceMetres: BenchCommand.ringRadiusMetres).cartesian
            let source = RenderSource(input: input, channelCount: 1, mode: .anchored, channelPositions: [position],
                                      gain: gain, hrtf: hrtf, maximumFrames: configuration.blockFrames)
            let stream = EngineStream(id: StreamID(index + 1), source: source, input: input, sceneIndex: index)
            commands.append(.placeScene(index: index, position: position, widthMetres: 0))
            commands.append(.addStream(stream))
        }
        send(.setHeadPose(Self.headPose(atSeconds: 0), glide: false))
        if rendering != .headphones { send(.setRendering(rendering)) }  // before any source: at once
        for command in commands { send(command) }
        // The engine takes at most 512 commands a block; warm up until every stream is in and
        // every voice is past its first block.
        while engine.renderer.sources.count < sourceCount { renderBlock() }
        renderBlock()
    }

    deinit { output.deallocate() }

    static func headPose(atSeconds seconds: Double) -> HeadPose {
        HeadPose(orientation: Quaternion(yawDegrees: BenchCommand.yawDegreesPerSecond * seconds))
    }

    /// Queues a command, rendering blocks while the queue is full (only while setting up).
    private func send(_ command: EngineCommand) {
        while !engine.commands.push(command) { renderBlock() }
    }

    struct Measurement {
        var audioSeconds: Double
        var renderCPUSeconds: Double
        var wallSeconds: Double
        /// The engine's own figure: the slowest block's render time over its duration.
        var peakBlockLoad: Double
    }

    func measure(seconds: Double) -> Measurement {
        let block = configuration.blockFrames
        let blocks = max(1, Int((seconds * configuration.sampleRateHz / Double(block)).rounded()))
        _ = engine.takePeakRenderLoad()
        var cpuNanoseconds = 0
        let wallStart = MonotonicClock.nowNanoseconds()
        for _ in 0..<blocks {
            feedRings()
            let poseSeconds = Double(renderedFrames + block) / configuration.sampleRateHz
            _ = engine.commands.push(.setHeadPose(Self.headPose(atSeconds: poseSeconds), glide: true))
            let start = MonotonicClock.threadCPUNanoseconds()
            engine.render(into: output, channelCount: rendering.channelCount)
            cpuNanoseconds += MonotonicClock.threadCPUNanoseconds() - start
            renderedFrames += block
        }
        let wall = Double(MonotonicClock.nowNanoseconds() - wallStart) * 1e-9
        return Measurement(audioSeconds: Double(blocks * block) / configuration.sampleRateHz,
                           renderCPUSeconds: Double(cpuNanoseconds) * 1e-9, wallSeconds: wall,
                           peakBlockLoad: engine.takePeakRenderLoad())
    }

    private func renderBlock() {
        feedRings()
        let block = configuration.blockFrames
        let pose = Self.headPose(atSeconds: Double(renderedFrames + block) / configuration.sampleRateHz)
        _ = engine.commands.push(.setHeadPose(pose, glide: true))
        engine.render(into: output, channelCount: rendering.channelCount)
        renderedFrames += block
    }

    private func feedRings() { feeder.feed(renderedFrames: renderedFrames) }
}

/// The streams' rings of the bench's scene and the server's side of them: one second of white
/// noise (fixed seed), each source reading it from its own offset.
final class BenchRings {
    let rings: [AudioRing]
    private let noise: [Float]
    private let blockFrames: Int

    init(count: Int, blockFrames: Int, sampleRateHz: Double) {
        self.blockFrames = blockFrames
        var state: UInt32 = 0x9E37_79B9
        noise = (0..<Int(sampleRateHz)).map { _ in
            state ^= state << 13; state ^= state >> 17; state ^= state << 5
            return Float(state) / Float(UInt32.max) * 2 - 1
        }
        rings = (0..<count).map { _ in AudioRing(capacityFrames: 4 * blockFrames, channelCount: 1) }
    }

    /// One block of noise into each ring that needs it. A plain indexed loop: this program is
    /// built without optimisation in debug, and an enumerated, filtered sequence there costs
    /// more per ring than the write itself.
    func feed(renderedFrames: Int) {
        let block = blockFrames
        let span = noise.count - block
        noise.withUnsafeBufferPointer { noise in
            let base = noise.baseAddress!
            // Each ring lent, not retained: at 1024 rings the reference counting costs more
            // than checking a ring that needs nothing.
            rings.withUnsafeBufferPointer { rings in
                var index = 0
                while index < rings.count {
                    Unmanaged.passUnretained(rings[index])._withUnsafeGuaranteedRef { ring in
                        if ring.availableFrames < block {
                            _ = ring.write(base + (renderedFrames + index * 4801) % span, frames: block)
                        }
                    }
                    index += 1
                }
            }
        }
    }
}
