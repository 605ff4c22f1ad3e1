import Testing
@testable import SceneSoundPulse

@Suite struct PlaybackBufferAttributesTests {
    @Test func targetLatencyAndBlockSizeBecomeTlengthAndMinreq() {
        let attributes = PlaybackBufferAttributes.bufferAttributes(
            rateHz: 48_000, blockFrames: 256, targetLatencySeconds: 0.020)
        #expect(attributes.tlength == 960 * 8)
        #expect(attributes.minreq == 256 * 8)
        #expect(attributes.prebuf == 256 * 8)
        #expect(attributes.maxlength == UInt32.max)
    }

    @Test func tlengthHoldsAtLeastTwoBlocks() {
        let attributes = PlaybackBufferAttributes.bufferAttributes(
            rateHz: 48_000, blockFrames: 1024, targetLatencySeconds: 0.005)
        #expect(attributes.tlength == 2 * 1024 * 8)
    }
}
