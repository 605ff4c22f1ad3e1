import Foundation
import SceneSoundDSP
import Testing

/// A captured stream's late audio bridged by a continuation: a tone keeps its level through a
/// dry spell of a few milliseconds, with no click going in or coming out, and a stream that
/// really stopped leaves only a short fading tail.
@Suite struct DrySpellConcealerTests {
    static let rateHz = 48_000.0

    /// Stereo, one channel a tone of `hertz` from frame `start`, the other the same at half level.
    static func tone(_ hertz: Double, start: Int, frames: Int) -> [[Float]] {
        let left = (0..<frames).map { Float(0.5 * sin(2 * Double.pi * hertz * Double(start + $0) / rateHz)) }
        return [left, left.map { $0 / 2 }]
    }

    /// Plays 8 reads of 256 frames of the tone, then a read that brings only `brought` of 256
    /// and `dryReads` reads that bring nothing, then the tone again from where it stopped (the
    /// stream now late by what was missing, less what the concealer passes over unless `aligns`
    /// is false) for 2048 frames; returns the left channel as heard and where the spell began.
    static func play(hertz: Double, dryReads: Int, brought: Int = 16, conceals: Bool = true,
                     aligns: Bool = true) -> (heard: [Float], spellStart: Int) {
        let heard = play(hertz: hertz, reads: [brought] + Array(repeating: 0, count: dryReads), conceals: conceals, aligns: aligns).heard
        return (heard, 8 * 256 + brought)
    }

    /// 8 whole reads of 256 frames, then reads that bring `reads` frames each (the rest of each
    /// concealed, or silence), then 8 whole reads; the left channel as heard. `trimming`: after
    /// the first 8 reads, about that many frames of what waits are passed over (where
    /// `framesToTrim` says, or exactly that many unless `inPhase`): `trimmed`.
    static func play(hertz: Double, reads: [Int], conceals: Bool = true, aligns: Bool = true,
                     trimming: Int = 0, inPhase: Bool = true) -> (heard: [Float], trimmed: Int) {
        var trimmed = 0
        let concealer = DrySpellConcealer(channelCount: 2)
        let block = 256
        let buffers = (0..<2).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: block) }
        defer { buffers.forEach { $0.deallocate() } }
        let channels = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: 2)
        defer { channels.deallocate() }
        channels[0] = buffers[0]; channels[1] = buffers[1]
        let sums = UnsafeMutablePointer<Float>.allocate(capacity: 2)
        defer { sums.deallocate() }
        var heard: [Float] = []
        var next = 0  // the tone's next frame
        func read(_ count: Int) {
            if count > 0 && aligns {
                next += concealer.framesToPassOver(available: 4_096) { frame, channel in
                    tone(hertz, start: next + frame, frames: 1)[channel][0]
                }
            }
            let real = tone(hertz, start: next, frames: count)
            for c in 0..<2 { buffers[c].update(from: real[c], count: count) }
            next += count
            concealer.received(channels, offset: 0, frames: count)
            if count < block {
                if conceals {
                    concealer.conceal(channels, offset: count, frames: block - count, sumsOfSquares: sums)
                } else {
                    for c in 0..<2 { (buffers[c] + count).update(repeating: 0, count: block - count) }
                }
            }
            heard += Array(UnsafeBufferPointer(start: buffers[0], count: block))
        }
        for _ in 0..<8 { read(block) }
        if trimming > 0 {
            trimmed = inPhase
                ? concealer.framesToTrim(trimming, available: 4_096) { frame, channel in tone(hertz, start: next + frame, frames: 1)[channel][0] }
                : trimming
            next += trimmed
        }
        for count in reads + Array(repeating: block, count: 8) { read(count) }
        return (heard, trimmed)
    }

    static func rms(_ x: ArraySlice<Float>) -> Double {
        (x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(x.count)).squareRoot()
    }

    static func largestStep(_ x: [Float]) -> Float {
        zip(x, x.dropFirst()).map { abs($1 - $0) }.max() ?? 0
    }

    @Test(arguments: [300.0, 700.0, 1_700.0, 110.0])
    func aFewMillisecondsMissingKeepTheLevelAndMakeNoClick(hertz: Double) {
        // 240 frames missing (5 ms): the end of one read and none after.
        let (heard, start) = Self.play(hertz: hertz, dryReads: 0)
        // The 10 ms window around the spell, as the capture's gap measure reads it, against the
        // same window of the tone played without a spell (a low tone's partial period counts).
        let window = Self.rms(heard[(start - 120)..<(start + 360)])
        let toneRMS = Self.rms(Self.tone(hertz, start: start - 120, frames: 480)[0][...])
        let ownStep = Float(2 * Double.pi * hertz / Self.rateHz * 0.5)
        let step = Self.largestStep(heard)
        print("\(hertz) Hz, 5 ms missing: the spell's 10 ms window at \(20 * log10(window / toneRMS)) dB, largest step \(step) (the tone's own \(ownStep))")
        #expect(window > 0.8 * toneRMS, "\(hertz) Hz: the spell's window at \(window / toneRMS) of the tone")
        // The tone's level as the gap measure reads it (its bin in each 10 ms window, whole cycles
        // in it): through the spell and where the stream comes back, never below 0.8 of the
        // tone's — without passing over to the frame in phase, the seam cancels it.
        if (hertz / 100).rounded() == hertz / 100 {
            let worst = Self.lowestToneLevel(heard, hertz: hertz, from: start - 480, to: start + 960)
            print("\(hertz) Hz: the tone's lowest level in a 10 ms window about the spell \(worst) of its own")
            #expect(worst > 0.8, "\(hertz) Hz: \(worst) of the tone's level")
        }
        // The crossfade back into the stream adds at most (continuation − stream) × its slope,
        // π / 130 a frame: a few hundredths, where silence put in steps by up to the tone's 0.5.
        #expect(step < ownStep + 0.03, "\(hertz) Hz: a step of \(step) against the tone's \(ownStep)")

        // Silence put in instead falls to the gap's level and clicks.
        let (silent, _) = Self.play(hertz: hertz, dryReads: 0, conceals: false)
        #expect(Self.rms(silent[(start - 120)..<(start + 360)]) < 0.8 * toneRMS)
    }

    /// The tone's magnitude in its bin, over every 10 ms window starting between `from` and
    /// `to` (a frame apart), relative to a whole tone's; the lowest.
    static func lowestToneLevel(_ x: [Float], hertz: Double, from: Int, to: Int) -> Double {
        (from..<to).map { start in
            var re = 0.0, im = 0.0
            for n in 0..<480 {
                let phase = 2 * Double.pi * hertz * Double(n) / rateHz
                re += Double(x[start + n]) * cos(phase)
                im += Double(x[start + n]) * sin(phase)
            }
            return (re * re + im * im).squareRoot() / (0.5 * 240)
        }.min() ?? 0
    }

    @Test func withoutPassingOverToThePhaseTheSeamCancelsTheTone() {
        // 300 Hz, 5 ms missing: a cycle and a half, so the stream comes back in opposite phase.
        let (heard, start) = Self.play(hertz: 300, dryReads: 0, aligns: false)
        #expect(Self.lowestToneLevel(heard, hertz: 300, from: start - 480, to: start + 960) < 0.5)
    }

    @Test(arguments: [300.0, 1_100.0])
    func tenMillisecondsMissingAreNoGap(hertz: Double) {
        // 496 frames missing: the end of one read and the whole next.
        let (heard, start) = Self.play(hertz: hertz, dryReads: 1)
        let worst = Self.lowestToneLevel(heard, hertz: hertz, from: start - 480, to: start + 1_200)
        print("\(hertz) Hz, 10 ms missing: the tone's lowest level in a 10 ms window about the spell \(worst) of its own")
        #expect(worst > 0.5, "\(hertz) Hz: \(worst) of the tone's level")
    }

    /// Spells of 1–2 ms one after another, as a busy machine's first second brings them: each
    /// continuation loops a period of one waveform, the last taken up in phase included (the
    /// history holds what was heard). Without the continuation in the history, 700 Hz fell to
    /// 0.30 of its level.
    @Test(arguments: [700.0, 1_100.0, 1_300.0])
    func aRunOfShortSpellsKeepsTheTone(hertz: Double) {
        let heard = Self.play(hertz: hertz, reads: [179, 203, 208, 256, 156, 226, 256, 256, 196, 196, 196]).heard
        let worst = Self.lowestToneLevel(heard, hertz: hertz, from: 8 * 256 - 480, to: 8 * 256 + 2_400)
        let ownStep = Float(2 * Double.pi * hertz / Self.rateHz * 0.5)
        let step = Self.largestStep(heard)
        print("\(hertz) Hz, eight spells of 0.6–2.1 ms in 60 ms: the tone's lowest level in a 10 ms window \(worst) of its own, largest step \(step) (the tone's own \(ownStep))")
        #expect(worst > 0.9, "\(hertz) Hz: \(worst) of the tone's level")
        #expect(step < ownStep + 0.03, "\(hertz) Hz: a step of \(step) against the tone's \(ownStep)")
    }

    @Test func aStreamThatStoppedLeavesOnlyAShortFadingTail() {
        let (heard, start) = Self.play(hertz: 440, dryReads: 6)
        let fadeFrames = DrySpellConcealer.fadeFrames
        let tail = heard[start..<(start + 240 + 6 * 256)]
        let fade = tail.prefix(fadeFrames), after = tail.dropFirst(fadeFrames)
        #expect(Self.rms(fade) > 0.1, "the fade continues the tone")
        #expect(after.allSatisfy { $0 == 0 }, "silent after the fade")
        // Its level falls from the tone's: the last 48 frames of the fade are below a tenth.
        #expect(fade.suffix(48).allSatisfy { abs($0) < 0.05 })
    }

    @Test func aSilentStreamIsContinuedBySilence() {
        let concealer = DrySpellConcealer(channelCount: 1)
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 256)
        defer { buffer.deallocate() }
        buffer.initialize(repeating: 0, count: 256)
        var channel: UnsafeMutablePointer<Float> = buffer
        let sums = UnsafeMutablePointer<Float>.allocate(capacity: 1)
        defer { sums.deallocate() }
        sums.pointee = 0
        withUnsafeMutablePointer(to: &channel) { channels in
            for _ in 0..<8 { concealer.received(channels, offset: 0, frames: 256) }
            buffer.update(repeating: 1, count: 256)
            concealer.conceal(channels, offset: 0, frames: 256, sumsOfSquares: sums)
        }
        #expect((0..<256).allSatisfy { buffer[$0] == 0 } && sums.pointee == 0)
    }

    /// A trim asked in a stream's first 17 ms (a backlog waiting at its start) cuts nothing:
    /// the history cannot show the period yet, and a plain cut would jump in the waveform. Asked
    /// again once it can, the cut is made in phase.
    @Test func aTrimAtAStreamsStartWaitsForItsHistory() {
        let concealer = DrySpellConcealer(channelCount: 2)
        let hertz = 300.0
        let buffers = (0..<2).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: 256) }
        defer { buffers.forEach { $0.deallocate() } }
        let channels = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: 2)
        defer { channels.deallocate() }
        channels[0] = buffers[0]; channels[1] = buffers[1]
        var next = 0
        func receive(_ frames: Int) {
            let real = Self.tone(hertz, start: next, frames: frames)
            for c in 0..<2 { buffers[c].update(from: real[c], count: frames) }
            concealer.received(channels, offset: 0, frames: frames)
            next += frames
        }
        func trim() -> Int {
            concealer.framesToTrim(400, available: 4_096) { frame, channel in Self.tone(hertz, start: next + frame, frames: 1)[channel][0] }
        }
        for _ in 0..<3 { receive(256) }  // 768 frames: 16 ms
        #expect(trim() == 0)
        receive(256)
        let trimmed = trim()
        #expect(trimmed > 400 - 160 && trimmed <= 400, "\(trimmed) frames trimmed of 400 once the history shows the period")
    }

    /// A queue trimmed by 8.3 ms (400 frames, not whole cycles of any of these tones): the cut falls where the tone continues in phase (at most a
    /// period short of what was asked) and the tone keeps its level and makes no click; cut
    /// exactly where asked, it cancels.
    @Test(arguments: [300.0, 700.0, 1_700.0, 110.0])
    func aTrimCutsWhereTheToneContinuesInPhase(hertz: Double) {
        let excess = 400
        let (heard, trimmed) = Self.play(hertz: hertz, reads: [], trimming: excess)
        let at = 8 * 256
        // The period as the history shows it: a high tone's repeats in whole frames only over
        // a few cycles (32 frames at least); 110 Hz's is longer than the trim (nothing cut yet).
        let period = (32 / (48_000 / hertz)).rounded(.up) * 48_000 / hertz
        let worst = Self.lowestToneLevel(heard, hertz: hertz, from: at - 480, to: at + 960)
        let ownStep = Float(2 * Double.pi * hertz / Self.rateHz * 0.5)
        let step = Self.largestStep(heard)
        print("\(hertz) Hz, 400 frames trimmed: \(trimmed) frames passed over, the tone's lowest level in a 10 ms window about the cut \(worst) of its own, largest step \(step) (the tone's own \(ownStep))")
        #expect(period > Double(excess) ? trimmed == 0 : trimmed <= excess && Double(trimmed) > Double(excess) - period - 1,
                "\(trimmed) frames trimmed of \(excess)")
        #expect(worst > 0.9, "\(hertz) Hz: \(worst) of the tone's level")
        #expect(step < ownStep + 0.03, "\(hertz) Hz: a step of \(step) against the tone's \(ownStep)")
        if hertz == 300 {
            // 400 frames are 2.5 cycles: cut plainly, the tone goes on in opposite phase.
            let plain = Self.play(hertz: hertz, reads: [], trimming: 400, inPhase: false).heard
            #expect(Self.lowestToneLevel(plain, hertz: hertz, from: at - 480, to: at + 960) < 0.5)
        }
    }
}
