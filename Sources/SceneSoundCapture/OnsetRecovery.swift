/// Recovers the first milliseconds of a new stream, which its own recording misses: the
/// stream starts on the capture sink, but its recording (a direct monitor) can only be asked
/// for once the server has told us about the stream, and the sink plays it meanwhile (on
/// PulseAudio a round trip or two, on PipeWire until the link is made: one graph cycle or
/// more). The capture sink's whole mix is recorded all along (the pacer), so those
/// milliseconds are in it. When the stream's own recording begins, its first sounding frames
/// are looked up, sample for sample, in the mix recorded since the stream appeared; where
/// they match, the mix before that point is the stream's missing onset, and is handed out
/// first. The mix equals the stream only while nothing else sounds on the sink; so once a
/// stream has been found in the mix, and its recording thereby placed on the mix's timeline,
/// its frames are taken out of the mix as they arrive (the mix, like the recordings, is taken
/// before the sink's volume). What remains is what the other streams played: a stream that
/// starts while placed ones sound (a notification over music) is found there as if it had
/// started alone. A stream whose start was not found (taken over while already playing, or
/// started over unplaced ones) is looked for in what remains now and then, by its latest
/// frames, and placed when found. Where an unplaced stream sounds (or one recorded another
/// way), a new one is heard from where its own recording began. A stream that ended before
/// its recording brought a sounding frame (a short sound, while a consumer slow to take it
/// held the capture's thread) is taken whole from the mix, when it sounded there alone.
///
/// Stereo only: the mix is the capture sink's FL and FR, where a stereo (or mono) stream's
/// channels arrive unchanged; a surround stream is handed on without it (`CaptureSession`).
///
/// A consumer in front of the real one; confined to the capture's mainloop thread.
final class OnsetRecovery: AppCaptureConsumer, @unchecked Sendable {
    private let consumer: AppCaptureConsumer
    /// The recent mix, interleaved stereo, and how many frames have been recorded in all.
    private var mix: [Float]
    private let historyFrames: Int
    private var mixEndFrame = 0
    /// Streams whose recording is held back until their onset is found or given up.
    private var pending: [UInt32: Pending] = [:]
    private let matchFrames = 32
    /// How long a stream's sound is held back while its frames are looked for in the mix,
    /// which arrives in step with it (the same render, or graph cycle): 50 ms.
    private let holdFrames: Int
    /// How long a silent start is waited through (a stream waiting for its prebuffer): 200 ms.
    private let silentStartFrames: Int
    /// Below this a frame counts as silent (about -80 dBFS).
    private let silence: Float = 1e-4
    private let tolerance: Float = 1e-4
    /// The capture sink's volume per channel (linear): its mix is recorded after it, a stream's
    /// own recording before it (both servers), so the mix is divided by it to compare. Zero
    /// (muted): the mix holds nothing to find.
    private var mixGain: (left: Float, right: Float) = (1, 1)
    /// Streams found in the mix, whose frames are taken out of it.
    private var placed: [UInt32: Placed] = [:]
    /// Streams neither pending nor placed: their frames while being looked for, and the mix
    /// frame at which they were last looked for in vain.
    private var unplaced: [UInt32: Unplaced] = [:]
    /// How often an unplaced stream is looked for: a quarter second of mix.
    private let placeEveryFrames: Int
    /// Streams that ended before their recording brought a sounding frame, their end told to
    /// the consumer once their sound is taken from the mix (`recoverEndedUnheard`).
    private var endedUnheard: [UInt32: EndedUnheard] = [:]

    private struct EndedUnheard {
        /// Where its sound can have begun in the mix (`Pending.searchFromFrame`), and how far the
        /// mix had come when it ended.
        var searchFromFrame: Int
        var endedAtMixFrame: Int
    }

    private struct Unplaced {
        var recent: [Float] = []
        var lookedForAtMixFrame: Int?
    }

    private struct Placed {
        /// The mix frame of `queued`'s first frame.
        var nextMixFrame: Int
        /// Its frames not yet taken out of the mix, which may lag the recording.
        var queued: [Float]
    }

    private struct Pending {
        /// Mix frames recorded before the server announced the stream: none of them is its.
        var searchFromFrame: Int
        var held: [Float] = []
        /// Silent frames the recording began with, not held (nothing to hear in them).
        var skippedFrames = 0
        var started = false
    }

    init(consumer: AppCaptureConsumer, rateHz: Int) {
        self.consumer = consumer
        historyFrames = rateHz  // one second
        holdFrames = rateHz / 20
        silentStartFrames = rateHz / 5
        placeEveryFrames = rateHz / 4
        mix = []
        mix.reserveCapacity(2 * historyFrames * 2)
    }

    /// A stream was just created on the capture sink: its recording will be spliced.
    func streamAppeared(_ index: UInt32) {
        pending[index] = Pending(searchFromFrame: mixEndFrame)
    }

    /// The capture sink's volume (linear, per channel; 0 when muted) changed. Mix frames
    /// rendered around the change may be divided by the other gain: a stream starting just
    /// then is heard from where its recording began.
    func mixGainDidChange(left: Float, right: Float) {
        mixGain = (left, right)
    }

    /// The capture sink's mix (the pacer's recording), in order, holes as zeros.
    func mixDidArrive(_ samples: UnsafeBufferPointer<Float>) {
        if mixGain == (1, 1) {
            mix.append(contentsOf: samples)
        } else {
            let inverse = (left: mixGain.left > 0 ? 1 / mixGain.left : 0, right: mixGain.right > 0 ? 1 / mixGain.right : 0)
            for frame in 0 ..< samples.count / 2 {
                mix.append(samples[2 * frame] * inverse.left)
                mix.append(samples[2 * frame + 1] * inverse.right)
            }
        }
        mixEndFrame += samples.count / 2
        if mix.count > 4 * historyFrames { mix.removeFirst(mix.count - 2 * historyFrames) }
        for index in Array(placed.keys) { takeOutOfMix(index) }
        for index in pending.keys.sorted() where pending[index]?.started == true { trySplice(index) }
        for index in endedUnheard.keys.sorted() { recoverEndedUnheard(index) }
    }

    /// Subtracts the placed stream's frames from the mix as far as the mix reaches. A recording
    /// that falls more than the hold behind the mix or runs as far ahead of it has missed or
    /// skipped time (a corked stream records nothing, an overrun drops): its place on the
    /// timeline is no longer known, and it is no longer placed.
    private func takeOutOfMix(_ index: UInt32) {
        guard var stream = placed.removeValue(forKey: index) else { return }
        let queuedFrames = stream.queued.count / 2
        let frames = min(queuedFrames, mixEndFrame - stream.nextMixFrame)
        let from = max(stream.nextMixFrame, mixStartFrame), to = stream.nextMixFrame + frames
        if from < to {
            for frame in from ..< to {
                let m = 2 * (frame - mixStartFrame), q = 2 * (frame - stream.nextMixFrame)
                mix[m] -= stream.queued[q]
                mix[m + 1] -= stream.queued[q + 1]
            }
        }
        if frames > 0 {
            stream.queued.removeFirst(2 * frames)
            stream.nextMixFrame += frames
        }
        let behindFrames = mixEndFrame - stream.nextMixFrame, aheadFrames = stream.queued.count / 2
        guard behindFrames <= holdFrames, aheadFrames <= holdFrames else { return }
        placed[index] = stream
    }

    /// Looks for an unplaced stream in the mix less the placed streams, once a quarter second
    /// of mix: by a quarter hold of its frames as they arrive (12.5 ms: the mix, which arrives
    /// in step with the recordings give or take a fragment, has their start by then). Found,
    /// it is placed. Between tries nothing is kept.
    private func lookFor(_ index: UInt32, _ samples: UnsafeBufferPointer<Float>) {
        // A stream seen for the first time has its first look a part of a round from now, by
        // its index: streams taken over together are not all looked for in the same moment.
        var stream = unplaced.removeValue(forKey: index)
            ?? Unplaced(lookedForAtMixFrame: mixEndFrame - placeEveryFrames + Int(index % 16) * placeEveryFrames / 16)
        defer { if placed[index] == nil { unplaced[index] = stream } }
        if let last = stream.lookedForAtMixFrame, mixEndFrame - last < placeEveryFrames { return }
        stream.recent.append(contentsOf: samples)
        let frames = stream.recent.count / 2
        guard frames >= holdFrames / 4 else { return }
        let recent = stream.recent
        stream.recent = []
        stream.lookedForAtMixFrame = mixEndFrame
        guard let first = (0 ..< frames).first(where: { isSounding(recent, $0) }), first + matchFrames <= frames,
              let mixFrame = find(recent, at: first, from: mixEndFrame - frames - holdFrames),
              placed.values.allSatisfy({ $0.nextMixFrame >= mixFrame + matchFrames })
        else { return }
        placed[index] = Placed(nextMixFrame: mixFrame - first, queued: recent)
        takeOutOfMix(index)
    }

    private var mixStartFrame: Int { mixEndFrame - mix.count / 2 }

    func captureDidStart(_ stream: CapturedStreamIdentity) {
        placed[stream.streamIndex] = nil  // a new recording: its place is found anew
        unplaced[stream.streamIndex] = nil
        pending[stream.streamIndex]?.started = true
        consumer.captureDidStart(stream)
    }

    func captureDidUpdate(_ stream: CapturedStreamIdentity) { consumer.captureDidUpdate(stream) }

    func captureDidReceive(streamIndex: UInt32, interleaved samples: UnsafeBufferPointer<Float>) {
        guard let stream = pending[streamIndex] else {
            // (Pending streams are tried again with the next mix, not here: with many placed
            // streams that would repeat every pending search once per stream and fragment.)
            if placed[streamIndex] != nil {
                placed[streamIndex]!.queued.append(contentsOf: samples)
                takeOutOfMix(streamIndex)
            } else {
                lookFor(streamIndex, samples)
            }
            return consumer.captureDidReceive(streamIndex: streamIndex, interleaved: samples)
        }
        if stream.held.isEmpty, !(0 ..< samples.count / 2).contains(where: { isSounding(samples, $0) }) {
            pending[streamIndex]!.skippedFrames += samples.count / 2
            if stream.skippedFrames + samples.count / 2 >= silentStartFrames { pending[streamIndex] = nil }
            return consumer.captureDidReceive(streamIndex: streamIndex, interleaved: samples)
        }
        pending[streamIndex]!.held.append(contentsOf: samples)
        trySplice(streamIndex)
    }

    func captureDidEnd(streamIndex: UInt32) {
        placed[streamIndex] = nil
        unplaced[streamIndex] = nil
        if let stream = pending[streamIndex], stream.held.isEmpty {
            pending[streamIndex] = nil
            endedUnheard[streamIndex] = EndedUnheard(searchFromFrame: stream.searchFromFrame, endedAtMixFrame: mixEndFrame)
            return recoverEndedUnheard(streamIndex)
        }
        release(streamIndex, onset: [])
        consumer.captureDidEnd(streamIndex: streamIndex)
    }

    /// A stream that ended unheard, once the mix has come a hold past its end and the placed
    /// streams have been taken out that far: what sounds in the mix since it appeared is its
    /// sound, handed on whole, when it sounded there alone — no other stream pending or
    /// unplaced, the mix silent just before it appeared and for the half hold before its end was
    /// reached. Otherwise whose sound it is cannot be told, and it ends with nothing, as it
    /// was recorded. A second of mix past its end without the placed streams catching up, too.
    private func recoverEndedUnheard(_ index: UInt32) {
        guard let stream = endedUnheard[index] else { return }
        let end = stream.endedAtMixFrame + holdFrames
        guard mixEndFrame >= end else { return }
        let placedCaughtUp = placed.values.allSatisfy { $0.nextMixFrame >= end }
        guard placedCaughtUp || mixEndFrame >= stream.endedAtMixFrame + historyFrames else { return }
        endedUnheard[index] = nil
        defer { consumer.captureDidEnd(streamIndex: index) }
        let from = stream.searchFromFrame
        // (A stream that appeared before the mix's first frame — the capture just started —
        // has nothing before it to be silent.)
        guard placedCaughtUp, from >= mixStartFrame, pending.isEmpty, unplaced.isEmpty,
              from == mixStartFrame ? mixStartFrame == 0 : !isSounding(mix, from - 1 - mixStartFrame),
              !(end - holdFrames / 2 ..< end).contains(where: { isSounding(mix, $0 - mixStartFrame) }),
              let first = (from ..< end).first(where: { isSounding(mix, $0 - mixStartFrame) }),
              let last = (first ..< end).last(where: { isSounding(mix, $0 - mixStartFrame) })
        else { return }
        let span = 2 * (first - mixStartFrame) ..< 2 * (last + 1 - mixStartFrame)
        let sound = Array(mix[span])
        for sample in span { mix[sample] = 0 }  // taken: not another stream's onset
        sound.withUnsafeBufferPointer { consumer.captureDidReceive(streamIndex: index, interleaved: $0) }
    }

    /// The capture is stopping: streams that ended unheard end now, with nothing.
    func endUnheardNow() {
        for index in endedUnheard.keys.sorted() { consumer.captureDidEnd(streamIndex: index) }
        endedUnheard = [:]
    }

    func captureDidLeave(_ stream: CapturedStreamIdentity, reason: String) { consumer.captureDidLeave(stream, reason: reason) }
    func captureStateDidChange(_ state: AppCapture.State) { consumer.captureStateDidChange(state) }
    func captureDidChooseRealSink(_ sinkName: String) { consumer.captureDidChooseRealSink(sinkName) }
    func captureDidRest(_ isResting: Bool) { consumer.captureDidRest(isResting) }
    func captureDidRepair(_ message: String) { consumer.captureDidRepair(message) }

    /// The stream is recorded anew (its recording had ended): the new recording's frames are
    /// not where the old one's were on the mix's timeline, so its place is found anew, and what
    /// was held for its onset is handed on as it is.
    func recordingDidRestart(streamIndex: UInt32) {
        placed[streamIndex] = nil
        unplaced[streamIndex] = nil
        release(streamIndex, onset: [])
    }

    /// The stream is no longer ours (left alone, or gone before its capture started).
    func forget(_ index: UInt32) {
        pending[index] = nil
        placed[index] = nil
        unplaced[index] = nil
    }

    private func trySplice(_ index: UInt32) {
        guard let stream = pending[index] else { return }
        let heldFrames = stream.held.count / 2
        guard let first = (0 ..< heldFrames).first(where: { isSounding(stream.held, $0) }) else { return }
        guard first + matchFrames <= heldFrames else { return }
        if let mixFrame = find(stream.held, at: first, from: stream.searchFromFrame) {
            // The onset is taken from the mix less the placed streams: wait until each has
            // been taken out as far as the match (a recording may lag the mix a little).
            guard placed.values.allSatisfy({ $0.nextMixFrame >= mixFrame + matchFrames }) else { return }
            // Everything the mix holds before that point, since its last silence, is the
            // stream's missing start; the recording's silent frames before it are not (its
            // first frames may be silence while the stream already sounds: a link being made).
            var onsetStart = max(stream.searchFromFrame, mixStartFrame)
            while onsetStart < mixFrame, !isSounding(mix, onsetStart - mixStartFrame) { onsetStart += 1 }
            let onset = Array(mix[2 * (onsetStart - mixStartFrame) ..< 2 * (mixFrame - mixStartFrame)])
            // Placed from now on: its onset and recording come out of the mix.
            placed[index] = Placed(nextMixFrame: onsetStart, queued: onset + stream.held[(2 * first)...])
            release(index, onset: onset, droppingHeldFrames: first)
            return takeOutOfMix(index)
        }
        // Not (yet) in the mix: the mix may lag the recording by a fragment. Past the hold
        // limit the stream did not start alone; it is heard from where its recording began.
        if heldFrames - first >= holdFrames { release(index, onset: []) }
    }

    /// Where the stream's frames `first ..< first + matchFrames` occur in the mix, searching
    /// from `fromFrame`; nil if they do not.
    private func find(_ held: [Float], at first: Int, from fromFrame: Int) -> Int? {
        let start = max(fromFrame, mixStartFrame)
        let last = mixEndFrame - matchFrames
        guard start <= last else { return nil }
        let base = mixStartFrame
        candidates: for frame in start ... last {
            let m = 2 * (frame - base), h = 2 * first
            for offset in 0 ..< 2 * matchFrames where abs(mix[m + offset] - held[h + offset]) > tolerance {
                continue candidates
            }
            return frame
        }
        return nil
    }

    private func isSounding(_ samples: UnsafeBufferPointer<Float>, _ frame: Int) -> Bool {
        abs(samples[2 * frame]) > silence || abs(samples[2 * frame + 1]) > silence
    }

    private func isSounding(_ samples: [Float], _ frame: Int) -> Bool {
        abs(samples[2 * frame]) > silence || abs(samples[2 * frame + 1]) > silence
    }

    private func release(_ index: UInt32, onset: [Float], droppingHeldFrames dropped: Int = 0) {
        guard let stream = pending.removeValue(forKey: index) else { return }
        for part in [onset[...], stream.held[(2 * dropped)...]] where !part.isEmpty {
            part.withUnsafeBufferPointer { consumer.captureDidReceive(streamIndex: index, interleaved: $0) }
        }
    }
}
