import SceneSoundDSP

/// What the renderer does for an `OutputRendering`: the binaural path (for the head's pose or
/// the neutral head), every stream as plain stereo, or the sources panned over speakers.
enum RenderPath: Equatable {
    case binaural(followsHead: Bool)
    case plain
    case speakers(SpeakerLayout)

    init(_ rendering: OutputRendering) {
        switch (rendering.spatial, rendering.method) {
        case (.off, _): self = .plain
        case (let spatial, .binaural): self = .binaural(followsHead: spatial == .headTracked)
        case (_, .speakers(let layout)): self = .speakers(layout)
        }
    }

    var isBinaural: Bool {
        if case .binaural = self { return true }
        return false
    }

    /// Channels it fills, in the WAVE order (2.0, 5.1 and 7.1 each begin with the one before).
    var channelCount: Int {
        if case .speakers(let layout) = self { return layout.channelCount }
        return 2
    }

    /// Whether two paths are one to the listener's ears but for the pose: a change between them
    /// glides the pose instead of crossfading (one set of HRTF voices cannot render twice).
    func sharesVoices(with other: RenderPath) -> Bool {
        self == other || (isBinaural && other.isBinaural)
    }
}

/// A source's state on loudspeakers: per channel its pan gains as last rendered (each output
/// channel's, `maximumChannelCount` apart) and its low-pass (muffling, air absorption).
/// Allocated with the source, off the render thread.
final class SpeakerSourceState {
    let gains: UnsafeMutablePointer<Float>
    let lowpasses: UnsafeMutablePointer<OnePoleLowpass>
    let channelCount: Int
    /// The block it was last rendered in and for how many output channels: a source that
    /// skipped a block (binaural played) or meets another layout starts at its gains, unramped.
    @exclusivity(unchecked) var renderedBlock = -2
    @exclusivity(unchecked) var outputChannelCount = 0

    init(channelCount: Int) {
        self.channelCount = channelCount
        gains = .allocate(capacity: channelCount * ChannelLayout.maximumChannelCount)
        gains.initialize(repeating: 0, count: channelCount * ChannelLayout.maximumChannelCount)
        lowpasses = .allocate(capacity: channelCount)
        lowpasses.initialize(repeating: OnePoleLowpass(), count: channelCount)
    }

    deinit {
        gains.deallocate()
        lowpasses.deinitialize(count: channelCount)
        lowpasses.deallocate()
    }
}

/// The renderer's output rendering, a change of it crossfading, and everything a speaker
/// rendering needs, allocated up front for every layout (at most 8 channels).
final class OutputRenderings {
    @exclusivity(unchecked) var current = OutputRendering.headphones
    @exclusivity(unchecked) var incoming: OutputRendering?
    /// Frames since the change began; the first `prerollFrames` render the incoming path
    /// unheard (binaural voices that sat idle refill their histories), then the shares glide.
    @exclusivity(unchecked) var changeFrames = 0
    @exclusivity(unchecked) var prerollFrames = 0
    let fadeFrames: Int
    /// Blocks rendered (a source's speaker state knows from it whether it missed one).
    @exclusivity(unchecked) var blockIndex = 0

    /// The two renderings' channels (planar, `maximumChannelCount` each), the room's reverb
    /// (left, right), a channel's low-passed input, and one channel's target gains.
    let first: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    let second: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    let reverbLeft: UnsafeMutablePointer<Float>
    let reverbRight: UnsafeMutablePointer<Float>
    let scratch: UnsafeMutablePointer<Float>
    let targetGains: UnsafeMutablePointer<Float>
    let stereo = SpeakerPanner.itu(channelCount: 2)
    let surround51 = SpeakerPanner.itu(channelCount: 6)
    let surround71 = SpeakerPanner.itu(channelCount: 8)
    /// The BS.775 fold-downs of 5.1 and 7.1 to two channels (ChannelLayout.foldDownWeights).
    let foldDown51: ContiguousArray<(left: Float, right: Float)>
    let foldDown71: ContiguousArray<(left: Float, right: Float)>
    private let blockFrames: Int

    /// With a binaural preroll (a voice's ring-out, rounded up to blocks) still within 50 ms.
    static let crossfadeSeconds = 0.03

    init(configuration: EngineConfiguration) {
        blockFrames = configuration.blockFrames
        let channels = ChannelLayout.maximumChannelCount, block = configuration.blockFrames
        func planar() -> UnsafeMutablePointer<UnsafeMutablePointer<Float>> {
            let set = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: channels)
            for c in 0..<channels { set[c] = Self.buffer(block) }
            return set
        }
        first = planar()
        second = planar()
        reverbLeft = Self.buffer(block)
        reverbRight = Self.buffer(block)
        scratch = Self.buffer(block)
        targetGains = Self.buffer(channels)
        foldDown51 = ContiguousArray(ChannelLayout.surround51.foldDownWeights)
        foldDown71 = ContiguousArray(ChannelLayout.surround71.foldDownWeights)
        fadeFrames = max(1, Int((Self.crossfadeSeconds * configuration.sampleRateHz).rounded()))
    }

    private static func buffer(_ count: Int) -> UnsafeMutablePointer<Float> {
        let p = UnsafeMutablePointer<Float>.allocate(capacity: count)
        p.initialize(repeating: 0, count: count)
        return p
    }

    deinit {
        for c in 0..<ChannelLayout.maximumChannelCount { first[c].deallocate(); second[c].deallocate() }
        first.deallocate(); second.deallocate()
        for p in [reverbLeft, reverbRight, scratch, targetGains] { p.deallocate() }
    }

    func panner(_ layout: SpeakerLayout) -> SpeakerPanner {
        switch layout {
        case .stereo: return stereo
        case .surround51: return surround51
        case .surround71: return surround71
        }
    }

    var isChanging: Bool { incoming != nil }
    var rendersBinaural: Bool {
        RenderPath(current).isBinaural || incoming.map { RenderPath($0).isBinaural } == true
    }
    /// The binaural path's pose: the head's, unless the binaural rendering playing is `.fixed`.
    var followsHead: Bool {
        if case .binaural(let follows) = RenderPath(current) { return follows }
        if let incoming, case .binaural(let follows) = RenderPath(incoming) { return follows }
        return false
    }

    /// The incoming rendering's share for the block's frame `n` (smoothstep, as HRTF switches).
    @inline(__always) func share(atFrame n: Int) -> Float {
        let x = min(max(Float(changeFrames - prerollFrames + n + 1) / Float(fadeFrames), 0), 1)
        return x * x * (3 - 2 * x)
    }
}
