import Foundation
import SceneSoundEngine
import Testing

/// A captured app's feed arrives a graph cycle at a time, and the graph may run at half the
/// engine's block (PipeWire 1.4: 128 frames against 256). Its first block must not be read
/// with only the first cycle in it: the stream would start with a hole one cycle long.
@Suite struct RingInputTests {
    static let block = 256

    /// Reads one block of a mono input; the frames read and the block as rendered (zeros
    /// where nothing was read, as the renderer fills them).
    static func readBlock(_ input: RingInput) -> (got: Int, samples: [Float]) {
        var samples = [Float](repeating: 0, count: block)
        var sums: Float = 0
        let got = samples.withUnsafeMutableBufferPointer { buffer in
            var channel = buffer.baseAddress!
            return withUnsafeMutablePointer(to: &channel) { input.read(into: $0, channelCount: 1, frames: block, sumsOfSquares: &sums) }
        }
        for index in got ..< block { samples[index] = 0 }
        return (got, samples)
    }

    static func write(_ ring: AudioRing, from start: Int, frames: Int) {
        let samples = (start ..< start + frames).map { Float($0 + 1) }
        _ = samples.withUnsafeBufferPointer { ring.write($0.baseAddress!, frames: frames) }
    }

    @Test func aFeedsStartWaitsOneBlockForAWholeBlockAndThenPlaysWithoutAHole() {
        let ring = AudioRing(capacityFrames: 4096, channelCount: 1)
        let input = RingInput(ring: ring, holdsStartForWholeBlock: true)
        // Before anything arrived (idle, as a feed starts): nothing read, the start still to come.
        #expect(Self.readBlock(input).got == 0)
        Self.write(ring, from: 0, frames: 128)  // the app's first cycle of 128, as the feed writes it
        input.setIdle(false)
        let held = Self.readBlock(input)
        #expect(held.got == 0, "the first cycle alone is not read")
        #expect(input.starvedFrameCount == 0, "holding the start is not starving")
        Self.write(ring, from: 128, frames: 128)
        Self.write(ring, from: 256, frames: 128)
        let first = Self.readBlock(input)
        #expect(first.got == Self.block)
        let whole = first.samples == (0 ..< Self.block).map { Float($0 + 1) }
        #expect(whole, "the stream from its first frame, whole: it began at frame \(Int(first.samples[0]) - 1)")
        // Held once only: later a short read is read as it is (and counted as starving).
        Self.write(ring, from: 384, frames: 64)
        #expect(Self.readBlock(input).got == 192)
        #expect(input.starvedFrameCount == 64)
    }

    @Test func withoutTheHoldOrWithNothingMoreToComeTheStartIsReadAtOnce() {
        let ring = AudioRing(capacityFrames: 4096, channelCount: 1)
        let plain = RingInput(ring: ring)
        plain.setIdle(false)
        Self.write(ring, from: 0, frames: 128)
        #expect(Self.readBlock(plain).got == 128)

        // A sound shorter than a block with nothing more to come (idle) is played, not held.
        let shortRing = AudioRing(capacityFrames: 4096, channelCount: 1)
        let short = RingInput(ring: shortRing, holdsStartForWholeBlock: true)
        Self.write(shortRing, from: 0, frames: 100)
        short.setIdle(true)
        #expect(Self.readBlock(short).got == 100)
    }

    /// A concealing input (a captured app's feed) fills a dry read with the stream's
    /// continuation and counts it as starved all the same; idle, it reads what there is.
    @Test func aConcealingInputFillsADryReadAndStillCountsIt() {
        let ring = AudioRing(capacityFrames: 4096, channelCount: 1)
        let input = RingInput(ring: ring, concealsDrySpells: true)
        input.setIdle(false)
        // A 1 kHz tone, four blocks, then a read with a quarter of a block.
        let tone = (0 ..< 1_088).map { Float(0.5 * sin(2 * Double.pi * 1_000 * Double($0) / 48_000)) }
        _ = tone.withUnsafeBufferPointer { ring.write($0.baseAddress!, frames: 1_088) }
        for _ in 0 ..< 4 { #expect(Self.readBlock(input).got == Self.block) }
        let dry = Self.readBlock(input)
        #expect(dry.got == Self.block, "the dry part filled")
        #expect(input.starvedFrameCount == Self.block - 64)
        let filled = dry.samples[64...]
        let rms = (filled.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(filled.count)).squareRoot()
        #expect(rms > 0.2, "the tone continued (RMS \(rms))")

        // Idle (the app ended): what there is, and nothing made up.
        let plain = RingInput(ring: AudioRing(capacityFrames: 4096, channelCount: 1), concealsDrySpells: true)
        plain.setIdle(false)
        _ = tone.withUnsafeBufferPointer { plain.ring.write($0.baseAddress!, frames: 1_088) }
        for _ in 0 ..< 4 { _ = Self.readBlock(plain) }
        plain.setIdle(true)
        #expect(Self.readBlock(plain).got == 64)
        #expect(plain.starvedFrameCount == 0)
    }

    /// Each spell of short reads is recorded once it ends, with when it began and all it
    /// lacked; an idle stream's empty reads are none, and only the latest are kept.
    @Test func eachDrySpellIsRecordedWithItsStartAndLength() {
        let ring = AudioRing(capacityFrames: 4096, channelCount: 1)
        let input = RingInput(ring: ring)
        input.setIdle(false)
        Self.write(ring, from: 0, frames: 300)
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let before = Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
        _ = Self.readBlock(input)
        _ = Self.readBlock(input)  // 44 read, 212 lacking
        _ = Self.readBlock(input)  // 256 lacking
        #expect(input.recentDrySpells.isEmpty, "a spell is recorded when it ends")
        Self.write(ring, from: 300, frames: 256)
        _ = Self.readBlock(input)
        let spells = input.recentDrySpells
        #expect(spells.map(\.frames) == [212 + 256])
        let started = spells.first?.startedMonotonicSeconds ?? 0
        #expect(started >= before - 0.001 && started < before + 1, "began at \(started), the reads at \(before)")

        input.setIdle(true)
        for _ in 0 ..< 3 { _ = Self.readBlock(input) }
        Self.write(ring, from: 0, frames: 256)
        _ = Self.readBlock(input)
        #expect(input.recentDrySpells.count == 1, "an idle stream does not starve")

        input.setIdle(false)
        let spellCount = RingInput.recordedDrySpells + 3
        for spell in 1 ... spellCount {
            Self.write(ring, from: 0, frames: spell)
            _ = Self.readBlock(input)  // 256 − spell lacking
            Self.write(ring, from: 0, frames: 256)
            _ = Self.readBlock(input)
        }
        let latest = input.recentDrySpells.map(\.frames)
        #expect(latest == (4 ... spellCount).reversed().map { 256 - $0 }, "the latest, newest first: \(latest)")
    }

    /// A trim asked by the writer is made at the next read, keeping what that read needs, and
    /// counted; a plain input passes over exactly what was asked.
    @Test func aTrimIsMadeAtTheNextReadAndKeepsWhatItNeeds() {
        let ring = AudioRing(capacityFrames: 4096, channelCount: 1)
        let input = RingInput(ring: ring)
        input.setIdle(false)
        Self.write(ring, from: 0, frames: 1_000)
        input.trim(300)
        let first = Self.readBlock(input)
        #expect(first.samples.first == 301, "the read begins after the 300 frames trimmed")
        #expect(input.trimmedFrameCount == 300 && ring.availableFrames == 1_000 - 300 - Self.block)
        input.trim(1_000)  // more than there is: the read keeps its block
        #expect(Self.readBlock(input).got == Self.block)
        #expect(input.trimmedFrameCount == 300 + (1_000 - 300 - 2 * Self.block) && ring.availableFrames == 0)
        #expect(input.starvedFrameCount == 0)
    }

    /// Writes the next `frames` of a 1 kHz tone at 0.5 into `ring` at each call.
    static func toneWriter(_ ring: AudioRing) -> (Int) -> Void {
        var next = 0
        return { frames in
            let tone = (next ..< next + frames).map { Float(0.5 * sin(2 * Double.pi * 1_000 * Double($0) / 48_000)) }
            _ = tone.withUnsafeBufferPointer { ring.write($0.baseAddress!, frames: frames) }
            next += frames
        }
    }

    /// The output's buffer grown at once (PulseAudio after an underflow, 20 → 40 ms: 960
    /// frames more asked at once) is given by a concealing input as a stretch: the tone goes on
    /// at its level, the queue keeps its margin and nothing is counted starved. Taken out of
    /// the queue instead, the same growth runs it dry (a captured app's gap on every underflow).
    @Test func theOutputsGrowthIsAStretchAndDoesNotRunTheQueueDry() {
        let margin = 512, growth = 960
        func play(stretching: Bool) -> (input: RingInput, heard: [Float], fillAfter: Int) {
            let ring = AudioRing(capacityFrames: 8192, channelCount: 1)
            let input = RingInput(ring: ring, concealsDrySpells: true)
            input.setIdle(false)
            let write = Self.toneWriter(ring)
            var heard: [Float] = []
            write(margin)
            for _ in 0 ..< 20 { write(Self.block); heard += Self.readBlock(input).samples }
            if stretching { input.stretch(growth) }
            // The growth taken at once: blocks read with nothing written meanwhile.
            for _ in 0 ..< (growth + Self.block - 1) / Self.block { heard += Self.readBlock(input).samples }
            for _ in 0 ..< 20 { write(Self.block); heard += Self.readBlock(input).samples }
            return (input, heard, ring.availableFrames)
        }
        let stretched = play(stretching: true)
        let windowLevels = stride(from: 0, to: stretched.heard.count - 480, by: 240).map { start in
            (stretched.heard[start ..< start + 480].reduce(0.0) { $0 + Double($1) * Double($1) } / 480).squareRoot()
        }
        let toneRMS = 0.5 / 2.squareRoot()
        let largestStep = zip(stretched.heard, stretched.heard.dropFirst()).map { abs($1 - $0) }.max() ?? 0
        print("stretched by \(stretched.input.stretchedFrameCount) frames: quietest 10 ms \(windowLevels.min() ?? 0) "
              + "(tone \(toneRMS)), largest step \(largestStep), queue after \(stretched.fillAfter) frames")
        #expect(stretched.input.starvedFrameCount == 0)
        #expect(stretched.input.stretchedFrameCount == 1_024, "the growth, rounded up to whole reads")
        #expect((windowLevels.min() ?? 0) > 0.9 * toneRMS, "the tone held its level through the stretch")
        // A 1 kHz tone at 0.5 moves at most 0.065 a frame; a jump at the takeover would be more.
        #expect(largestStep < 0.08, "no click going in or out")
        // The margin kept, less what the takeover passed over to stay in phase (under a period).
        #expect(stretched.fillAfter > margin - 48 && stretched.fillAfter <= margin, "\(stretched.fillAfter) frames queued")

        let drained = play(stretching: false)
        #expect(drained.input.starvedFrameCount > 0, "without the stretch the growth runs the queue dry")
    }

    /// A stretch asked while a dry spell is concealed (the output underflowed as the capture's
    /// delivery came late) holds the continuation where its fade had come to: no jump in
    /// level, nothing more counted starved, and the audio taken up after it without a click.
    @Test func aStretchDuringADrySpellHoldsTheFadesLevel() {
        let ring = AudioRing(capacityFrames: 8192, channelCount: 1)
        let input = RingInput(ring: ring, concealsDrySpells: true)
        input.setIdle(false)
        let write = Self.toneWriter(ring)
        var heard: [Float] = []
        for _ in 0 ..< 20 { write(Self.block); heard += Self.readBlock(input).samples }
        heard += Self.readBlock(input).samples  // dry: the continuation, fading
        input.stretch(2 * Self.block)
        let stretchStart = heard.count
        for _ in 0 ..< 2 { heard += Self.readBlock(input).samples }
        for _ in 0 ..< 10 { write(Self.block); heard += Self.readBlock(input).samples }
        func rms(_ range: Range<Int>) -> Double {
            (heard[range].reduce(0.0) { $0 + Double($1) * Double($1) } / Double(range.count)).squareRoot()
        }
        let endOfFade = rms(stretchStart - 48 ..< stretchStart)
        let held = (0 ..< 2).map { rms(stretchStart + $0 * Self.block ..< stretchStart + ($0 + 1) * Self.block) }
        let largestStep = zip(heard, heard.dropFirst()).map { abs($1 - $0) }.max() ?? 0
        print("a stretch during a spell: level at the spell's last period \(endOfFade), held \(held), largest step \(largestStep)")
        #expect(input.starvedFrameCount == Self.block && input.stretchedFrameCount == 2 * Self.block)
        // The fade after one block (256 of 960 frames) is at about 0.73 of the tone's level.
        #expect(held.allSatisfy { abs($0 / endOfFade - 1) < 0.05 }, "held at \(held), the fade had come to \(endOfFade)")
        #expect(largestStep < 0.08, "no click")
    }
}
