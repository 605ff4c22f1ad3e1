import Testing
import SceneSoundDSP
@testable import SceneSoundEngine

/// A source's input keeps the frames before each block in place (the bus voices' delays read
/// them there), across blocks of any length, shorter and longer than the history; as many as
/// its bus voices read, on one stage or on two while an HRTF switch crossfades.
@Suite struct RenderSourceHistoryTests {
    @Test func theFramesBeforeEachBlockAreTheInputsOwn() {
        let lengths = [256, 100, 256, 37, 256, 256, 1, 256, 200, 256, 256, 256, 256, 129, 256]
        let source = Self.source(frames: lengths.reduce(0, +))
        let wrong = Self.play(source, lengths: lengths)
        // KEMAR's delays need less than the reserve every source has room for: only they are kept.
        #expect(source.historyFramesInUse == source.voices.busHistoryFrames)
        #expect(source.historyFramesInUse > 37 && source.historyFramesInUse < source.historyFrames)
        #expect(wrong.isEmpty, "\(wrong.prefix(5))")
    }

    /// A switch's incoming voices reading further back (another set's longer delays) are
    /// given their history from the switch's first block, and the copy shrinks again after it.
    @Test func aSwitchsLongerDelaysFindTheirHistory() {
        let source = Self.source(frames: 256 * 12)
        let own = source.historyFramesInUse
        var wrong = Self.play(source, lengths: [256, 256])
        source.incomingVoices = SourceVoices(hrtf: KEMAR.set, channelCount: 1,
                                             maximumDelaySamples: Float(source.historyFrames - 1), maximumFrames: 256)
        #expect(source.historyFramesInUse == source.historyFrames)
        wrong += Self.play(source, lengths: [256, 256, 256, 256], after: 512)
        source.voices = source.incomingVoices!
        source.incomingVoices = nil
        #expect(source.historyFramesInUse == source.historyFrames)
        source.voices = SourceVoices(hrtf: KEMAR.set, channelCount: 1, maximumDelaySamples: KEMAR.set.maximumDelaySamples,
                                     maximumFrames: 256)
        #expect(source.historyFramesInUse == own)
        wrong += Self.play(source, lengths: [256, 256], after: 512 + 1024)
        #expect(wrong.isEmpty, "\(wrong.prefix(5))")
    }

    /// A mono source whose input is a ramp: each frame's value is its place in the stream
    /// (1-based: 0 is the silence before it).
    static func source(frames total: Int) -> RenderSource {
        let ring = AudioRing(capacityFrames: total, channelCount: 1)
        let ramp = (1...total).map(Float.init)
        ramp.withUnsafeBufferPointer { _ = ring.write($0.baseAddress!, frames: total) }
        return RenderSource(input: RingInput(ring: ring), channelCount: 1, mode: .anchored,
                            channelPositions: [Vector3(x: 0, y: 0, z: -1)], gain: 1, hrtf: KEMAR.set, maximumFrames: 256)
    }

    /// Reads blocks of `lengths` as the renderer does (the history kept, then the block read)
    /// and returns what is wrong in each block and in the history before it; `after`: the frames
    /// read before (the last block of them 256 long).
    static func play(_ source: RenderSource, lengths: [Int], after: Int = 0) -> [String] {
        let sums = UnsafeMutablePointer<Float>.allocate(capacity: 1)
        defer { sums.deallocate() }
        var read = after, previous = after == 0 ? 0 : 256, wrong: [String] = []
        for (index, frames) in lengths.enumerated() {
            source.keepHistory(frames: previous)
            #expect(source.input.read(into: source.planar, channelCount: 1, frames: frames, sumsOfSquares: sums) == frames)
            let start = source.planar[0]
            for k in 1...source.historyFramesInUse where start[-k] != Float(max(0, read + 1 - k)) {
                wrong.append("block \(index): \(k) before is \(start[-k]), not \(max(0, read + 1 - k))")
            }
            for n in 0..<frames where start[n] != Float(read + 1 + n) {
                wrong.append("block \(index): frame \(n) is \(start[n])")
            }
            read += frames
            previous = frames
        }
        return wrong
    }
}
