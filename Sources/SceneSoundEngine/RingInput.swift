import SceneSoundDSP
import SceneSoundPlatform
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A stream's audio as the render thread sees it: frames from an AudioRing, filled by the
/// server's event loop. A stream never ends by itself (the client may always send more); the
/// server closes it. Counts the frames it was short of while the client was behind, and meters
/// the level of what it read (for status).
public final class RingInput: SourceInput, @unchecked Sendable {
    public let ring: AudioRing
    private let starvedFrames = Atomic<Int>(0)
    /// Set by the server while the stream has no data to come (drained, waiting): running dry
    /// then is not starvation.
    private let idle = Atomic<Bool>(true)
    /// The mean square of what was read, smoothed over `levelTimeConstantFrames` (render
    /// thread only), and its bits published for readers on other threads.
    @exclusivity(unchecked) private var meanSquare = 0.0
    @exclusivity(unchecked) private var blocksSinceMetered = 0
    /// The smoothing's weight for a metered read of `frames`.
    @exclusivity(unchecked) private var meterWeight = (frames: 0, weight: 0.0)
    static let meteredBlockInterval = 4
    private let publishedMeanSquareBits = Atomic<UInt64>(0)
    /// A quarter second at 48 kHz: long enough to read steadily, short enough to follow.
    public static let levelTimeConstantFrames = 12_000.0

    /// Whether the stream's start is past (render thread only): at once unless
    /// `holdsStartForWholeBlock`.
    @exclusivity(unchecked) private var startDecided: Bool

    /// `holdsStartForWholeBlock` (a captured app's feed, which arrives a graph cycle at a time):
    /// a first read that finds less than the block it asks for reads nothing, once, so that the
    /// stream starts a block later and whole, rather than at once with a hole after its first
    /// cycle. The graph may run at a smaller quantum than the engine's block (on PipeWire 1.4 an
    /// app asking for 10 ms brings it to 128 frames against 256): the block rendered in the app's
    /// first cycle then holds only that cycle's frames, and the next block's frames come after.
    ///
    /// `concealsDrySpells` (a captured app's feed, whose audio can come late through no fault of
    /// the app): a read that finds less than it asks for, once the stream has started and while
    /// it is not idle, is filled with a continuation of what it last played (`DrySpellConcealer`)
    /// rather than silence, and counted as starved all the same.
    public init(ring: AudioRing, holdsStartForWholeBlock: Bool = false, concealsDrySpells: Bool = false) {
        self.ring = ring
        startDecided = !holdsStartForWholeBlock
        concealer = concealsDrySpells ? DrySpellConcealer(channelCount: ring.channelCount) : nil
    }
    private let concealer: DrySpellConcealer?

    /// RMS of the audio read over about the last `levelTimeConstantFrames`, in dB re full
    /// scale (−infinity for silence). Frames missing while starved or idle count as silence.
    public var recentLevelDecibels: Double {
        10 * log10(Double(bitPattern: publishedMeanSquareBits.load(ordering: .relaxed)))
    }

    public var starvedFrameCount: Int { starvedFrames.load(ordering: .relaxed) }
    /// Frames passed over by trims so far.
    public var trimmedFrameCount: Int { trimmedFrames.load(ordering: .relaxed) }
    private let trimmedFrames = Atomic<Int>(0)
    private let trimRequestedFrames = Atomic<Int>(0)

    /// The writer's side: asks the next read to take about `frames` out of the queue (grown
    /// long after a late burst or a late render), keeping at least what that read needs. A
    /// concealing input cuts where the audio continues in phase, through a crossfade
    /// (`DrySpellConcealer.framesToTrim`); others pass over exactly that much.
    public func trim(_ frames: Int) {
        if frames > 0 { trimRequestedFrames.add(frames, ordering: .relaxed) }
    }

    /// The output's side: it is about to take `frames` more than it used to at once (its
    /// buffer grown after an underflow, rendered ahead). A concealing input gives them as a
    /// stretch — its continuation held at its level, whole reads of it, then taken over in phase —
    /// instead of out of its queue, which would run dry by them: the queue keeps its margin, and
    /// the stream is later by what the output added. Asked while a dry spell is concealed
    /// (the output's underflow, the capture's delivery late with it), the continuation goes on
    /// at the level it has come to. Dropped before the stream has started, while it is idle,
    /// and by other inputs.
    public func stretch(_ frames: Int) {
        if frames > 0, concealer != nil { stretchRequestedFrames.add(frames, ordering: .relaxed) }
    }
    private let stretchRequestedFrames = Atomic<Int>(0)
    @exclusivity(unchecked) private var stretchFramesLeft = 0
    /// Frames given as stretches so far.
    public var stretchedFrameCount: Int { stretchedFrames.load(ordering: .relaxed) }
    private let stretchedFrames = Atomic<Int>(0)

    /// A run of reads that found the ring short while the stream was not idle: when its first
    /// read was (CLOCK_MONOTONIC) and how many frames it lacked in all.
    public struct DrySpell: Sendable, Equatable {
        public var startedMonotonicSeconds: Double
        public var frames: Int
    }
    /// The latest dry spells that have ended, newest first (at most `recordedDrySpells`).
    public var recentDrySpells: [DrySpell] {
        drySpells.newestFirst.map { DrySpell(startedMonotonicSeconds: Double($0 >> 24) / 1000, frames: Int($0 & 0xFF_FFFF)) }
    }
    public static let recordedDrySpells = LatestRecords.capacity
    /// Each spell packed in one word, written by the render thread alone: its start in
    /// milliseconds (40 bits) and its frames (24 bits, up to 5 minutes at 48 kHz).
    private let drySpells = LatestRecords()
    @exclusivity(unchecked) private var spellFrames = 0
    @exclusivity(unchecked) private var spellStartedMilliseconds: UInt64 = 0

    /// Counts a read that came `got` frames of `frames` as starved when short while the stream
    /// is not idle, and keeps the record of dry spells; returns whether it was dry. Render
    /// thread: no allocation, no lock (the clock is read once per spell).
    @discardableResult @inline(never)
    private func noteRead(got: Int, of frames: Int) -> Bool {
        let dry = got < frames && !idle.load(ordering: .relaxed)
        if dry {
            starvedFrames.add(frames - got, ordering: .relaxed)
            if spellFrames == 0 { spellStartedMilliseconds = UInt64(MonotonicClock.nowNanoseconds() / 1_000_000) }
            spellFrames += frames - got
        } else if spellFrames > 0 {
            drySpells.record((spellStartedMilliseconds & 0xFF_FFFF_FFFF) << 24 | UInt64(min(spellFrames, 0xFF_FFFF)))
            spellFrames = 0
        }
        return dry
    }
    public func setIdle(_ value: Bool) { idle.store(value, ordering: .relaxed) }

    public var isFinished: Bool { false }

    public func read(into channels: UnsafeMutablePointer<UnsafeMutablePointer<Float>>, frames: Int) -> Int {
        withUnsafeTemporaryAllocation(of: Float.self, capacity: ring.channelCount) { sums in
            read(into: channels, channelCount: ring.channelCount, frames: frames, sumsOfSquares: sums.baseAddress!)
        }
    }

    /// Measures what it reads in the same pass (the render's level and this meter's).
    public func read(into channels: UnsafeMutablePointer<UnsafeMutablePointer<Float>>, channelCount: Int, frames: Int,
                     sumsOfSquares: UnsafeMutablePointer<Float>) -> Int {
        precondition(channelCount == ring.channelCount)
        if !startDecided && holdsStart(frames: frames, sumsOfSquares: sumsOfSquares) { return 0 }
        if trimRequestedFrames.load(ordering: .relaxed) > 0 { trimQueue(keeping: frames) }
        if let concealer {
            return readConcealing(concealer, into: channels, channelCount: channelCount, frames: frames,
                                  sumsOfSquares: sumsOfSquares)
        }
        // A client's stream, every block of every source: as little as the read needs (at 1024
        // sources this runs 190 000 times a second).
        let got = ring.read(into: channels, frames: frames, sumsOfSquares: sumsOfSquares)
        if got < frames || spellFrames > 0 { noteRead(got: got, of: frames) }
        meter(sumsOfSquares, frames: frames)
        return got
    }

    /// Until the stream's start is decided: whether this read holds it back (less than a block
    /// there, the stream not idle), reading nothing.
    @inline(never)
    private func holdsStart(frames: Int, sumsOfSquares: UnsafeMutablePointer<Float>) -> Bool {
        startDecided = true
        let available = ring.availableFrames
        if available > 0 && available < frames && !idle.load(ordering: .relaxed) {
            sumsOfSquares.update(repeating: 0, count: ring.channelCount)
            meter(sumsOfSquares, frames: frames)
            return true
        }
        if available == 0 { startDecided = false }  // nothing yet: the start is still to come
        return false
    }

    /// A captured app's read: a stretch when one is due, the ring's audio coming back after a
    /// concealed spell taken over in phase, a dry read concealed.
    @inline(never)
    private func readConcealing(_ concealer: DrySpellConcealer, into channels: UnsafeMutablePointer<UnsafeMutablePointer<Float>>,
                                channelCount: Int, frames: Int, sumsOfSquares: UnsafeMutablePointer<Float>) -> Int {
        if stretchRequestedFrames.load(ordering: .relaxed) > 0 || stretchFramesLeft > 0,
           stretchBlock(concealer, into: channels, channelCount: channelCount, frames: frames, sumsOfSquares: sumsOfSquares) {
            return frames
        }
        if concealer.isConcealing, case let available = ring.availableFrames, available > 0 {
            ring.skip(concealer.framesToPassOver(available: available) { ring.peek(frame: $0, channel: $1) })
        }
        let got = ring.read(into: channels, frames: frames, sumsOfSquares: sumsOfSquares)
        let dry = noteRead(got: got, of: frames)
        concealer.received(channels, offset: 0, frames: got)
        if dry && startDecided {
            concealer.conceal(channels, offset: got, frames: frames - got, sumsOfSquares: sumsOfSquares)
            meter(sumsOfSquares, frames: frames)
            return frames
        }
        meter(sumsOfSquares, frames: frames)
        return got
    }

    /// One read of a stretch, if one is due: the whole block, rounded up (a stretch of a few
    /// frames more than asked stays in the queue, which the feed takes away slowly).
    private func stretchBlock(_ concealer: DrySpellConcealer, into channels: UnsafeMutablePointer<UnsafeMutablePointer<Float>>,
                              channelCount: Int, frames: Int, sumsOfSquares: UnsafeMutablePointer<Float>) -> Bool {
        let requested = stretchRequestedFrames.exchange(0, ordering: .relaxed)
        if requested > 0, startDecided, !idle.load(ordering: .relaxed) {
            stretchFramesLeft = min(DrySpellConcealer.longestStretchFrames, stretchFramesLeft + requested)
        }
        guard stretchFramesLeft > 0 else { return false }
        sumsOfSquares.update(repeating: 0, count: channelCount)
        concealer.conceal(channels, offset: 0, frames: frames, sumsOfSquares: sumsOfSquares, holdingLevel: true)
        stretchFramesLeft = max(0, stretchFramesLeft - frames)
        stretchedFrames.add(frames, ordering: .relaxed)
        meter(sumsOfSquares, frames: frames)
        return true
    }

    /// A request that comes while a spell is concealed is dropped: the audio's coming back
    /// passes over in phase already, and the writer asks again if the queue stays long.
    @inline(never)
    private func trimQueue(keeping frames: Int) {
        let requested = trimRequestedFrames.exchange(0, ordering: .relaxed)
        let available = ring.availableFrames
        let excess = min(requested, available - frames)
        guard excess > 0, concealer?.isConcealing != true else { return }
        let passed = concealer?.framesToTrim(excess, available: available) { ring.peek(frame: $0, channel: $1) } ?? excess
        ring.skip(passed)
        trimmedFrames.add(passed, ordering: .relaxed)
    }

    /// Every `meteredBlockInterval`-th block is measured and stands for the blocks between:
    /// a level over a quarter second needs no more, and at 255 sources a multiply-add for every
    /// sample of every block would cost the render thread several per cent. No allocation, no lock.
    private func meter(_ sumsOfSquares: UnsafePointer<Float>, frames: Int) {
        blocksSinceMetered += 1
        guard frames > 0, blocksSinceMetered >= Self.meteredBlockInterval else { return }
        blocksSinceMetered = 0
        var sum: Float = 0
        for channel in 0..<ring.channelCount { sum += sumsOfSquares[channel] }
        let blockMeanSquare = Double(sum) / Double(frames * ring.channelCount)
        if frames != meterWeight.frames {  // the engine's block: computed once
            meterWeight = (frames, 1 - exp(-Double(frames * Self.meteredBlockInterval) / Self.levelTimeConstantFrames))
        }
        meanSquare += meterWeight.weight * (blockMeanSquare - meanSquare)
        if meanSquare < 1e-30 { meanSquare = 0 }  // no denormals creeping towards zero
        publishedMeanSquareBits.store(meanSquare.bitPattern, ordering: .relaxed)
    }
}
