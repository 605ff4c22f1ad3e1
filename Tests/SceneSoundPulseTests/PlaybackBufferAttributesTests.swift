import CPulse
import Testing
@testable import SceneSoundPulse

@Suite struct PlaybackBufferAttributesTests {
    @Test func targetLatencyAndBlockSizeBecomeTlengthAndMinreq() {
        let attributes = PlaybackBufferAttributes.bufferAttributes(
            rateHz: 48_000, blockFrames: 256, targetLatencySeconds: 0.020, bytesPerFrame: 8)
        #expect(attributes.tlength == 960 * 8)
        #expect(attributes.minreq == 256 * 8)
        #expect(attributes.prebuf == 256 * 8)
        #expect(attributes.maxlength == UInt32.max)
    }

    @Test func tlengthHoldsAtLeastTwoBlocks() {
        let attributes = PlaybackBufferAttributes.bufferAttributes(
            rateHz: 48_000, blockFrames: 1024, targetLatencySeconds: 0.005, bytesPerFrame: 8)
        #expect(attributes.tlength == 2 * 1024 * 8)
    }

    /// A 5.1 stream's buffer holds the same time as a stereo one: six channels' bytes.
    @Test func aSurroundStreamBuffersTheSameTime() {
        let attributes = PlaybackBufferAttributes.bufferAttributes(
            rateHz: 48_000, blockFrames: 256, targetLatencySeconds: 0.020, bytesPerFrame: 24)
        #expect(attributes.tlength == 960 * 24 && attributes.minreq == 256 * 24)
        var map = PlaybackBufferAttributes.channelMap(["front-left", "front-right", "front-center", "lfe", "rear-left", "rear-right"])
        var name = [CChar](repeating: 0, count: 320)
        pa_channel_map_snprint(&name, name.count, &map)
        #expect(String(cString: name) == "front-left,front-right,front-center,lfe,rear-left,rear-right")
    }
}
