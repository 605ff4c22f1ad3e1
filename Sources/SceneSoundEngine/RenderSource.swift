import SceneSoundDSP

/// Where a source's audio comes from. Called on the render thread: implementations must not
/// allocate, lock, log or wait.
public protocol SourceInput: AnyObject {
    /// Fills up to `frames` frames of planar audio (`channels` buffers of `frames` floats) and
    /// returns how many it wrote; the rest of the block is silence.
    func read(into channels: UnsafeMutablePointer<UnsafeMutablePointer<Float>>, frames: Int) -> Int
    /// True once no more audio will come.
    var isFinished: Bool { get }
    /// `read` into `channelCount` channels, also setting each one's sum of squares over the
    /// frames it wrote. An input that copies the samples anyway can measure them as it copies;
    /// by default they are measured after.
    func read(into channels: UnsafeMutablePointer<UnsafeMutablePointer<Float>>, channelCount: Int, frames: Int,
              sumsOfSquares: UnsafeMutablePointer<Float>) -> Int
}

extension SourceInput {
    public func read(into channels: UnsafeMutablePointer<UnsafeMutablePointer<Float>>, channelCount: Int, frames: Int,
                     sumsOfSquares: UnsafeMutablePointer<Float>) -> Int {
        let got = read(into: channels, frames: frames)
        for c in 0..<channelCount { sumsOfSquares[c] = Mixing.sumOfSquares(channels[c], frames: got) }
        return got
    }
}

/// One playing stream as the render thread sees it: its input, placement and voices.
public final class RenderSource {
    public let channelCount: Int
    /// Which speaker each channel feeds (Engine.place puts surround channels around the scene).
    public let layout: ChannelLayout
    /// Channels rendered as voices (or on the bus): all but the LFE.
    public let voiceCount: Int
    /// The LFE's channel index, −1 when there is none.
    let lowFrequencyChannel: Int
    public let input: SourceInput
    @exclusivity(unchecked) public var mode: SpatialMode
    /// Per-channel positions in metres: world coordinates for `.anchored`, head coordinates
    /// for `.headLocked`, ignored for `.off`.
    @exclusivity(unchecked) public var channelPositions: [Vector3]
    @exclusivity(unchecked) public var gain: Float
    /// Extra low-pass cutoff (muffling), on top of air absorption.
    @exclusivity(unchecked) public var lowpassCutoffHz: Double = .infinity
    /// Never moved to the ambisonic bus by the governor (alerts).
    @exclusivity(unchecked) public var isAlert = false
    /// True when the governor put the source on the ambisonic bus (a move crossfades).
    public var isOnBus: Bool { path.onBus }

    /// Its voices on the renderer's stage (HRTF voices, bus voices, bus placements), and while
    /// an HRTF switch crossfades, its voices on the incoming stage too (HRTFSwitch).
    @exclusivity(unchecked) var voices: SourceVoices { didSet { measureHistoryInUse() } }
    @exclusivity(unchecked) var incomingVoices: SourceVoices? { didSet { measureHistoryInUse() } }
    /// Calls `body` with `voices` lent rather than retained (the render thread's per-source
    /// work: a retain and a release per use are atomic operations on an object of its own).
    /// `body` must not replace them (only the end of an HRTF switch does, between blocks).
    @inline(__always)
    func withVoices<Result>(_ body: (SourceVoices) throws -> Result) rethrows -> Result {
        try Unmanaged.passUnretained(voices)._withUnsafeGuaranteedRef(body)
    }
    @exclusivity(unchecked) var path = VoicePathState()
    /// Per channel, the block's input, with `historyFrames` of the previous blocks before it
    /// (the bus voices' delays read it in place).
    let planar: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    let historyFrames: Int
    /// The part of `historyFrames` its bus voices read now (the longest of their delays; while
    /// an HRTF switch crossfades, of both stages'): all `keepHistory` copies. The rest is the
    /// room a set switched to later may need.
    @exclusivity(unchecked) private(set) var historyFramesInUse: Int
    private let maximumFrames: Int
    @exclusivity(unchecked) var appliedGain: Float
    @exclusivity(unchecked) var cullFade: Float = 1
    /// Frames rendered since the cull fade reached silence.
    @exclusivity(unchecked) var culledFrames = 0
    /// Frames of silence rendered since the input finished (to let filters and delays ring out).
    @exclusivity(unchecked) var framesSinceEnd = 0

    /// Per channel, its speaker's rotation about the vertical axis from the stage's front.
    let speakerRotations: ContiguousArray<Quaternion>
    /// Per channel, its weights in the stereo fold-down of `.off` (surround layouts).
    let foldDownWeights: ContiguousArray<(left: Float, right: Float)>
    /// The LFE's low-pass and gain, when the layout has one.
    @exclusivity(unchecked) var lowFrequencyFilter: LowFrequencyEffectsFilter
    /// Its pan gains and low-passes on loudspeakers (SpeakerRendering.swift).
    let speakerState: SpeakerSourceState

    /// `maximumFrames`: the engine's block (its voices render in spans of it). `layout`: the
    /// standard one for the channel count when nil. `hrtf`: the set the renderer renders when
    /// the source is added (its stage's).
    public init(input: SourceInput, channelCount: Int, layout: ChannelLayout? = nil, mode: SpatialMode,
                channelPositions: [Vector3], gain: Float, hrtf: HRTFSet, maximumFrames: Int) {
        precondition(ChannelLayout.channelCountRange.contains(channelCount) && channelPositions.count == channelCount)
        let layout = layout ?? ChannelLayout.standard(channelCount: channelCount)!
        precondition(layout.channelCount == channelCount)
        self.input = input
        self.channelCount = channelCount
        self.layout = layout
        lowFrequencyChannel = layout.lowFrequencyChannel ?? -1
        voiceCount = channelCount - (layout.lowFrequencyChannel == nil ? 0 : 1)
        let up = Vector3(x: 0, y: 1, z: 0)
        speakerRotations = ContiguousArray(layout.speakers.map {
            Quaternion(axis: up, angleRadians: layout.azimuthDegrees(of: $0) * .pi / 180)
        })
        foldDownWeights = ContiguousArray(layout.foldDownWeights)
        lowFrequencyFilter = LowFrequencyEffectsFilter(sampleRateHz: hrtf.sampleRateHz)
        speakerState = SpeakerSourceState(channelCount: channelCount)
        self.mode = mode
        self.channelPositions = channelPositions
        self.gain = gain
        appliedGain = gain
        // History for the longer of the set's delays and a reserve, so that the bus voices of a
        // set switched to later (HRTFSwitch) find theirs too.
        let reserve = Float(Self.reservedDelaySeconds * hrtf.sampleRateHz)
        historyFrames = AmbisonicBusVoice.historyLength(maximumDelaySamples: max(hrtf.maximumDelaySamples, reserve))
        let voices = SourceVoices(hrtf: hrtf, channelCount: channelCount,
                                  maximumDelaySamples: hrtf.maximumDelaySamples, maximumFrames: maximumFrames)
        self.voices = voices
        historyFramesInUse = min(voices.busHistoryFrames, historyFrames)
        self.maximumFrames = maximumFrames
        planar = .allocate(capacity: channelCount)
        for c in 0..<channelCount {
            let buffer = UnsafeMutablePointer<Float>.allocate(capacity: historyFrames + maximumFrames)
            buffer.initialize(repeating: 0, count: historyFrames + maximumFrames)
            planar[c] = buffer + historyFrames
        }
    }

    /// Bus delays every source's history has room for, whatever the set (an onset and the
    /// largest ITD).
    static let reservedDelaySeconds = 0.002

    private func measureHistoryInUse() {
        historyFramesInUse = min(max(voices.busHistoryFrames, incomingVoices?.busHistoryFrames ?? 0), historyFrames)
    }

    deinit {
        for c in 0..<channelCount { (planar[c] - historyFrames).deallocate() }
        planar.deallocate()
    }

    /// Before the next block's input is read: the last `historyFramesInUse` of the one before
    /// (`frames` long) become the history. (Only those: at 1024 sources the whole reserve,
    /// copied every block for every source, was a third to three fifths of what the render had grown
    /// by since the near field; docs/MEASUREMENTS.md.)
    func keepHistory(frames: Int) {
        precondition(frames <= maximumFrames)
        let kept = historyFramesInUse
        for c in 0..<channelCount {
            (planar[c] - kept).update(from: planar[c] + frames - kept, count: kept)
        }
    }

    /// Positions for a stream placed at `position`: mono at the point, stereo as two sources
    /// `spreadDegrees` apart around it (rotated about the listener's vertical axis).
    public static func channelPositions(around position: Vector3, channelCount: Int, spreadDegrees: Double) -> [Vector3] {
        guard channelCount == 2 else { return [position] }
        let pair = stereoPositions(around: position, spreadDegrees: spreadDegrees)
        return [pair.left, pair.right]
    }

    /// Positions for a stream of `layout` placed at `position`: mono and stereo as above,
    /// surround as virtual speakers around it (`placeSpeakers`).
    public static func channelPositions(around position: Vector3, layout: ChannelLayout, spreadDegrees: Double) -> [Vector3] {
        switch layout.placement {
        case .point: return [position]
        case .stereoPair: return channelPositions(around: position, channelCount: 2, spreadDegrees: spreadDegrees)
        case .speakers:
            let up = Vector3(x: 0, y: 1, z: 0)
            return layout.speakers.map {
                Quaternion(axis: up, angleRadians: layout.azimuthDegrees(of: $0) * .pi / 180).rotate(position)
            }
        }
    }

    /// Surround: each channel at its speaker's azimuth from the direction of `position`, at its
    /// distance (the layout turned about the listener's vertical axis so that its front points
    /// at the scene); the LFE at the point itself. Allocation-free (render thread).
    public func placeSpeakers(around position: Vector3) {
        for c in 0..<channelCount { channelPositions[c] = speakerRotations[c].rotate(position) }
    }

    /// A stereo pair `spreadDegrees` apart around `position`, left first; allocation-free, so the
    /// render thread uses it too.
    @inline(__always)
    public static func stereoPositions(around position: Vector3, spreadDegrees: Double) -> (left: Vector3, right: Vector3) {
        let half = spreadDegrees / 2 * .pi / 180
        let up = Vector3(x: 0, y: 1, z: 0)
        return (Quaternion(axis: up, angleRadians: half).rotate(position),
                Quaternion(axis: up, angleRadians: -half).rotate(position))
    }
}

/// A source channel's bus cues for a head-relative direction (SpatialRenderer.busCues).
struct BusCues {
    var delays: (left: Float, right: Float) = (0, 0)
    var earLevels: (left: Float, right: Float) = (1, 1)
}

/// A channel's head-relative direction and its bus cues, with what they were computed from.
struct BusPlacement {
    var position = Vector3(x: 0, y: 0, z: 0)
    var anchored = false
    var headPosition = Vector3(x: 0, y: 0, z: 0)
    var orientation = Quaternion.identity
    var relative = SphericalPosition(azimuthDegrees: 0)
    var cues = BusCues()
    var isValid = false
}
