import Foundation
import Synchronization
import SceneSoundDSP
import SceneSoundEngine

extension CapturedAppStreams {
    /// The producer side of one captured stream's ring: written on the capture's thread only.
    ///
    /// The capture arrives on the sound server's schedule (fragments of a few ms) and the
    /// output takes blocks on its own (often two at once), so the ring must hold their jitter,
    /// and no more: what sits in it is latency. Each half second the lowest fill seen just before
    /// new audio arrived is compared with a small margin, and the excess is taken from what
    /// comes next (up to 2 ms slipped away a frame at a time, more trimmed by the render where
    /// the audio continues in phase: `RingInput.trim`) — the queue settles
    /// where it never runs dry and adds nothing beyond that.
    /// Not in a stream's first second: event sounds are shorter, and are heard whole.
    /// When the stream runs dry all the same (its audio came later than the margin allows: a
    /// busy machine holds up PulseAudio's main thread by tens of milliseconds, PipeWire now and
    /// then delivers a graph cycle late), the late audio comes after in a burst, and the margin
    /// grows by what the ring then holds above it, at most by what was missing, and by as much
    /// again slipped in a frame a write (up to 50 ms in all): lateness has a tail, and a margin
    /// grown by just what was missing ran dry again at the next spell a little longer
    /// (docs/CAPTURE.md, "Under load"). A paused app's recording brings no burst after it ran
    /// dry: the margin stays as it was. Nor do the graph node's same-cycle feeds, whose copies
    /// stay bit-exact.
    ///
    /// The recordings keep the clock of the sink the apps play on, the output another (a sound
    /// card's crystal; a null sink that runs fast by the microseconds it rounds off each chunk:
    /// docs/CAPTURE.md, "Two clocks"), so the ring drains or fills slowly, and each time it runs dry
    /// or is trimmed the stream jumps (16–48 frames, a click, every second or two). The feed
    /// learns the rate from those corrections (`ClockFollower`) and slips single frames
    /// smoothly at that rate instead (`FrameSlip`), so that the jumps stop. Where the capture
    /// shares the output's clock (the PipeWire node's same-cycle feeds) it makes no corrections
    /// and the stream stays bit-exact.
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
        /// Margin still to gain by slipping single frames in, after a late burst grew it.
        private var marginToSlipIn = 0
        private var framesInWindow = 0
        private var framesSeen = 0
        private let dropped = Atomic<Int>(0)
        /// Frames lost to a full queue, and trimmed from a long one.
        public var droppedFrameCount: Int { dropped.load(ordering: .relaxed) + input.trimmedFrameCount }
        private let received = Atomic<Int>(0)
        /// Every frame handed to `write`, kept or not.
        public var receivedFrameCount: Int { received.load(ordering: .relaxed) }

        /// Wakes a resting output (free while it is awake).
        private let wake: @Sendable () -> Void

        private let channelCount: Int

        private var clock: ClockFollower
        private var trimmedBefore = false
        /// Trims the reader has made so far, and whether those asked since count for the clock.
        private var trimmedFramesSeen = 0
        private var trimsCorrectClock = false
        /// The last frame written (a slip's first reading leans on it), and room for a slipped write.
        private let previousFrame: UnsafeMutablePointer<Float>
        private let slipped: UnsafeMutablePointer<Float>
        /// Fragments come 5–20 ms at a time; a longer write (rare) waits for the next to slip.
        private static let slippedCapacityFrames = 2048
        private let slips = Atomic<Int>(0)
        /// Frames gained (+) or lost (−) to smooth slips so far.
        public var slippedFrameCount: Int { slips.load(ordering: .relaxed) }

        init(capacityFrames: Int, marginFrames: Int, maximumMarginFrames: Int, windowFrames: Int, maximumQueuedFrames: Int,
             channelCount: Int = 2, wake: @escaping @Sendable () -> Void = {}) {
            // Up to 1 000 ppm: a sound card's crystal is within ±100, a null sink 200 fast.
            clock = ClockFollower(maximumFramesPerWindow: max(1, windowFrames / 1000))
            previousFrame = .allocate(capacity: channelCount)
            previousFrame.initialize(repeating: 0, count: channelCount)
            slipped = .allocate(capacity: (Self.slippedCapacityFrames + 1) * channelCount)
            self.wake = wake
            self.channelCount = channelCount
            ring = AudioRing(capacityFrames: capacityFrames, channelCount: channelCount)
            input = RingInput(ring: ring, holdsStartForWholeBlock: true, concealsDrySpells: true)
            self.marginFrames = marginFrames
            self.maximumMarginFrames = maximumMarginFrames
            self.windowFrames = windowFrames
            self.maximumQueuedFrames = maximumQueuedFrames
        }

        deinit {
            previousFrame.deallocate()
            slipped.deallocate()
        }

        /// Interleaved in the stream's channels, at the engine's rate.
        public func write(interleaved samples: UnsafeBufferPointer<Float>) {
            guard let base = samples.baseAddress else { return }
            let frames = samples.count / channelCount
            let fill = ring.availableFrames
            let starved = input.starvedFrameCount
            if starved > starvedFramesSeen {
                let missing = starved - starvedFramesSeen
                // Paid at a window's end, from the lowest fill of a window after the one it
                // ran dry in (there the lowest fill is nothing).
                lateFramesOwed = min(maximumMarginFrames, lateFramesOwed + missing)
                owedWindowsLeft = 2
                starvedFramesSeen = starved
                // The silence read in its place put the stream later by what was missing.
                clock.corrected(by: missing)
            }
            // What the reader trimmed (up to a period less than asked, or nothing yet for a
            // low tone), as it made it.
            let trimmed = input.trimmedFrameCount
            if trimmed > trimmedFramesSeen {
                if trimsCorrectClock { clock.corrected(by: -(trimmed - trimmedFramesSeen)) }
                trimmedFramesSeen = trimmed
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
                    marginToSlipIn = min(marginToSlipIn + grown, maximumMarginFrames - marginFrames)
                    // A little over is slipped away, more (a late burst's leftover) trimmed;
                    // not again what is still being slipped away.
                    let excess = lowestFill - marginFrames - clock.excessToTakeAway
                    // The first trim takes what the stream's start left; later ones the clocks'.
                    if excess > 4 * clock.maximumFramesPerWindow {
                        input.trim(excess)
                        trimsCorrectClock = trimmedBefore
                    } else if excess > 0 {
                        clock.takeAway(excess)
                        if trimmedBefore { clock.corrected(by: -excess) }
                    }
                    trimmedBefore = true
                }
                clock.windowEnded()
                if owedWindowsLeft > 0 { owedWindowsLeft -= 1 }
                if owedWindowsLeft == 0 { lateFramesOwed = 0 }
                lowestFill = Int.max
                framesInWindow = 0
            }
            let room = max(0, min(ring.freeFrames, maximumQueuedFrames - fill))
            var kept = frames
            let canSlip = frames >= 4 && frames <= Self.slippedCapacityFrames && frames + 1 <= room
            var slip = canSlip ? clock.slip(forWriteOf: frames, windowFrames: windowFrames) : 0
            // Margin is slipped in at the pace excess is taken away, and shares it: one frame a
            // write (150 frames from a monitor) flattened a 3.2 kHz tone by 20 Hz for the half
            // second it took, which a 10 ms reading of it takes for gaps.
            if canSlip, slip == 0, marginToSlipIn > 0, clock.mayScheduleSlip() {
                slip = 1
                marginToSlipIn -= 1
                marginFrames += 1
            }
            if slip != 0 {
                FrameSlip.resample(base, frames: frames, channels: channelCount, before: previousFrame, change: slip, into: slipped)
                kept = frames + slip
                slips.add(slip, ordering: .relaxed)
            }
            if frames > 0 { previousFrame.update(from: base + (frames - 1) * channelCount, count: channelCount) }
            let written = kept > 0 ? ring.write(slip != 0 ? UnsafePointer(slipped) : base, frames: min(kept, room)) : 0
            let lost = kept - written
            if lost > 0 { dropped.add(lost, ordering: .relaxed) }
            if written > 0 {
                input.setIdle(false)
                wake()
            }
        }
    }
}

/// The rate at which two clocks part, learned from the corrections a queue between them has
/// to make: frames added when it ran dry (silence read in their place) and frames over what it
/// should hold, taken away. Each window the rate to slip at moves by a share of that window's
/// correction (an integral control): a quarter of what ran dry, which was heard, a sixteenth of
/// what was over, which is slipped away unheard, so that it errs towards a little over. With
/// nothing to correct it stays where it is — at zero where the clocks are one, and so does
/// every slip.
struct ClockFollower {
    /// Frames to gain (+) or lose (−) per window.
    private(set) var framesPerWindow = 0.0
    private var owed = 0.0
    /// Frames to take away soon, one a write at most and no more than one in
    /// `framesPerExcessSlip`: a frame from every write of a short fragment (150 frames from a
    /// monitor: +0.65 %) sharpens a 3 kHz tone by 20 Hz while it lasts, which a 10 ms reading of
    /// it takes for a gap; one in 480 at most stays under 0.21 %.
    private var excess = 0
    var excessToTakeAway: Int { excess }
    /// Frames since the last frame slipped on a schedule (excess taken away, or margin slipped
    /// in by the feed): the two share one pace.
    private var framesSinceScheduledSlip = 0
    static let framesPerExcessSlip = 480
    private var correctionsInWindow = 0
    /// The fastest parting followed. A single correction of more than four times it is
    /// lateness (a dry spell a burst makes up for) or a burst's leftover trimmed, and is not
    /// counted; a window counts at most that much (the first seconds of a busy machine run a
    /// stream dry a few times over as its jitter grows: a level found, not a clock).
    let maximumFramesPerWindow: Int

    init(maximumFramesPerWindow: Int) {
        self.maximumFramesPerWindow = maximumFramesPerWindow
    }

    mutating func corrected(by frames: Int) {
        if abs(frames) <= 4 * maximumFramesPerWindow { correctionsInWindow += frames }
    }

    /// Frames over what the queue should hold: slipped away (counted by the caller).
    mutating func takeAway(_ frames: Int) { excess += frames }

    mutating func windowEnded() {
        let limit = Double(maximumFramesPerWindow)
        let correction = max(-limit, min(limit, Double(correctionsInWindow)))
        framesPerWindow = max(-limit, min(limit, framesPerWindow + correction / (correction > 0 ? 4 : 16)))
        correctionsInWindow = 0
    }

    /// The slip due with a write of `frames`: +1, −1 or 0.
    mutating func slip(forWriteOf frames: Int, windowFrames: Int) -> Int {
        owed += framesPerWindow * Double(frames) / Double(windowFrames)
        var slip = owed >= 1 ? 1 : owed <= -1 ? -1 : 0
        owed -= Double(slip)
        framesSinceScheduledSlip += frames
        if excess > 0 && slip >= 0 && mayScheduleSlip() {
            excess -= 1
            slip -= 1
        }
        return slip
    }

    /// Whether a frame may be slipped on a schedule with this write (at most one in
    /// `framesPerExcessSlip`, counted by `slip(forWriteOf:windowFrames:)`); if so, it is.
    mutating func mayScheduleSlip() -> Bool {
        guard framesSinceScheduledSlip >= Self.framesPerExcessSlip else { return false }
        framesSinceScheduledSlip = 0
        return true
    }
}

