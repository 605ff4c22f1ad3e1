import Benchmark
import SceneSoundEngine
import SceneSoundPlatform

// One benchmark iteration is one render block (256 frames at 48 kHz, 5.33 ms of audio).
//
// The gate is `mallocCountTotal`: zero allocations in every block, at every percentile —
// docs/ARCHITECTURE.md "Real-time rules": zero allocations per block. The static thresholds in
// Benchmarks/Thresholds (checked by `make bench`) hold 0, and the tolerance below allows no
// deviation from it. Set-up (streams, voices, the HRTF load) happens outside the measurement.

let benchmarks: @Sendable () -> Void = {
    let zeroMallocs = BenchmarkThresholds(absolute: [.p0: 0, .p25: 0, .p50: 0, .p75: 0, .p90: 0, .p99: 0, .p100: 0])
    Benchmark.defaultConfiguration = .init(
        // Process CPU time ticks in 10 ms steps, too coarse for one call; `scenesound bench`
        // measures CPU seconds per audio second with the thread's CPU clock instead.
        metrics: [.wallClock, .mallocCountTotal],
        timeUnits: .microseconds,
        warmupIterations: 10,
        scalingFactor: .one,
        maxDuration: .seconds(2),
        maxIterations: 2000,
        thresholds: [.mallocCountTotal: zeroMallocs]
    )

    // Names without spaces: the tool writes threshold files with spaces turned into '_' but
    // looks them up by the name as it is.
    for sources in [1, 16, 64, 255, 1024] {
        Benchmark("Engine.render_block_\(sources)_sources") { benchmark, harness in
            for _ in benchmark.scaledIterations { harness.renderBlock() }
        } setup: {
            EngineRingHarness(sourceCount: sources)
        }
    }

    for sources in [1, 16, 64, 255] {
        Benchmark("SpatialRenderer.render_block_\(sources)_sources") { benchmark, harness in
            for _ in benchmark.scaledIterations { harness.renderBlock() }
        } setup: {
            RendererRingHarness(sourceCount: sources)
        }
    }

    // Live HRTF switches back to back (docs/ARCHITECTURE.md "A live HRTF switch"): the blocks
    // that render two sets and crossfade them allocate nothing either.
    Benchmark("SpatialRenderer.render_block_16_sources_switching_hrtf",
              configuration: .init(maxIterations: 600)) { benchmark, harness in
        for _ in benchmark.scaledIterations { harness.renderBlock() }
    } setup: {
        HRTFSwitchHarness(sourceCount: 16, blocks: 700)
    }

    // The daemon's default room: the late reverb on the render path too.
    Benchmark("SpatialRenderer.render_block_64_sources_small_room") { benchmark, harness in
        for _ in benchmark.scaledIterations { harness.renderBlock() }
    } setup: {
        RendererRingHarness(sourceCount: 64, room: .small)
    }

    // The output device's renderings (docs/BEHAVIOUR.md "Output devices"): 64 sources panned over
    // 5.1 speakers (no HRTF voice, no bus), and changes of rendering back to back, each block of
    // a change rendering two of them from one input and crossfading.
    Benchmark("SpatialRenderer.render_block_64_sources_speakers_51") { benchmark, harness in
        for _ in benchmark.scaledIterations { harness.renderBlock() }
    } setup: {
        RendererRingHarness(sourceCount: 64, room: .small, rendering: .init(method: .speakers(.surround51)))
    }
    Benchmark("SpatialRenderer.render_block_16_sources_changing_rendering",
              configuration: .init(maxIterations: 600)) { benchmark, harness in
        for _ in benchmark.scaledIterations { harness.renderBlock() }
    } setup: {
        RenderingChangeHarness(sourceCount: 16)
    }

    // What a desk adds, all at once: sources in the near field (0.5–0.8 m), a 5.1 stream's
    // virtual speakers, the headphone EQ, the room.
    Benchmark("SpatialRenderer.render_block_64_sources_desk") { benchmark, harness in
        for _ in benchmark.scaledIterations { harness.renderBlock() }
    } setup: {
        RendererRingHarness(sourceCount: 64, room: .small, desk: true)
    }

    // A captured app's audio waking the resting output from the PipeWire node's data thread
    // (docs/ARCHITECTURE.md "Real-time rules"): 32 sets ring in a cycle, the event loop's answer
    // re-arms. One iteration is one cycle and its answer.
    Benchmark("Doorbell.ring_32_sets_and_answer") { benchmark, doorbell in
        for _ in benchmark.scaledIterations {
            for _ in 0 ..< 32 { doorbell.ring() }
            blackHole(doorbell.answer())
        }
    } setup: {
        Doorbell()
    }
}
