import CPulse

extension PulseOutput {
    /// What to play to and how. The stream format: interleaved Float32, stereo unless
    /// `channelPositions` says otherwise.
    public struct Configuration: Sendable {
        /// The sink to play to; nil = the server's default sink.
        public var sinkName: String?
        /// PA_STREAM_DONT_MOVE: the server never moves the stream, not even when the default
        /// sink changes (PulseAudio 14+ and WirePlumber move every stream without a preference
        /// of its own to the new default). Set by `PulseOutput.pin(toSink:)`.
        public var staysOnSink = false
        public var rateHz: Int
        /// Frames per `render` call (the engine's render quantum).
        public var blockFrames: Int
        /// Requested server-side buffer (pa_buffer_attr.tlength), in seconds.
        public var targetLatencySeconds: Double
        public var applicationName: String
        public var streamName: String
        /// A libpulse server string (e.g. "unix:/run/user/1000/pulse/native");
        /// nil = libpulse's default lookup ($PULSE_SERVER, client.conf, the runtime dir).
        public var serverAddress: String?
        /// The stream's channels by PulseAudio's names (`front-left`, `front-right`, `lfe`, …),
        /// in the order `render` fills them; 1 to 8. Set by `PulseOutput.useChannels`.
        public var channelPositions = ["front-left", "front-right"]

        public init(
            sinkName: String? = nil,
            rateHz: Int = 48_000,
            blockFrames: Int = 256,
            targetLatencySeconds: Double = 0.020,
            applicationName: String = "SceneSound",
            streamName: String = "Spatial mix",
            serverAddress: String? = nil
        ) {
            self.sinkName = sinkName
            self.rateHz = rateHz
            self.blockFrames = blockFrames
            self.targetLatencySeconds = targetLatencySeconds
            self.applicationName = applicationName
            self.streamName = streamName
            self.serverAddress = serverAddress
        }

        /// PulseAudio's own limits (PA_RATE_MAX), and a block no longer than a second.
        static let supportedRatesHz = 1...384_000

        func validate() throws(PulseOutputError) {
            func invalid(_ why: String) -> PulseOutputError { .invalidConfiguration(why) }
            guard Self.supportedRatesHz.contains(rateHz) else {
                throw invalid("rate \(rateHz) Hz is outside \(Self.supportedRatesHz.lowerBound)...\(Self.supportedRatesHz.upperBound) Hz")
            }
            guard blockFrames > 0, blockFrames <= rateHz else {
                throw invalid("block of \(blockFrames) frames must be between 1 frame and one second (\(rateHz) frames)")
            }
            guard targetLatencySeconds.isFinite, targetLatencySeconds > 0, targetLatencySeconds <= 10 else {
                throw invalid("target latency \(targetLatencySeconds) s must be above 0 and at most 10 s")
            }
            guard (1...BlockRenderer.maximumChannelCount).contains(channelPositions.count) else {
                throw invalid("\(channelPositions.count) channels: a stream has 1 to \(BlockRenderer.maximumChannelCount)")
            }
            for name in channelPositions where pa_channel_position_from_string(name) == PA_CHANNEL_POSITION_INVALID {
                throw invalid("channel position '\(name)' is not one of PulseAudio's (front-left, front-right, front-center, lfe, rear-left, rear-right, side-left, side-right, …)")
            }
            guard Set(channelPositions).count == channelPositions.count else {
                throw invalid("channel positions repeat: \(channelPositions.joined(separator: ","))")
            }
            if let sinkName, sinkName.isEmpty { throw invalid("sink name is empty (use nil for the default sink)") }
            if let serverAddress, serverAddress.isEmpty { throw invalid("server address is empty (use nil for the default lookup)") }
            guard !applicationName.isEmpty, !streamName.isEmpty else {
                throw invalid("application and stream names must not be empty")
            }
        }
    }
}
