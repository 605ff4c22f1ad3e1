import SceneSoundEngine
import SceneSoundMedia
import SceneSoundProtocol

/// Which speaker each channel of a decoded file feeds: the file's own channel map (libsndfile's
/// SFC_GET_CHANNEL_MAP_INFO) where it declares one, else the standard layout for its count
/// (WAVE order: FL FR FC LFE BL BR SL SR; ChannelLayout.standard).
enum FileChannelLayout {
    static func of(_ audio: DecodedAudio, path: String) throws -> ChannelLayout {
        if let map = audio.channelMap {
            do {
                return try ChannelLayout.parse(map)
            } catch {
                throw RuntimeError("\(path): \(error.description)")
            }
        }
        guard let layout = ChannelLayout.standard(channelCount: audio.channelCount) else {
            throw RuntimeError("\(path): \(audio.channelCount) channels are not supported (accepted: 1 to 8)")
        }
        return layout
    }
}

/// `play -`'s --channel-map: speaker names as paplay and SPEC.md use them (or short), in order.
struct RawChannelMap {
    let channelCount: Int
    /// The protocol's channel map; nil for the standard layout of the count.
    let protocolMap: [ChannelPosition]?

    init(_ text: String) throws(ChannelLayoutError) {
        let layout = try ChannelLayout.parse(text.split(separator: ",", omittingEmptySubsequences: false).map(String.init))
        channelCount = layout.channelCount
        protocolMap = layout == ChannelLayout.standard(channelCount: layout.channelCount)
            ? nil : layout.speakers.map { ChannelPosition(rawValue: UInt8($0.rawValue))! }
    }
}
