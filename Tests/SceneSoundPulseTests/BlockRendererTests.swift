import Testing
@testable import SceneSoundPulse

@Suite struct BlockRendererTests {
    /// A render that writes a running frame counter into both channels.
    final class CountingRender {
        var nextFrame: Float = 0
        var calls: [Int] = []
        func render(_ buffer: UnsafeMutablePointer<Float>, _ frameCount: Int) {
            calls.append(frameCount)
            for frame in 0 ..< frameCount {
                buffer[2 * frame] = nextFrame
                buffer[2 * frame + 1] = -nextFrame
                nextFrame += 1
            }
        }
    }

    @Test func requestsOfAnySizeGetWholeBlocksInOrder() {
        let source = CountingRender()
        let renderer = BlockRenderer(blockFrames: 64, render: source.render)
        var output: [Float] = []
        for request in [100, 7, 64, 1, 300, 28] {
            var chunk = [Float](repeating: .nan, count: request * 2)
            chunk.withUnsafeMutableBytes { renderer.fill($0.baseAddress!, frameCount: request) }
            output += chunk
        }
        let total = 100 + 7 + 64 + 1 + 300 + 28
        #expect(output.count == total * 2)
        for frame in 0 ..< total {
            #expect(output[2 * frame] == Float(frame) && output[2 * frame + 1] == -Float(frame))
        }
        #expect(source.calls.allSatisfy { $0 == 64 })
        #expect(source.calls.count == (total + 63) / 64)
        #expect(renderer.pendingFrames == source.calls.count * 64 - total)
    }

    @Test func unalignedDestinationsAreFilled() {
        let source = CountingRender()
        let renderer = BlockRenderer(blockFrames: 16, render: source.render)
        var bytes = [UInt8](repeating: 0, count: 1 + 10 * BlockRenderer.bytesPerFrame)
        bytes.withUnsafeMutableBytes { renderer.fill($0.baseAddress! + 1, frameCount: 10) }
        let lastLeft = bytes.withUnsafeBytes {
            $0.loadUnaligned(fromByteOffset: 1 + 9 * BlockRenderer.bytesPerFrame, as: Float.self)
        }
        #expect(lastLeft == 9)
    }
}
