#if canImport(Glibc)
import Glibc
#endif

/// Bridges a short dry spell of a stream whose audio comes late (a captured app's delivery
/// held up on a busy machine) with a continuation of what it last played, as a jitter buffer
/// conceals a late packet, instead of a hole of silence between two clicks. The continuation
/// repeats the stream's last period — the lag at which its last 64 frames best match the frames
/// before them, 32 to 768 frames back (1.5 kHz to 62.5 Hz) — and fades out over 20 ms from its
/// first frame, so a few milliseconds missing are bridged at nearly full level and a stream that
/// really stopped leaves only a short decaying tail (a jitter buffer's expansion fades over some
/// tens of milliseconds; a busy machine holds a capture's delivery up by 5–20 ms). When the
/// audio comes again it takes over through a 64-frame crossfade, from the frame (within a period
/// of where it left off) at which it continues the continuation in phase (`framesToPassOver`);
/// the stream is then late by what was missing, less what was passed over.
///
/// A queue grown long is trimmed the same way (`framesToTrim`): the frames passed over end where
/// the audio after them continues the audio before them in phase, and it takes over through the
/// same crossfade — whole periods cut out, as a jitter buffer's acceleration does, not a jump in
/// the waveform (a click; a tone read over 10 ms cancels across it).
///
/// A stretch (`conceal(… holdingLevel: true)`) is the other way round, a jitter buffer's
/// expansion asked for ahead, for when the output must be given more than has come (its buffer
/// grown after an underflow, rendered ahead at once): the continuation held at its level (full,
/// unless a spell is already under way) for as long as asked, then taken over as after a spell.
///
/// Render thread only: the history and every buffer are allocated up front; no lock, no log.
public final class DrySpellConcealer {
    public let channelCount: Int
    /// Frames of history kept per channel (a power of two).
    static let historyFrames = 8192
    static let matchFrames = 64
    static let shortestPeriodFrames = 32
    static let longestPeriodFrames = 768
    public static let fadeFrames = 960
    /// The longest stretch (frames into a spell): the continuation written into the history
    /// while it sounds, held and then fading, must not reach the period it repeats.
    public static let longestStretchFrames = historyFrames - longestPeriodFrames - fadeFrames
    static let crossfadeFrames = 64

    private let history: UnsafeMutablePointer<Float>
    /// Frames remembered so far (the next goes at `written & (historyFrames - 1)`).
    private var written = 0
    /// The spell under way: its period, the continuation's position in it, frames made.
    private var period = 0
    private var phase = 0
    private var concealedFrames = 0
    /// A stretch holds the continuation's level (full at a spell's start, else where the fade
    /// had come to) until the spell's frame `heldUntil`; the fade goes on from there.
    private var heldUntil = 0
    private var heldLevel: Float = 1
    private var spellEnd = 0
    /// The next frames received take over from `takenOver` (the continuation after a spell,
    /// the frames passed over after a trim), at `takenOverLevel`.
    private var takeOverDue = false
    private let takenOver: UnsafeMutablePointer<Float>
    private var takenOverLevel: Float = 1
    public var isConcealing: Bool { concealedFrames > 0 }

    public init(channelCount: Int) {
        self.channelCount = channelCount
        history = .allocate(capacity: channelCount * Self.historyFrames)
        history.initialize(repeating: 0, count: channelCount * Self.historyFrames)
        takenOver = .allocate(capacity: channelCount * Self.crossfadeFrames)
        takenOver.initialize(repeating: 0, count: channelCount * Self.crossfadeFrames)
    }

    deinit {
        history.deallocate()
        takenOver.deallocate()
    }

    @inline(__always) private func historySample(_ channel: Int, _ index: Int) -> Float {
        history[channel * Self.historyFrames + (index & (Self.historyFrames - 1))]
    }

    /// After a read: `frames` real frames at `offset` in `channels`. After a spell or a trim,
    /// what would have been heard fades into them first (they are changed in place).
    public func received(_ channels: UnsafeMutablePointer<UnsafeMutablePointer<Float>>, offset: Int, frames: Int) {
        guard frames > 0 else { return }
        if takeOverDue {
            if concealedFrames > 0 { holdContinuation() }
            let overlap = min(frames, Self.crossfadeFrames)
            for n in 0..<overlap {
                // Raised cosine from what would have been heard to the stream.
                let w = 0.5 - 0.5 * cosf(Float.pi * Float(n + 1) / Float(overlap + 1))
                for c in 0..<channelCount {
                    let real = channels[c] + offset + n
                    real.pointee = real.pointee * w + takenOver[c * Self.crossfadeFrames + n] * takenOverLevel * (1 - w)
                }
            }
            concealedFrames = 0
            takeOverDue = false
        }
        remember(channels, offset: offset, frames: frames)
    }

    /// When the audio comes again after a spell: how many of its first frames to pass over so
    /// that it takes up the continuation in phase — the offset, less than a period, at which its
    /// next `crossfadeFrames` best match the continuation's. Without it the stream would come back
    /// late by all that was missing, out of phase with the continuation (a tone's level, read over
    /// 10 ms, cancels across the seam). `available`: frames waiting; `sample(frame, channel)`.
    public func framesToPassOver(available: Int, sample: (Int, Int) -> Float) -> Int {
        guard concealedFrames > 0, period > 0 else { return 0 }
        let latest = min(period, concealedFrames + 1, available - Self.crossfadeFrames + 1)
        guard latest > 1 else { return 0 }
        holdContinuation()
        return bestTakeOver(in: 0..<latest, sample: sample)
    }

    /// Trimming the queue by about `excess` frames (not while a spell is concealed): how many of
    /// the `available` waiting frames to pass over — `excess` or up to a period fewer, where the
    /// audio after them continues the audio before them in phase. The next frames received take
    /// over from those passed over through the crossfade (a period cut out, as a time-scale
    /// modification's overlap-add does). A silent history is trimmed as asked; a history too
    /// short to find a period in yet (a stream's first 17 ms, when a backlog waits at its
    /// start), or less than a period asked, is not trimmed: the writer asks again while the
    /// queue stays long.
    public func framesToTrim(_ excess: Int, available: Int, sample: (Int, Int) -> Float) -> Int {
        let most = min(excess, available - Self.crossfadeFrames)
        guard most > 0, concealedFrames == 0, written >= Self.longestPeriodFrames + Self.matchFrames else { return 0 }
        for c in 0..<channelCount {
            for n in 0..<Self.crossfadeFrames { takenOver[c * Self.crossfadeFrames + n] = sample(n, c) }
        }
        takenOverLevel = 1
        takeOverDue = true
        guard case let found = bestPeriod(shortest: true), found > 0 else { return most }
        // Less than a period asked (a low tone): nothing can be cut in phase yet.
        guard found <= most else {
            takeOverDue = false
            return 0
        }
        return bestTakeOver(in: max(0, most - found + 1)...most, sample: sample)
    }

    /// The continuation from its current phase, to take over from (at its current level).
    private func holdContinuation() {
        takenOverLevel = period > 0 ? continuationLevel(concealedFrames) : 0
        for n in 0..<Self.crossfadeFrames {
            let index = period > 0 ? spellEnd - period + (phase + n) % period : 0
            for c in 0..<channelCount { takenOver[c * Self.crossfadeFrames + n] = historySample(c, index) }
        }
    }

    /// The offset among `offsets` at which the waiting audio's next `crossfadeFrames` best
    /// match what it takes over from (normalised correlation).
    private func bestTakeOver<Offsets: Sequence<Int>>(in offsets: Offsets, sample: (Int, Int) -> Float) -> Int {
        let m = Self.crossfadeFrames
        var best = 0
        var bestScore = -Float.greatestFiniteMagnitude
        for offset in offsets {
            var product: Float = 0, energy: Float = 0
            for n in 0..<m {
                for c in 0..<channelCount {
                    let real = sample(offset + n, c)
                    product += takenOver[c * m + n] * real
                    energy += real * real
                }
            }
            let score = energy > 1e-12 ? product / energy.squareRoot() : 0
            if score > bestScore {
                bestScore = score
                best = offset
            }
        }
        return best
    }

    /// A dry spell: `frames` at `offset` in `channels` filled with the continuation, each
    /// channel's sum of squares over them added to `sumsOfSquares`. `holdingLevel`: a stretch,
    /// these frames at the level the continuation has (full, unless a spell was already being
    /// concealed), up to `longestStretchFrames` into the spell; a spell going on after them
    /// fades from there.
    public func conceal(_ channels: UnsafeMutablePointer<UnsafeMutablePointer<Float>>, offset: Int, frames: Int,
                        sumsOfSquares: UnsafeMutablePointer<Float>, holdingLevel: Bool = false) {
        guard frames > 0 else { return }
        if concealedFrames == 0 {
            takeOverDue = true
            spellEnd = written
            period = written >= Self.longestPeriodFrames + Self.matchFrames ? bestPeriod() : 0
            phase = 0
            heldUntil = 0
            heldLevel = 1
        }
        if holdingLevel {
            heldLevel = continuationLevel(concealedFrames)
            heldUntil = min(Self.longestStretchFrames, concealedFrames + frames)
        }
        for n in 0..<frames {
            let level = period > 0 ? continuationLevel(concealedFrames) : 0
            let index = spellEnd - period + phase
            for c in 0..<channelCount {
                let value = level > 0 ? historySample(c, index) * level : 0
                channels[c][offset + n] = value
                sumsOfSquares[c] += value * value
            }
            // The continuation (at full level) goes into the history while it sounds: the
            // audio taken up after the spell continues it in phase, so the history stays one
            // waveform and the next spell's period is found in it (without, a spell's seam in
            // the history put the next continuation's loop out of phase with itself). The
            // period it repeats lies behind `spellEnd`, out of reach while the stretch and the fade last.
            if level > 0 {
                for c in 0..<channelCount {
                    history[c * Self.historyFrames + (written & (Self.historyFrames - 1))] = historySample(c, index)
                }
                written += 1
            }
            if period > 0 { phase = (phase + 1) % period }
            concealedFrames += 1
        }
    }

    /// 1 at a spell's first frame, falling linearly to 0 over `fadeFrames`; held through a stretch.
    @inline(__always) private func continuationLevel(_ frame: Int) -> Float {
        frame < heldUntil ? heldLevel : max(0, heldLevel - Float(frame - heldUntil) / Float(Self.fadeFrames))
    }

    private func remember(_ channels: UnsafeMutablePointer<UnsafeMutablePointer<Float>>, offset: Int, frames: Int) {
        for c in 0..<channelCount {
            let row = history + c * Self.historyFrames, input = channels[c] + offset
            for n in 0..<frames { row[(written + n) & (Self.historyFrames - 1)] = input[n] }
        }
        written += frames
    }

    /// The lag whose frames best continue the last `matchFrames` (normalised correlation over
    /// every channel); 0 when the history is silent. `shortest`: the shortest lag at a peak
    /// within 0.9 of the best — the period itself, not a multiple of it that repeats a little
    /// better (a trim must cut no more than it was asked).
    private func bestPeriod(shortest: Bool = false) -> Int {
        var best = 0
        var bestScore: Float = 0
        for lag in Self.shortestPeriodFrames...Self.longestPeriodFrames {
            let score = periodScore(lag)
            if score > bestScore {
                bestScore = score
                best = lag
            }
        }
        guard shortest, best > 0 else { return best }
        var lag = Self.shortestPeriodFrames
        while periodScore(lag) < 0.9 * bestScore { lag += 1 }
        while lag < Self.longestPeriodFrames, periodScore(lag + 1) > periodScore(lag) { lag += 1 }
        return lag
    }

    private func periodScore(_ lag: Int) -> Float {
        let end = written, m = Self.matchFrames
        var product: Float = 0, energy: Float = 0
        for c in 0..<channelCount {
            for n in (end - m)..<end {
                let earlier = historySample(c, n - lag)
                product += historySample(c, n) * earlier
                energy += earlier * earlier
            }
        }
        return energy > 1e-12 ? product / energy.squareRoot() : 0
    }
}
