import Foundation
import Testing
@testable import SceneSoundServer

/// A captured stream's queue (`CapturedAppStreams.Feed`) against a late delivery: fragments of
/// 256 frames arrive once per cycle and the render takes 256 after each; now and then one
/// arrives a cycle late (as PipeWire's graph sometimes delivers) or several come tens of
/// milliseconds late (PulseAudio's main thread on a busy machine), heard as a gap once.
@Suite struct CapturedFeedTests {
    static let fragmentFrames = 256

    /// Writes and reads cycle by cycle; `lateCycles` are those whose fragment comes only with
    /// the next one, after the render has read; `pausedCycles` those with no fragment at all
    /// (a corked app is recorded as nothing).
    static func run(_ feed: CapturedAppStreams.Feed, cycles: Int, lateCycles: Set<Int> = [], pausedCycles: Set<Int> = []) {
        let fragment = [Float](repeating: 0.25, count: 2 * fragmentFrames)
        var left = [Float](repeating: 0, count: fragmentFrames), right = left
        var pendingFragments = 0
        for cycle in 0 ..< cycles {
            if !pausedCycles.contains(cycle) { pendingFragments += 1 }
            if !lateCycles.contains(cycle) {
                for _ in 0 ..< pendingFragments { fragment.withUnsafeBufferPointer { feed.write(interleaved: $0) } }
                pendingFragments = 0
            }
            left.withUnsafeMutableBufferPointer { l in
                right.withUnsafeMutableBufferPointer { r in
                    var channels = [l.baseAddress!, r.baseAddress!]
                    _ = feed.input.read(into: &channels, frames: fragmentFrames)
                }
            }
        }
    }

    static func feed() -> CapturedAppStreams.Feed {
        CapturedAppStreams.Feed(capacityFrames: 24_000, marginFrames: 192, maximumMarginFrames: 2_400,
                                windowFrames: 24_000, maximumQueuedFrames: 24_000)
    }

    @Test func aLateDeliveryIsHeardOnceNotEachTime() {
        let feed = Self.feed()
        // Past the first second (no trimming there), then late cycles a few windows apart:
        // the queue would be trimmed back to its first margin between them.
        let late: Set<Int> = [400, 600, 800, 1000]
        Self.run(feed, cycles: 1200, lateCycles: late)
        #expect(feed.input.starvedFrameCount == Self.fragmentFrames,
                "\(feed.input.starvedFrameCount) frames starved; one late fragment is \(Self.fragmentFrames)")
    }

    /// Twelve cycles (64 ms) late at once, again and again, beyond the margin's 50 ms limit:
    /// the margin grows to its limit after the first (a late burst is no pause), and each later
    /// one is heard only for what exceeds it.
    @Test func aLongLateDeliveryIsHeardInFullOnlyOnce() {
        let feed = Self.feed()
        let burst = 12 * Self.fragmentFrames
        Self.run(feed, cycles: 1200, lateCycles: Set([400, 600, 800, 1000].flatMap { $0 ..< $0 + 12 }))
        let beyondLimit = burst - 2_400
        #expect(feed.input.starvedFrameCount <= burst + 3 * beyondLimit,
                "\(feed.input.starvedFrameCount) frames starved; the first late burst is \(burst), each later one \(beyondLimit) beyond the limit")
    }

    /// Two cycles late, and later three: lateness has a tail. The margin grown by twice what
    /// the first spell missed holds the longer one; grown by just that, it ran dry again.
    @Test func aLongerLatenessAfterTheFirstIsNotHeard() {
        let feed = Self.feed()
        Self.run(feed, cycles: 1000, lateCycles: [400, 401])
        let starvedByTheFirst = feed.input.starvedFrameCount
        #expect(starvedByTheFirst > 0)
        Self.run(feed, cycles: 300, lateCycles: [100, 101, 102])
        #expect(feed.input.starvedFrameCount == starvedByTheFirst,
                "the first spell starved \(starvedByTheFirst) frames, the longer one \(feed.input.starvedFrameCount - starvedByTheFirst)")
    }

    /// After a late burst the margin grows by slipping frames in, no faster than one in 480:
    /// one a write (150 frames from a monitor) flattened a 3.2 kHz tone by 20 Hz for half a
    /// second, which a 10 ms reading of it takes for gaps (CaptureScaleTests, a fresh-clone run).
    @Test func marginIsSlippedInAtMostOneFrameIn480() {
        let feed = Self.feed()
        let fragment = [Float](repeating: 0.25, count: 2 * Self.fragmentFrames)
        var left = [Float](repeating: 0, count: Self.fragmentFrames), right = left
        var pending = 0, framesSinceSlip = Int.max / 2, closest = Int.max, slipped = 0
        for cycle in 0 ..< 1_400 {
            pending += 1
            if cycle != 400 && cycle != 401 {  // two cycles late: the margin grows after them
                for _ in 0 ..< pending {
                    fragment.withUnsafeBufferPointer { feed.write(interleaved: $0) }
                    framesSinceSlip += Self.fragmentFrames
                    if feed.slippedFrameCount > slipped {
                        slipped = feed.slippedFrameCount
                        closest = min(closest, framesSinceSlip)
                        framesSinceSlip = 0
                    }
                }
                pending = 0
            }
            left.withUnsafeMutableBufferPointer { l in
                right.withUnsafeMutableBufferPointer { r in
                    var channels = [l.baseAddress!, r.baseAddress!]
                    _ = feed.input.read(into: &channels, frames: Self.fragmentFrames)
                }
            }
        }
        #expect(slipped > 100, "\(slipped) frames slipped in")
        #expect(closest >= 480, "two frames slipped in \(closest) frames apart")
    }

    /// Frames over the margin are taken away a frame at a time, and no faster than one in 480
    /// however short the writes: from writes of 150 frames, a frame from each sped the stream up
    /// by 0.65 % (a 3 kHz tone 20 Hz sharp, read as a gap over 10 ms).
    @Test func excessIsTakenAwayAtMostOneFrameIn480() {
        var clock = ClockFollower(maximumFramesPerWindow: 24)
        clock.takeAway(12)
        var taken = 0, framesSinceTaken = Int.max / 2, closest = Int.max
        for _ in 0 ..< 100 {
            framesSinceTaken += 150
            if clock.slip(forWriteOf: 150, windowFrames: 24_000) == -1 {
                taken += 1
                closest = min(closest, framesSinceTaken)
                framesSinceTaken = 0
            }
        }
        #expect(taken == 12, "\(taken) of 12 frames taken away")
        #expect(closest >= 480, "two frames taken \(closest) frames apart")
    }

    @Test func aPauseDoesNotGrowTheQueue() {
        let feed = Self.feed()
        // 50 cycles (267 ms) with nothing, and 5 (27 ms, within the margin's limit) later,
        // nothing coming late after either: a corked stream, not lateness.
        Self.run(feed, cycles: 1000, pausedCycles: Set(400 ..< 450).union(600 ..< 605))
        #expect(feed.input.starvedFrameCount == 55 * Self.fragmentFrames)
        // Only the margin is kept: trimmed back to 4 ms before each fragment.
        #expect(feed.ring.availableFrames <= 192 + Self.fragmentFrames, "\(feed.ring.availableFrames) frames queued")
    }

    /// A tone in fragments of 240 frames (PulseAudio's recordings) read in blocks of 256 by an
    /// output whose clock runs `partsPerMillion` faster (or slower, negative) than the
    /// recordings'. Returns the left channel of the last `heardSeconds` read, and the frames
    /// starved and dropped in them.
    static func runApart(_ feed: CapturedAppStreams.Feed, seconds: Double, partsPerMillion: Double, heardSeconds: Double,
                         hertz: Double = 1000) -> (heard: [Float], starved: Int, dropped: Int) {
        let fragmentFrames = 240, blockFrames = 256, rate = 48_000.0
        let fragments = Int(seconds * rate) / fragmentFrames
        let heardFrom = Int((seconds - heardSeconds) * rate)
        var fragment = [Float](repeating: 0, count: 2 * fragmentFrames)
        var left = [Float](repeating: 0, count: blockFrames), right = left
        var heard: [Float] = []
        var written = 0, read = 0, owed = 0.0
        var starvedBefore = 0, droppedBefore = 0
        for _ in 0 ..< fragments {
            for n in 0 ..< fragmentFrames {
                let phase: Double = 2 * Double.pi * hertz * Double(written + n) / rate
                let value = Float(0.5 * sin(phase))
                fragment[2 * n] = value
                fragment[2 * n + 1] = value
            }
            fragment.withUnsafeBufferPointer { feed.write(interleaved: $0) }
            written += fragmentFrames
            owed += Double(fragmentFrames) * (1 + partsPerMillion / 1_000_000)
            while owed >= Double(blockFrames) {
                owed -= Double(blockFrames)
                if read < heardFrom && read + blockFrames >= heardFrom {
                    starvedBefore = feed.input.starvedFrameCount
                    droppedBefore = feed.droppedFrameCount
                }
                left.withUnsafeMutableBufferPointer { l in
                    right.withUnsafeMutableBufferPointer { r in
                        var channels = [l.baseAddress!, r.baseAddress!]
                        _ = feed.input.read(into: &channels, frames: blockFrames)
                    }
                }
                if read >= heardFrom { heard += left }
                read += blockFrames
            }
        }
        return (heard, feed.input.starvedFrameCount - starvedBefore, feed.droppedFrameCount - droppedBefore)
    }

    /// The largest step from one sample to the next: a tone's own is 2π·f/rate of its
    /// amplitude; a frame missing or skipped is a jump well beyond it.
    static func largestStep(_ samples: [Float]) -> Float {
        zip(samples.dropFirst(), samples).map { abs($0 - $1) }.max() ?? 0
    }

    /// The output's clock 200 ppm fast, then 200 ppm slow (both seen between a null sink and
    /// the recordings under load; a sound card's crystal may be 100 off): after the first
    /// minute the queue neither runs dry nor trims, and the tone stays smooth, its frames
    /// slipped one at a time.
    @Test(arguments: [200.0, -200.0])
    func aClockRunningApartIsFollowedWithoutJumps(partsPerMillion: Double) {
        let feed = Self.feed()
        let (heard, starved, dropped) = Self.runApart(feed, seconds: 120, partsPerMillion: partsPerMillion, heardSeconds: 50)
        let toneStep = Float(0.5 * 2 * Double.pi * 1000 / 48_000)
        let step = Self.largestStep(heard)
        print("\(partsPerMillion) ppm: in the last 50 s \(starved) frames starved, \(dropped) dropped, largest step \(step) (the tone's \(toneStep)); \(feed.slippedFrameCount) frames slipped in all")
        #expect(starved == 0 && dropped == 0)
        #expect(step < 1.1 * toneStep)
        // What the clocks part by over two minutes, within what the first minute took to learn.
        let parted = partsPerMillion / 1_000_000 * 120 * 48_000
        #expect(abs(Double(feed.slippedFrameCount) - parted) < abs(parted) / 2, "\(feed.slippedFrameCount) slipped, the clocks parted by \(parted)")
    }

    /// The PipeWire node's feeds: written and read in the same cycle, one clock. Nothing is
    /// slipped, and the stream comes out bit-exact.
    @Test func aFeedOnTheOutputsOwnClockIsBitExact() {
        let feed = Self.feed()
        var phase = 0
        var left = [Float](repeating: 0, count: Self.fragmentFrames), right = left
        var exact = true
        for _ in 0 ..< 6000 {
            let fragment: [Float] = (0 ..< 2 * Self.fragmentFrames).map { index -> Float in
                let frame: Int = phase + index / 2
                return Float(sin(Double(frame) * 0.05))
            }
            fragment.withUnsafeBufferPointer { feed.write(interleaved: $0) }
            left.withUnsafeMutableBufferPointer { l in
                right.withUnsafeMutableBufferPointer { r in
                    var channels = [l.baseAddress!, r.baseAddress!]
                    _ = feed.input.read(into: &channels, frames: Self.fragmentFrames)
                }
            }
            if phase > 0 && left != stride(from: 0, to: fragment.count, by: 2).map({ fragment[$0] }) { exact = false }
            phase += Self.fragmentFrames
        }
        #expect(exact)
        #expect(feed.slippedFrameCount == 0)
    }
}
