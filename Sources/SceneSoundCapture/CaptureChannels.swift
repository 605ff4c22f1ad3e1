import CPulse

/// Which channels of the capture sink a stream is recorded from. The sink offers 7.1 so that
/// games choose surround; both servers remap every stream to it, and a stream's own recording
/// (a direct monitor) is taken after that remap: a stereo app arrives with its left and right
/// in FL and FR, sample for sample, and fake surround (made from them) in the other six; a
/// 5.1 app arrives with its six channels in place and the two it lacks filled in from its
/// neighbours. So a stream of one or two channels is recorded as FL and FR alone, not
/// remixed (`PA_STREAM_NO_REMIX_CHANNELS`: both servers then copy those two and drop the
/// rest), as before the sink was 7.1; a surround stream as all eight channels as the sink has
/// them (no remap on the way out), of which its own are kept, in its own order. (Eight
/// channels for every stream would do as well, but on pipewire-pulse an 8-channel direct
/// monitor took 76-116 ms to start: a short event sound ended first.)
public struct CaptureChannels: Equatable, Sendable {
    /// The capture sink's channels, in the order it is loaded with (the WAVE/SMPTE order).
    public static let sinkChannelNames = [
        "front-left", "front-right", "front-center", "lfe", "rear-left", "rear-right", "side-left", "side-right",
    ]
    static let sinkPositions: [pa_channel_position_t] = [
        PA_CHANNEL_POSITION_FRONT_LEFT, PA_CHANNEL_POSITION_FRONT_RIGHT, PA_CHANNEL_POSITION_FRONT_CENTER,
        PA_CHANNEL_POSITION_LFE, PA_CHANNEL_POSITION_REAR_LEFT, PA_CHANNEL_POSITION_REAR_RIGHT,
        PA_CHANNEL_POSITION_SIDE_LEFT, PA_CHANNEL_POSITION_SIDE_RIGHT,
    ]
    public static var sinkChannelCount: Int { sinkChannelNames.count }

    /// Per channel handed on, its index in the sink's channels.
    public let sinkIndexes: [Int]
    /// PulseAudio's names of the channels handed on, in their order.
    public var channelNames: [String] { sinkIndexes.map { Self.sinkChannelNames[$0] } }
    public var channelCount: Int { sinkIndexes.count }
    public var isStereo: Bool { sinkIndexes == [0, 1] }

    public static let stereo = CaptureChannels(sinkIndexes: [0, 1])
    public static let all = CaptureChannels(sinkIndexes: Array(0 ..< sinkChannelCount))

    init(sinkIndexes: [Int]) { self.sinkIndexes = sinkIndexes }

    /// For a stream of these channel positions (`pa_channel_position_t` raw values, the
    /// stream's own map): one or two channels are taken in stereo; three to eight with their
    /// own positions when the sink has each (`front-left`…`side-right`, `rear-*` being
    /// WAVE's back), else as the sink's whole 7.1 (the server's remap of an unusual layout).
    public static func forStream(positions: [Int32]) -> CaptureChannels {
        guard positions.count > 2 else { return .stereo }
        var indexes: [Int] = []
        for position in positions {
            guard let index = sinkPositions.firstIndex(where: { Int32($0.rawValue) == position }),
                  !indexes.contains(index) else { return .all }
            indexes.append(index)
        }
        return CaptureChannels(sinkIndexes: indexes)
    }

    /// The recordings' sample spec's channel map: the sink's own, so the server remaps nothing.
    static func sinkChannelMap() -> pa_channel_map {
        var map = pa_channel_map()
        map.channels = UInt8(sinkChannelCount)
        withUnsafeMutableBytes(of: &map.map) { raw in
            let positions = raw.bindMemory(to: pa_channel_position_t.self)
            for (index, position) in sinkPositions.enumerated() { positions[index] = position }
        }
        return map
    }
}

/// Takes a stream's channels out of recordings of the sink's eight, into a buffer allocated
/// once (it runs on libpipewire's real-time data thread too: it never allocates).
final class ChannelPicker {
    let channels: CaptureChannels
    private let scratch: UnsafeMutableBufferPointer<Float>
    private let scratchFrames = 1024

    init(_ channels: CaptureChannels) {
        self.channels = channels
        scratch = .allocate(capacity: scratchFrames * channels.channelCount)
        scratch.initialize(repeating: 0)
    }

    deinit { scratch.deallocate() }

    /// `recorded`: interleaved frames of the sink's channels; `deliver` receives the stream's
    /// channels, interleaved, a part at a time.
    func pick(_ recorded: UnsafeBufferPointer<Float>, deliver: (UnsafeBufferPointer<Float>) -> Void) {
        let width = CaptureChannels.sinkChannelCount, count = channels.channelCount
        let frames = recorded.count / width
        var done = 0
        while done < frames {
            let part = min(scratchFrames, frames - done)
            for frame in 0 ..< part {
                let from = (done + frame) * width, to = frame * count
                for (channel, index) in channels.sinkIndexes.enumerated() { scratch[to + channel] = recorded[from + index] }
            }
            deliver(UnsafeBufferPointer(rebasing: scratch[0 ..< part * count]))
            done += part
        }
    }
}
