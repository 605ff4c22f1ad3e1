import Testing
@testable import SceneSoundPulse

@Suite struct BlockRendererTests {
    /// A render that writes a running frame counter into every channel: channel c gets
    /// (frame + 1) × (c odd ? −1 : 1) × (c / 2 + 1), so frames and channels can be told apart.
    final class CountingRender {
        var nextFrame: Float = 0
        var calls: [(frames: Int, channels: Int)] = []
        func render(_ buffer: UnsafeMutablePointer<Float>, _ frameCount: Int, _ channels: Int) {
            calls.append((frameCount, channels))
            for frame in 0 ..< frameCount {
                for channel in 0 ..< channels { buffer[channels * frame + channel] = Self.value(frame: nextFrame, channel: channel) }
                nextFrame += 1
            }
        }
        static func value(frame: Float, channel: Int) -> Float {
            (frame + 1) * (channel % 2 == 1 ? -1 : 1) * Float(channel / 2 + 1)
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
            #expect(output[2 * frame] == Float(frame + 1) && output[2 * frame + 1] == -Float(frame + 1))
        }
        #expect(source.calls.allSatisfy { $0.frames == 64 && $0.channels == 2 })
        #expect(source.calls.count == (total + 63) / 64)
        #expect(renderer.pendingFrames == source.calls.count * 64 - total)
    }

    @Test func unalignedDestinationsAreFilled() {
        let source = CountingRender()
        let renderer = BlockRenderer(blockFrames: 16, render: source.render)
        var bytes = [UInt8](repeating: 0, count: 1 + 10 * renderer.bytesPerFrame)
        bytes.withUnsafeMutableBytes { renderer.fill($0.baseAddress! + 1, frameCount: 10) }
        let lastLeft = bytes.withUnsafeBytes {
            $0.loadUnaligned(fromByteOffset: 1 + 9 * renderer.bytesPerFrame, as: Float.self)
        }
        #expect(lastLeft == 10)
    }

    /// A stream reopened for a 5.1 sink gets whole 6-channel frames from a fresh block: what
    /// was rendered for the stereo stream and not handed out is not played as six channels.
    @Test func aNewChannelCountStartsAFreshBlockOfThatWidth() {
        let source = CountingRender()
        let renderer = BlockRenderer(blockFrames: 32, render: source.render)
        var stereo = [Float](repeating: .nan, count: 10 * 2)
        stereo.withUnsafeMutableBytes { renderer.fill($0.baseAddress!, frameCount: 10) }
        #expect(renderer.pendingFrames == 22)
        renderer.useChannels(6)
        #expect(renderer.pendingFrames == 0 && renderer.bytesPerFrame == 24)
        var surround = [Float](repeating: .nan, count: 40 * 6)
        surround.withUnsafeMutableBytes { renderer.fill($0.baseAddress!, frameCount: 40) }
        #expect(source.calls.map(\.channels) == [2, 6, 6])
        for frame in 0 ..< 40 {
            for channel in 0 ..< 6 {
                #expect(surround[6 * frame + channel] == CountingRender.value(frame: Float(32 + frame), channel: channel))
            }
        }
    }
}
