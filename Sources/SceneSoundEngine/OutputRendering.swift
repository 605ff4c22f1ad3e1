/// How the mix is rendered for the device that plays it: binaurally for headphones, or panned
/// over loudspeakers (two at ±30°, or a 5.1 / 7.1 set at the ITU-R positions), and the
/// listener's spatial choice for that device (Apple's three: off, fixed, head-tracked). The
/// server chooses it from the sink (docs/BEHAVIOUR.md "Output devices"); the engine renders it.
public struct OutputRendering: Equatable, Sendable, CustomStringConvertible {
    public enum Method: Equatable, Sendable {
        /// Through the HRTF set, as for headphones.
        case binaural
        /// Panned over loudspeakers fixed in the room: no HRTF, no ITD, head poses ignored.
        case speakers(SpeakerLayout)
    }

    /// The listener's choice per device.
    public enum Spatial: String, CaseIterable, Equatable, Sendable {
        /// Plain stereo: every stream as `SpatialMode.off` (bit-exact at unity gain).
        case off
        /// Placed, but head poses ignored (the scene turns with the head).
        case fixed
        /// Placed and turned against the head's pose (binaural only; speakers stay in the room).
        case headTracked = "head-tracked"
    }

    public var method: Method
    public var spatial: Spatial

    public init(method: Method, spatial: Spatial = .headTracked) {
        self.method = method
        self.spatial = spatial
    }

    /// What SceneSound did before it knew the device: binaural and head-tracked.
    public static let headphones = OutputRendering(method: .binaural)

    /// The channels the rendering fills: stereo, or the speaker layout's.
    public var channels: ChannelLayout {
        switch method {
        case .binaural: return .stereo
        case .speakers(let layout): return layout.channels
        }
    }

    public var channelCount: Int { channels.channelCount }

    /// `binaural head-tracked`, `speakers 5.1 fixed`.
    public var description: String {
        switch method {
        case .binaural: return "binaural \(spatial.rawValue)"
        case .speakers(let layout): return "speakers \(layout) \(spatial.rawValue)"
        }
    }
}

/// The loudspeakers a speaker rendering feeds, in the output's channel order (WAVE / SMPTE:
/// FL FR, FL FR FC LFE BL BR, FL FR FC LFE BL BR SL SR), each at its ITU-R azimuth
/// (`ChannelLayout.azimuthDegrees`).
public enum SpeakerLayout: String, CaseIterable, Equatable, Sendable, CustomStringConvertible {
    case stereo = "2.0"
    case surround51 = "5.1"
    case surround71 = "7.1"

    public var channels: ChannelLayout {
        switch self {
        case .stereo: return .stereo
        case .surround51: return .surround51
        case .surround71: return .surround71
        }
    }

    public var channelCount: Int { channels.channelCount }
    public var description: String { rawValue }
}
