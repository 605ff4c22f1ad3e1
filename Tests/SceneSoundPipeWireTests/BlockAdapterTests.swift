import Testing
@testable import SceneSoundPipeWire

/// `PipeWireOutput`'s block adapter: the engine renders blocks of its own length, the graph's
/// cycles take whatever its quantum is; every frame handed out once, in order, to its speaker.
@Suite struct BlockAdapterTests {
    /// Renders a ramp: frame n of channel c is n * 10 + c (n counted across blocks).
    final class Ramp: @unchecked Sendable {
        var next = 0, blocks = 0, lastChannels = 0
        func render(_ buffer: UnsafeMutablePointer<Float>, frames: Int, channels: Int) {
            for n in 0..<frames { for c in 0..<channels { buffer[n * channels + c] = Float((next + n) * 10 + c) } }
            next += frames; blocks += 1; lastChannels = channels
        }
    }

    static func ramp(_ frames: Range<Int>, channel: Int) -> [Float] {
        frames.map { (frame: Int) -> Float in Float(frame * 10 + channel) }
    }

    /// Runs cycles of these lengths; each speaker's samples, concatenated.
    static func run(_ adapter: BlockAdapter, cycles: [Int]) -> [[Float]] {
        var heard = [[Float]](repeating: [], count: PipeWireGraphNode.outputChannels)
        for frames in cycles {
            let outputs = (0..<PipeWireGraphNode.outputChannels).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: frames) }
            defer { outputs.forEach { $0.deallocate() } }
            for output in outputs { output.initialize(repeating: -1, count: frames) }
            let inputs = [UnsafePointer<Float>?](repeating: nil, count: PipeWireGraphNode.channelsPerSet)
            let pointers: [UnsafeMutablePointer<Float>?] = outputs
            inputs.withUnsafeBufferPointer { inputs in
                pointers.withUnsafeBufferPointer { pointers in
                    adapter.fill(PipeWireGraphNode.Cycle(inputs: inputs.baseAddress!, outputs: pointers.baseAddress!, inputSetCount: 1,
                                                         frames: frames, rateHz: 48_000))
                }
            }
            for speaker in 0..<outputs.count { heard[speaker] += Array(UnsafeBufferPointer(start: outputs[speaker], count: frames)) }
        }
        return heard
    }

    @Test func cyclesShorterAndLongerThanTheBlockGetEveryFrameOnceInOrder() {
        let adapter = BlockAdapter(blockFrames: 256)
        let ramp = Ramp()
        adapter.render = { ramp.render($0, frames: $1, channels: $2) }
        let cycles = [256, 100, 100, 100, 1024, 37, 128, 512]
        let heard = Self.run(adapter, cycles: cycles)
        let total = cycles.reduce(0, +)
        #expect(heard[0] == Self.ramp(0..<total, channel: 0))
        #expect(heard[1] == Self.ramp(0..<total, channel: 1))
        #expect(heard[2...].allSatisfy { $0.allSatisfy { $0 == 0 } }, "speakers not in use are silent")
        #expect(ramp.blocks == (total + 255) / 256, "one block rendered per 256 frames handed out")
        #expect(adapter.pendingFrames == ramp.next - total)
    }

    @Test func newSpeakersTakeEffectWithTheNextBlockTheRestOfTheOldOnItsOwnSpeakers() {
        let adapter = BlockAdapter(blockFrames: 256)
        let ramp = Ramp()
        adapter.render = { ramp.render($0, frames: $1, channels: $2) }
        _ = Self.run(adapter, cycles: [100])
        adapter.use(speakers: [2, 0, 1])   // FC, FL, FR: render's channel 0 is the centre
        let heard = Self.run(adapter, cycles: [200, 64])
        #expect(ramp.lastChannels == 3)
        // Frames 100-255 are the stereo block's rest, on FL and FR; the centre silent meanwhile.
        // From frame 256 a block of the new speakers, each filled in render order.
        #expect(heard[0] == Self.ramp(100..<256, channel: 0) + Self.ramp(256..<364, channel: 1))
        #expect(heard[1] == Self.ramp(100..<256, channel: 1) + Self.ramp(256..<364, channel: 2))
        #expect(heard[2] == [Float](repeating: 0, count: 156) + Self.ramp(256..<364, channel: 0))
        #expect(heard[3].allSatisfy { $0 == 0 })
    }
}
