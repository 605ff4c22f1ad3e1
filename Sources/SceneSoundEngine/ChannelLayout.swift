/// Which loudspeaker each channel of a stream feeds: mono, stereo, or surround up to 7.1, in
/// the WAVE / SMPTE order (FL FR FC LFE BL BR SL SR). Surround channels are rendered as virtual
/// speakers at the ITU-R BS.775 / BS.2051 azimuths around the stream's scene
/// (docs/BEHAVIOUR.md "Surround").
public struct ChannelLayout: Equatable, Sendable, CustomStringConvertible {
    /// A loudspeaker of the WAVE / SMPTE order (the raw value is its place in that order).
    public enum Speaker: Int, CaseIterable, Sendable {
        case frontLeft, frontRight, frontCenter, lowFrequency, backLeft, backRight, sideLeft, sideRight

        /// The short name (as in SMPTE and WAVE_FORMAT_EXTENSIBLE).
        public var abbreviation: String {
            ["FL", "FR", "FC", "LFE", "BL", "BR", "SL", "SR"][rawValue]
        }
        /// PulseAudio's name for it (`paplay --channel-map`, libsndfile's maps).
        public var pulseName: String {
            ["front-left", "front-right", "front-center", "lfe", "rear-left", "rear-right", "side-left", "side-right"][rawValue]
        }

        /// By its short name or PulseAudio's (case-insensitive); nil for any other name.
        public init?(name: String) {
            let lowered = name.lowercased()
            let aliases = ["rl": Speaker.backLeft, "rr": .backRight, "back-left": .backLeft, "back-right": .backRight,
                           "front-centre": .frontCenter, "c": .frontCenter, "l": .frontLeft, "r": .frontRight,
                           "ls": .backLeft, "rs": .backRight, "lfe1": .lowFrequency, "subwoofer": .lowFrequency]
            if let speaker = Speaker.allCases.first(where: { $0.abbreviation.lowercased() == lowered || $0.pulseName == lowered }) {
                self = speaker
            } else if let speaker = aliases[lowered] {
                self = speaker
            } else {
                return nil
            }
        }
    }

    public static let maximumChannelCount = 8
    public static let channelCountRange = 1...maximumChannelCount

    /// Per channel, its speaker (mono: `[.frontCenter]`).
    public let speakers: [Speaker]
    /// How the engine places the channels (stored: the render thread reads it every block).
    public let placement: Placement

    /// Any set of distinct speakers, 1 to 8, in the stream's channel order.
    public init?(speakers: [Speaker]) {
        guard Self.channelCountRange.contains(speakers.count), Set(speakers).count == speakers.count else { return nil }
        self.init(checked: speakers)
    }

    public static let mono = ChannelLayout(checked: [.frontCenter])
    public static let stereo = ChannelLayout(checked: [.frontLeft, .frontRight])
    public static let surround30 = ChannelLayout(checked: [.frontLeft, .frontRight, .frontCenter])
    public static let quad = ChannelLayout(checked: [.frontLeft, .frontRight, .backLeft, .backRight])
    public static let surround50 = ChannelLayout(checked: [.frontLeft, .frontRight, .frontCenter, .backLeft, .backRight])
    public static let surround51 = ChannelLayout(checked: [.frontLeft, .frontRight, .frontCenter, .lowFrequency,
                                                           .backLeft, .backRight])
    public static let surround70 = ChannelLayout(checked: [.frontLeft, .frontRight, .frontCenter, .backLeft, .backRight,
                                                           .sideLeft, .sideRight])
    public static let surround71 = ChannelLayout(checked: [.frontLeft, .frontRight, .frontCenter, .lowFrequency,
                                                           .backLeft, .backRight, .sideLeft, .sideRight])

    private init(checked speakers: [Speaker]) {
        self.speakers = speakers
        if speakers.count == 1 && speakers[0] != .lowFrequency {
            placement = .point
        } else if speakers == [.frontLeft, .frontRight] {
            placement = .stereoPair
        } else {
            placement = .speakers
        }
    }

    /// The layout a stream or file of `channelCount` channels has when it names none:
    /// 1 mono, 2 stereo, 3 3.0, 4 quad, 5 5.0, 6 5.1, 7 7.0, 8 7.1.
    public static func standard(channelCount: Int) -> ChannelLayout? {
        guard channelCountRange.contains(channelCount) else { return nil }
        return [mono, stereo, surround30, quad, surround50, surround51, surround70, surround71][channelCount - 1]
    }

    /// From speaker names (`FL,FR,FC,LFE,BL,BR` or PulseAudio's `front-left,…`); a one-line
    /// error naming the bad name and the accepted ones otherwise. "mono" alone is mono.
    public static func parse(_ names: [String]) throws(ChannelLayoutError) -> ChannelLayout {
        if names.count == 1 && names[0].lowercased() == "mono" { return .mono }
        var speakers: [Speaker] = []
        for name in names {
            guard let speaker = Speaker(name: name.trimmingWhitespace) else { throw .unknownSpeaker(name) }
            guard !speakers.contains(speaker) else { throw .repeatedSpeaker(name) }
            speakers.append(speaker)
        }
        guard let layout = ChannelLayout(speakers: speakers) else { throw .count(names.count) }
        return layout
    }

    public var channelCount: Int { speakers.count }

    /// How the engine places the channels: mono at the scene, stereo as a pair around it (or
    /// across its window), anything else as virtual speakers.
    public enum Placement: Sendable { case point, stereoPair, speakers }

    /// The channel index of the LFE, if the layout has one.
    public var lowFrequencyChannel: Int? { speakers.firstIndex(of: .lowFrequency) }

    /// A speaker's azimuth in degrees (SOFA: counter-clockwise, +90 = left) relative to the
    /// front of the stage, as ITU-R BS.775 (5.1: surrounds at ±110°) and BS.2051 (0+7+0: sides
    /// at ±90°, backs at ±135°) place them: a layout with one pair of surrounds (back or side)
    /// has it at ±110°, one with both pairs has the sides at ±90° and the backs at ±135°.
    /// The LFE has no direction (0).
    public func azimuthDegrees(of speaker: Speaker) -> Double {
        let bothPairs = speakers.contains(where: { $0 == .sideLeft || $0 == .sideRight })
            && speakers.contains(where: { $0 == .backLeft || $0 == .backRight })
        switch speaker {
        case .frontLeft: return 30
        case .frontRight: return -30
        case .frontCenter, .lowFrequency: return 0
        case .backLeft: return bothPairs ? 135 : 110
        case .backRight: return bothPairs ? -135 : -110
        case .sideLeft: return bothPairs ? 90 : 110
        case .sideRight: return bothPairs ? -90 : -110
        }
    }

    /// Per channel, its weight in the left and right of the ITU-R BS.775 stereo fold-down
    /// (Lo = L + 0.707·C + 0.707·Ls, Ro = R + 0.707·C + 0.707·Rs; every surround of a side at
    /// 0.707; the LFE left out), divided by the larger sum of weights so that channels at full
    /// scale together cannot overload (the normalization FFmpeg's resampler applies).
    public var foldDownWeights: [(left: Float, right: Float)] {
        let h: Float = 0.707_106_77
        let raw: [(left: Float, right: Float)] = speakers.map { speaker in
            switch speaker {
            case .frontLeft: return (1, 0)
            case .frontRight: return (0, 1)
            case .frontCenter: return (h, h)
            case .lowFrequency: return (0, 0)
            case .backLeft, .sideLeft: return (h, 0)
            case .backRight, .sideRight: return (0, h)
            }
        }
        let sum = max(raw.reduce(0) { $0 + $1.left }, raw.reduce(0) { $0 + $1.right }, 1)
        return raw.map { ($0.left / sum, $0.right / sum) }
    }

    /// `FL FR FC LFE BL BR`.
    public var description: String { speakers.map(\.abbreviation).joined(separator: " ") }

    /// The names accepted for speakers, for error messages.
    public static let acceptedNames = Speaker.allCases.map { "\($0.abbreviation) (\($0.pulseName))" }.joined(separator: ", ")
}

public enum ChannelLayoutError: Error, Equatable, CustomStringConvertible {
    case unknownSpeaker(String)
    case repeatedSpeaker(String)
    case count(Int)

    public var description: String {
        switch self {
        case .unknownSpeaker(let name):
            return "channel '\(name)' is not supported (accepted: \(ChannelLayout.acceptedNames), or mono)"
        case .repeatedSpeaker(let name):
            return "channel '\(name)' appears twice in the channel map"
        case .count(let count):
            return "a channel map of \(count) channels is not supported (accepted: 1 to \(ChannelLayout.maximumChannelCount))"
        }
    }
}

extension String {
    fileprivate var trimmingWhitespace: String {
        var s = Substring(self)
        while s.first?.isWhitespace == true { s.removeFirst() }
        while s.last?.isWhitespace == true { s.removeLast() }
        return String(s)
    }
}
