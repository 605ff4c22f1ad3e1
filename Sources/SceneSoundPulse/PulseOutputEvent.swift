extension PulseOutput {
    /// What happened to the connection. Delivered on the PulseAudio thread: handlers should
    /// be quick (hand the event to a queue) and must not block.
    public enum Event: Sendable, Equatable {
        /// The playback stream is running on `sinkName` (first connection or after a reconnect).
        case connected(sinkName: String)
        /// The server went away or could not be reached; retries follow until `stop()`.
        case disconnected(reason: String)
        /// Retry number `attempt` (counting from 1 since the last loss) is starting.
        case reconnecting(attempt: Int)
        /// The server ran out of audio to play: `render` was too late.
        case underrun
        /// Something a retry alone will not fix, e.g. an unknown sink name. Retries go on
        /// (the sink may appear later), but this is reported only once until a connection succeeds.
        case failed(String)
    }
}
