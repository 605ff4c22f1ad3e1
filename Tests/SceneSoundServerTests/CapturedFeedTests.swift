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

    @Test func aPauseDoesNotGrowTheQueue() {
        let feed = Self.feed()
        // 50 cycles (267 ms) with nothing, and 5 (27 ms, within the margin's limit) later,
        // nothing coming late after either: a corked stream, not lateness.
        Self.run(feed, cycles: 1000, pausedCycles: Set(400 ..< 450).union(600 ..< 605))
        #expect(feed.input.starvedFrameCount == 55 * Self.fragmentFrames)
        // Only the margin is kept: trimmed back to 4 ms before each fragment.
        #expect(feed.ring.availableFrames <= 192 + Self.fragmentFrames, "\(feed.ring.availableFrames) frames queued")
    }
}
