import CPulse

#if _endian(big)
#error("PulseOutput streams FLOAT32LE straight from Float buffers: little-endian hosts only")
#endif

/// The stream's format and server-side buffer, derived from the configuration.
enum PlaybackBufferAttributes {
    static func sampleSpec(rateHz: Int, channelCount: Int) -> pa_sample_spec {
        pa_sample_spec(format: PA_SAMPLE_FLOAT32LE, rate: UInt32(rateHz), channels: UInt8(channelCount))
    }

    /// The channel map of `positions` (PulseAudio's names: `front-left`, `lfe`, …), which
    /// `Configuration.validate` has checked.
    static func channelMap(_ positions: [String]) -> pa_channel_map {
        var map = pa_channel_map()
        map.channels = UInt8(positions.count)
        withUnsafeMutableBytes(of: &map.map) { raw in
            let slots = raw.bindMemory(to: pa_channel_position_t.self)
            for (index, name) in positions.enumerated() { slots[index] = pa_channel_position_from_string(name) }
        }
        return map
    }

    /// tlength ≈ the target latency, minreq = one block (Pulse asks for audio a block at a
    /// time), prebuf = one block (playback starts, and restarts after an underrun, as soon
    /// as there is something to play). With PA_STREAM_ADJUST_LATENCY the server sizes the
    /// sink's own buffer so that the total is about tlength.
    static func bufferAttributes(rateHz: Int, blockFrames: Int, targetLatencySeconds: Double,
                                 bytesPerFrame: Int) -> pa_buffer_attr {
        let blockBytes = blockFrames * bytesPerFrame
        let targetFrames = Int((targetLatencySeconds * Double(rateHz)).rounded())
        // Two blocks at least: one playing while the next is requested.
        let targetBytes = max(targetFrames * bytesPerFrame, 2 * blockBytes)
        let serverDefault = UInt32.max  // (uint32_t) -1: let the server choose
        return pa_buffer_attr(
            maxlength: serverDefault,
            tlength: UInt32(targetBytes),
            prebuf: UInt32(blockBytes),
            minreq: UInt32(blockBytes),
            fragsize: serverDefault)
    }

    /// NOT_MONOTONIC: by default libpulse never lets the interpolated clock go back, so after
    /// any phase where it ran ahead (a sink that starts the stream late, as an idle null sink
    /// does, up to 2 s) pa_stream_get_latency reads 0 until real time catches up. We use that
    /// clock for the latency only, never as a timeline, so fresh timing info must win.
    /// No AUTO_TIMING_UPDATE: `PlaybackStream` asks for timing info itself, only while it plays.
    static let streamFlags = pa_stream_flags_t(
        PA_STREAM_ADJUST_LATENCY.rawValue
            | PA_STREAM_INTERPOLATE_TIMING.rawValue
            | PA_STREAM_NOT_MONOTONIC.rawValue)
}
