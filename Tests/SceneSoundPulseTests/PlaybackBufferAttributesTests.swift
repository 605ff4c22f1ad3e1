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
        #expect(name.withUnsafeBufferPointer { String(cString: $0.baseAddress!) } == "front-left,front-right,front-center,lfe,rear-left,rear-right")
    }
}

/// The buffer asked of PulseAudio grows after underflows (a busy machine) and shrinks back
/// after a quiet minute.
@Suite struct AdaptiveBufferTests {
    static let second = 1_000_000_000

    @Test func anUnderflowDoublesTheBufferAtMostOnceASecondUpTo160Milliseconds() {
        var buffer = AdaptiveBuffer(configuredSeconds: 0.020)
        #expect(buffer.afterUnderflow(nowNanoseconds: 10 * Self.second) == 0.040)
        #expect(buffer.afterUnderflow(nowNanoseconds: 10 * Self.second + Self.second / 2) == nil, "twice in a second")
        #expect(buffer.afterUnderflow(nowNanoseconds: 12 * Self.second) == 0.080)
        #expect(buffer.afterUnderflow(nowNanoseconds: 13 * Self.second) == 0.160)
        #expect(buffer.afterUnderflow(nowNanoseconds: 15 * Self.second) == nil, "beyond 160 ms")
        #expect(buffer.seconds == 0.160)
    }

    @Test func aQuietMinuteHalvesItDownToTheConfiguredTarget() {
        var buffer = AdaptiveBuffer(configuredSeconds: 0.020)
        #expect(buffer.afterQuiet(nowNanoseconds: 100 * Self.second) == nil, "never grown")
        _ = buffer.afterUnderflow(nowNanoseconds: 10 * Self.second)
        _ = buffer.afterUnderflow(nowNanoseconds: 12 * Self.second)
        #expect(buffer.afterQuiet(nowNanoseconds: 71 * Self.second) == nil, "59 s after the last underflow")
        #expect(buffer.afterQuiet(nowNanoseconds: 72 * Self.second) == 0.040)
        #expect(buffer.afterQuiet(nowNanoseconds: 100 * Self.second) == nil, "a minute after the last change")
        #expect(buffer.afterQuiet(nowNanoseconds: 132 * Self.second) == 0.020)
        #expect(buffer.afterQuiet(nowNanoseconds: 300 * Self.second) == nil)
    }

    /// A target configured above the cap is never lowered nor raised.
    @Test func aLargeConfiguredTargetStays() {
        var buffer = AdaptiveBuffer(configuredSeconds: 0.250)
        #expect(buffer.afterUnderflow(nowNanoseconds: Self.second) == nil)
        #expect(buffer.seconds == 0.250)
    }
}
