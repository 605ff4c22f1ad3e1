import CPulse

/// A proplist's string values. Binary values (icons, cookies) are skipped.
func propertyDictionary(_ proplist: OpaquePointer?) -> [String: String] {
    guard let proplist else { return [:] }
    var properties: [String: String] = [:]
    var state: UnsafeMutableRawPointer?
    while let key = pa_proplist_iterate(proplist, &state) {
        if let value = pa_proplist_gets(proplist, key) {
            properties[String(cString: key)] = String(cString: value)
        }
    }
    return properties
}

/// What the capture needs to know about one sink input (a playback stream), copied out of
/// libpulse's callback so it can be kept and tested without a server.
public struct SinkInputFacts: Sendable, Equatable {
    public var index: UInt32
    /// The module that created the stream. On PulseAudio a client's stream has one too (the
    /// native protocol module); a module's own stream (loopback, echo-cancel, …) has no client.
    public var ownerModule: UInt32?
    public var clientIndex: UInt32?
    public var sinkIndex: UInt32
    /// false for passthrough streams (AC3, DTS, … sent encoded to a receiver).
    public var isPCM: Bool
    public var properties: [String: String]
    /// The stream's own channel map (`pa_channel_position_t` values), as the app opened it.
    public var channelPositions: [Int32]
    /// Paused by its app (`pa_stream_cork`): it asks its sink for nothing, so it does not keep
    /// the capture awake.
    public var isCorked: Bool

    public init(index: UInt32, ownerModule: UInt32?, clientIndex: UInt32?, sinkIndex: UInt32, isPCM: Bool,
                properties: [String: String], channelPositions: [Int32] = [], isCorked: Bool = false) {
        self.index = index
        self.ownerModule = ownerModule
        self.clientIndex = clientIndex
        self.sinkIndex = sinkIndex
        self.isPCM = isPCM
        self.properties = properties
        self.channelPositions = channelPositions
        self.isCorked = isCorked
    }

    init(_ info: pa_sink_input_info) {
        index = info.index
        ownerModule = info.owner_module == UInt32.max ? nil : info.owner_module
        clientIndex = info.client == UInt32.max ? nil : info.client
        sinkIndex = info.sink
        // A server too old to report a format only has PCM streams.
        isPCM = info.format.map { pa_format_info_is_pcm($0) != 0 } ?? true
        properties = propertyDictionary(info.proplist)
        var map = info.channel_map
        channelPositions = withUnsafeBytes(of: &map.map) { Array($0.bindMemory(to: Int32.self).prefix(Int(map.channels))) }
        isCorked = info.corked != 0
    }
}

/// One sink, as the sweep and the session see it.
struct SinkFacts: Equatable {
    var index: UInt32
    var name: String
    var ownerModule: UInt32?
    var properties: [String: String]
    /// The volume per channel in PulseAudio's units (`PA_VOLUME_NORM` is 0 dB), in the order
    /// of `channelPositions` (`pa_channel_position_t` values), and the mute.
    var channelVolumes: [UInt32]
    var channelPositions: [Int32]
    var isMuted: Bool

    init(_ info: pa_sink_info) {
        index = info.index
        name = info.name.map { String(cString: $0) } ?? ""
        ownerModule = info.owner_module == UInt32.max ? nil : info.owner_module
        properties = propertyDictionary(info.proplist)
        var volume = info.volume, map = info.channel_map
        channelVolumes = withUnsafeBytes(of: &volume.values) { Array($0.bindMemory(to: UInt32.self).prefix(Int(volume.channels))) }
        channelPositions = withUnsafeBytes(of: &map.map) { Array($0.bindMemory(to: Int32.self).prefix(Int(map.channels))) }
        isMuted = info.mute != 0
    }
}

extension CapturedStreamIdentity {
    /// The stream as the server describes it now.
    init(_ facts: SinkInputFacts) {
        self.init(streamIndex: facts.index, properties: facts.properties, channelPositions: facts.channelPositions)
    }
}
