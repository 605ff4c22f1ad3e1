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
        var before: Float = -1, after: Float = -1
        /// Half the smallest normal float, from a value the compiler cannot fold.
        let scale = Float(ProcessInfo.processInfo.processIdentifier > 0 ? 0.5 : 0.25)
        var halfOfSmallestNormal: Float { Float.leastNormalMagnitude * scale }
    }

    @Test func aThreadThatRendersFlushesDenormalsToZero() {
        let probe = Probe()
        // A thread of its own: the setting is per thread and stays with it.
        let thread = Thread {
            let output = UnsafeMutablePointer<Float>.allocate(capacity: 2 * probe.engine.configuration.blockFrames)
            // A new thread inherits its creator's setting, which an earlier render may have set.
            scenesound_set_denormal_flushing(0)
            probe.before = probe.halfOfSmallestNormal
            probe.engine.render(into: output)
            probe.after = probe.halfOfSmallestNormal
            output.deallocate()
            probe.done.signal()
        }
        thread.start()
        probe.done.wait()
        #expect(probe.before > 0 && probe.before.isSubnormal, "without flushing, the product is a denormal")
        #expect(probe.after == 0, "after a block, the rendering thread flushes denormals to zero")
    }
}
