import SceneSoundProtocol

/// What the server announced in `WELCOME`.
public struct ServerParameters: Equatable, Sendable {
    public var protocolVersion: UInt16
    /// The output's sample rate; streams at other rates are resampled by the server.
    public var sampleRateHz: UInt32
    /// The render quantum.
    public var blockFrames: UInt32
    /// The largest frame, header included, either side may send on this connection.
    public var maxFrameBytes: Int
    /// Streams this connection may have open at once.
    public var maxStreams: Int
    /// The largest sample `uploadSample` may send, in PCM bytes.
    public var maxSampleBytes: Int
    /// E.g. `scenesoundd 0.1`.
    public var serverName: String

    public init(_ welcome: Welcome) {
        protocolVersion = welcome.version
        sampleRateHz = welcome.sampleRateHz
        blockFrames = welcome.blockFrames
        maxFrameBytes = Int(welcome.maxFrameBytes)
        maxStreams = Int(welcome.maxStreams)
        maxSampleBytes = Int(welcome.maxSampleBytes)
        serverName = welcome.serverName
    }
}
