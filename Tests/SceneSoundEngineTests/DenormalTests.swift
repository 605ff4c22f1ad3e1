import CCPUFeatures
import Foundation
import Testing
import SceneSoundDSP
import SceneSoundEngine

/// The render thread flushes denormals (a decaying tail must not slow the render 100×).
@Suite struct DenormalTests {
    final class Probe: @unchecked Sendable {
        let engine = Engine(hrtf: KEMAR.set, configuration: EngineConfiguration(), maximumStreams: 1, maximumScenes: 1)
        let done = DispatchSemaphore(value: 0)
        var flushingBefore: Int32 = -1, flushingAfter: Int32 = -1
        var productAfter: Float = -1
        /// Half the smallest normal float, from a value the compiler cannot fold.
        let scale = Float(ProcessInfo.processInfo.processIdentifier > 0 ? 0.5 : 0.25)
    }

    @Test func aThreadThatRendersFlushesDenormalsToZero() {
        let probe = Probe()
        // A thread of its own: the setting is per thread (and a new thread inherits its
        // creator's, which an earlier render may have set: cleared first).
        let thread = Thread {
            let output = UnsafeMutablePointer<Float>.allocate(capacity: 2 * probe.engine.configuration.blockFrames)
            scenesound_set_denormal_flushing(0)
            probe.flushingBefore = scenesound_denormal_flushing()
            probe.engine.render(into: output)
            probe.flushingAfter = scenesound_denormal_flushing()
            probe.productAfter = Float.leastNormalMagnitude * probe.scale
            output.deallocate()
            probe.done.signal()
        }
        thread.start()
        probe.done.wait()
        #expect(probe.flushingBefore == 0, "clearing the setting did not take")
        #expect(probe.flushingAfter == 1, "a rendered block left the thread keeping denormals")
        #expect(probe.productAfter == 0, "half the smallest normal float came out as \(probe.productAfter), not flushed to zero")
    }
}
