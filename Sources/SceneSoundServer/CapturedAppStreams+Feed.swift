import Foundation
import Synchronization
import SceneSoundEngine

extension CapturedAppStreams {
    /// The producer side of one captured stream's ring: written on the capture's thread only.
    ///
    /// The capture arrives on the sound server's schedule (fragments of a few ms) and the
    /// output takes blocks on its own (often two at once), so the ring must hold their jitter,
    /// and no more: what sits in it is latency. Each second the lowest fill seen just before
    /// new audio arrived is compared with a small margin, and the excess is skipped from what
    /// comes next — the queue settles where it never runs dry and adds nothing beyond that.
    /// Not in a stream's first second: event sounds are shorter, and are heard whole.
    /// When the stream runs dry all the same (its audio came later than the margin allows: a
    /// busy machine holds up PulseAudio's main thread by tens of milliseconds, PipeWire now and
    /// then delivers a graph cycle late), the late audio comes after in a burst, and the margin
    /// grows by what the ring then holds above it, at most by what was missing and up to 50 ms,
    /// so that the same lateness is not heard again. A paused app's recording brings no burst
    /// after it ran dry: the margin stays as it was.
    public final class Feed: @unchecked Sendable {
        let ring: AudioRing
        let input: RingInput
        private var marginFrames: Int
        private let maximumMarginFrames: Int
        private var starvedFramesSeen = 0
        /// Frames the ring ran dry by lately, which a late burst may pay into the margin, for
        /// `owedWindowsLeft` more windows.
        private var lateFramesOwed = 0
        private var owedWindowsLeft = 0
        private let windowFrames: Int
        private let maximumQueuedFrames: Int
        private var lowestFill = Int.max
        private var framesInWindow = 0
        private var framesToSkip = 0
        private var framesSeen = 0
        private let dropped = Atomic<Int>(0)
        public var droppedFrameCount: Int { dropped.load(ordering: .relaxed) }
        private let received = Atomic<Int>(0)
        /// Every frame handed to `write`, kept or not.
        public var receivedFrameCount: Int { received.load(ordering: .relaxed) }

        /// Wakes a resting output (free while it is awake).
        private let wake: @Sendable () -> Void

        private let channelCount: Int

        init(capacityFrames: Int, marginFrames: Int, maximumMarginFrames: Int, windowFrames: Int, maximumQueuedFrames: Int,
             channelCount: Int = 2, wake: @escaping @Sendable () -> Void = {}) {
            self.wake = wake
            self.channelCount = channelCount
            ring = AudioRing(capacityFrames: capacityFrames, channelCount: channelCount)
            input = RingInput(ring: ring, holdsStartForWholeBlock: true)
            self.marginFrames = marginFrames
            self.maximumMarginFrames = maximumMarginFrames
            self.windowFrames = windowFrames
            self.maximumQueuedFrames = maximumQueuedFrames
        }

        /// Interleaved in the stream's channels, at the engine's rate.
        public func write(interleaved samples: UnsafeBufferPointer<Float>) {
            guard var base = samples.baseAddress else { return }
            var frames = samples.count / channelCount
            let fill = ring.availableFrames
            let starved = input.starvedFrameCount
            if starved > starvedFramesSeen {
                // Paid at a window's end, from the lowest fill of a window after the one it
                // ran dry in (there the lowest fill is nothing).
                lateFramesOwed = min(maximumMarginFrames, lateFramesOwed + starved - starvedFramesSeen)
                owedWindowsLeft = 2
                starvedFramesSeen = starved
            }
            framesSeen += frames
            received.add(frames, ordering: .relaxed)
            if framesSeen > 2 * windowFrames {
                lowestFill = min(lowestFill, fill)
                framesInWindow += frames
            }
            if framesInWindow >= windowFrames {
                if lowestFill > marginFrames {
                    let grown = min(lowestFill - marginFrames, lateFramesOwed, maximumMarginFrames - marginFrames)
                    marginFrames += grown
                    lateFramesOwed -= grown
                    framesToSkip += lowestFill - marginFrames
                }
                if owedWindowsLeft > 0 { owedWindowsLeft -= 1 }
                if owedWindowsLeft == 0 { lateFramesOwed = 0 }
                lowestFill = Int.max
                framesInWindow = 0
            }
            let skipped = min(frames, framesToSkip)
            framesToSkip -= skipped
            base += channelCount * skipped
            frames -= skipped
            let room = max(0, min(ring.freeFrames, maximumQueuedFrames - fill))
            let written = frames > 0 ? ring.write(base, frames: min(frames, room)) : 0
            let lost = skipped + frames - written
            if lost > 0 { dropped.add(lost, ordering: .relaxed) }
            if written > 0 {
                input.setIdle(false)
                wake()
            }
        }
    }
}
