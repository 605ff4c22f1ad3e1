import Testing
import SceneSoundDSP
@testable import SceneSoundEngine

/// A source's input keeps the frames before each block in place (the bus voices' delays read
/// them there), across blocks of any length, shorter and longer than the history.
@Suite struct RenderSourceHistoryTests {
    @Test func theFramesBeforeEachBlockAreTheInputsOwn() {
        let block = 256
        let lengths = [256, 100, 256, 37, 256, 256, 1, 256, 200, 256, 256, 256, 256, 129, 256]
        let total = lengths.reduce(0, +)
        // Each frame's value is its place in the stream (1-based: 0 is the silence before it).
        let ring = AudioRing(capacityFrames: total, channelCount: 1)
        let ramp = (1...total).map(Float.init)
        ramp.withUnsafeBufferPointer { _ = ring.write($0.baseAddress!, frames: total) }
        let input = RingInput(ring: ring)
        let source = RenderSource(input: input, channelCount: 1, mode: .anchored, channelPositions: [Vector3(x: 0, y: 0, z: -1)],
                                  gain: 1, hrtf: KEMAR.set, maximumFrames: block)
        let sums = UnsafeMutablePointer<Float>.allocate(capacity: 1)
        defer { sums.deallocate() }
        var read = 0, previous = 0, wrong: [String] = []
        for (index, frames) in lengths.enumerated() {
            source.keepHistory(frames: previous)
            #expect(source.input.read(into: source.planar, channelCount: 1, frames: frames, sumsOfSquares: sums) == frames)
            let start = source.planar[0]
            for k in 1...source.historyFrames where start[-k] != Float(max(0, read + 1 - k)) {
                wrong.append("block \(index): \(k) before is \(start[-k]), not \(max(0, read + 1 - k))")
            }
            for n in 0..<frames where start[n] != Float(read + 1 + n) {
                wrong.append("block \(index): frame \(n) is \(start[n])")
            }
            read += frames
            previous = frames
        }
        #expect(source.historyFrames > 37 && source.historyFrames < 256)
        #expect(wrong.isEmpty, "\(wrong.prefix(5))")
    }
}
