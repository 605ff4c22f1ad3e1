import SceneSoundDSP
import Synchronization

/// Where a source is rendered, as the governor keeps it on each `RenderSource`.
struct VoicePathState {
    /// Decided by the governor: the source belongs on the ambisonic bus.
    var onBus = false
    /// Placed on a path at all yet (a new source is placed without a crossfade).
    var assigned = false
    /// 0: all on the per-source HRTF voices, 1: all on the bus; glides during a move.
    var busMix: Float = 0
    /// Frames since the voices last had any gain: once past the ring-out they are idle.
    var voiceSilentFrames = 0
    /// The last block's input level (RMS) and the importance computed from it.
    var inputLevel: Float = 0
    var importance: Float = 0
    /// Frames since the source started (recent sounds are more salient).
    var ageFrames = 0
}

/// Chooses, every block, which sources get per-source HRTF voices and which go to the
/// ambisonic bus: alerts always get voices, then the most important sources (level × distance
/// gain, doubled for a second after they start) up to a budget. The budget is the
/// configured cap while the render keeps up; when the measured render time (the render
/// thread's CPU time for the block: preempted, it did no more work) passes
/// `overloadLoadFraction` of the block's duration it drops by a quarter of the voices, and
/// once the load falls below `recoveryLoadFraction` it grows back an eighth at a time —
/// each step after the previous moves' crossfades have finished, since a crossfade renders
/// both paths and would otherwise read as more overload.
///
/// Runs on the render thread inside `SpatialRenderer.render`: O(sources) per move, no
/// allocation. The counters are atomics for the server's status.
public final class OverloadGovernor {
    public struct Settings: Sendable {
        /// The cap on per-source HRTF voices (a stereo source has two); alerts are never
        /// refused one.
        public var maximumHRTFVoices: Int
        public var overloadLoadFraction: Double
        public var recoveryLoadFraction: Double
        /// How long a move between the paths crossfades (long enough that the change of
        /// timbre between the paths glides instead of clicking on a pure tone).
        public var crossfadeSeconds: Double
        /// Moves started per block, so that a burst of crossfades does not itself overload.
        public var maximumMovesPerBlock: Int

        public init(maximumHRTFVoices: Int = 16, overloadLoadFraction: Double = 0.7, recoveryLoadFraction: Double = 0.4,
                    crossfadeSeconds: Double = 0.05, maximumMovesPerBlock: Int = 8) {
            self.maximumHRTFVoices = maximumHRTFVoices
            self.overloadLoadFraction = overloadLoadFraction
            self.recoveryLoadFraction = recoveryLoadFraction
            self.crossfadeSeconds = crossfadeSeconds
            self.maximumMovesPerBlock = maximumMovesPerBlock
        }
    }

    @exclusivity(unchecked) public var settings: Settings
    /// When set, used instead of the measured render time (tests, overload drills, offline
    /// renders, whose speed says nothing about real time).
    @exclusivity(unchecked) public var simulatedLoadFraction: Double?
    /// The current budget of non-alert HRTF voices (≤ the cap).
    @exclusivity(unchecked) public private(set) var budgetVoices: Int
    /// The render time over the block's duration, smoothed: quick to rise, slow to fall.
    @exclusivity(unchecked) public private(set) var smoothedLoadFraction = 0.0
    @exclusivity(unchecked) private var cooldownBlocks = 0
    @exclusivity(unchecked) private var cooldownLength = 1

    // Status, read from other threads.
    private let hrtfVoices = Atomic<Int>(0)
    private let busVoices = Atomic<Int>(0)
    private let movesToBus = Atomic<Int>(0)
    private let movesToHRTF = Atomic<Int>(0)

    public init(settings: Settings = Settings()) {
        self.settings = settings
        budgetVoices = settings.maximumHRTFVoices
    }

    public var hrtfVoiceCount: Int { hrtfVoices.load(ordering: .relaxed) }
    public var busVoiceCount: Int { busVoices.load(ordering: .relaxed) }
    /// Moves the governor made (for overload, the cap or importance), since start.
    public var movesToBusCount: Int { movesToBus.load(ordering: .relaxed) }
    public var movesToHRTFCount: Int { movesToHRTF.load(ordering: .relaxed) }

    /// Feeds the last block's render time.
    func observe(renderSeconds: Double, blockSeconds: Double) {
        let load = renderSeconds / blockSeconds
        let rate = load > smoothedLoadFraction ? 0.5 : 0.05
        smoothedLoadFraction += rate * (load - smoothedLoadFraction)
    }

    /// Decides the paths for this block. `listener` is the head's position (distance gains).
    func plan(_ sources: ContiguousArray<RenderSource>, listener: Vector3, distanceModel: DistanceModel,
              blockFrames: Int, sampleRateHz: Double) {
        cooldownLength = max(1, Int((settings.crossfadeSeconds * sampleRateHz / Double(blockFrames)).rounded(.up)) + 1)
        let cap = max(0, settings.maximumHRTFVoices)
        budgetVoices = min(budgetVoices, cap)
        var voicesOnHRTF = 0  // non-alert
        var hrtf = 0, bus = 0
        // The weakest voice and the strongest bus source, found again only after a move.
        var found = Extremes()
        sources.forEachUnretained { source in
            guard source.mode != .off else { return }
            source.path.importance = importance(of: source, listener: listener, distanceModel: distanceModel,
                                                sampleRateHz: sampleRateHz)
            if !source.path.assigned {
                // A new source starts on its path at once, without a crossfade.
                let voice = source.isAlert || voicesOnHRTF + source.voiceCount <= budgetVoices
                source.path = VoicePathState(onBus: !voice, assigned: true, busMix: voice ? 0 : 1,
                                             voiceSilentFrames: voice ? 0 : .max / 2,
                                             inputLevel: source.path.inputLevel, importance: source.path.importance,
                                             ageFrames: source.path.ageFrames)
            }
            if source.isAlert && source.path.onBus { move(source, toBus: false) }  // alerts: always voices
            if source.path.onBus { bus += source.voiceCount } else { hrtf += source.voiceCount }
            if !source.isAlert && !source.path.onBus { voicesOnHRTF += source.voiceCount }
            found.consider(source)
        }
        var (weakest, strongest) = (found.weakestVoice, found.strongestOnBus)
        movedVoices = 0  // the alerts above are already counted where they now are

        let load = simulatedLoadFraction ?? smoothedLoadFraction
        if cooldownBlocks > 0 {
            cooldownBlocks -= 1
        } else if load > settings.overloadLoadFraction {
            let cut = max(1, voicesOnHRTF / 4)
            budgetVoices = max(0, min(budgetVoices, voicesOnHRTF) - cut)
            cooldownBlocks = cooldownLength
        } else if load < settings.recoveryLoadFraction && budgetVoices < cap {
            budgetVoices = min(cap, budgetVoices + max(1, budgetVoices / 8))
            cooldownBlocks = cooldownLength
        }

        var moves = 0
        while voicesOnHRTF > budgetVoices && moves < settings.maximumMovesPerBlock, let voice = weakest {
            move(voice, toBus: true)
            voicesOnHRTF -= voice.voiceCount
            moves += 1
            (weakest, strongest) = extremes(sources)
        }
        while moves < settings.maximumMovesPerBlock, let bussed = strongest,
              voicesOnHRTF + bussed.voiceCount <= budgetVoices {
            move(bussed, toBus: false)
            voicesOnHRTF += bussed.voiceCount
            moves += 1
            (weakest, strongest) = extremes(sources)
        }
        // A full budget: swap when a bus source has become clearly more important (the
        // voices' own importance already carries a 1.5× bonus against flapping).
        if moves + 2 <= settings.maximumMovesPerBlock, let bussed = strongest, let voice = weakest,
           bussed.path.importance > voice.path.importance,
           voicesOnHRTF - voice.voiceCount + bussed.voiceCount <= budgetVoices {
            move(voice, toBus: true)
            move(bussed, toBus: false)
        }
        // Moves only swap sources between the paths: the totals change by what moved.
        let moved = movedVoices
        movedVoices = 0
        hrtfVoices.store(hrtf - moved, ordering: .relaxed)
        busVoices.store(bus + moved, ordering: .relaxed)
    }

    /// Voices moved to the bus (less those moved back) since the totals were taken.
    @exclusivity(unchecked) private var movedVoices = 0

    private func move(_ source: RenderSource, toBus: Bool) {
        movedVoices += toBus ? source.voiceCount : -source.voiceCount
        source.path.onBus = toBus
        if toBus { movesToBus.add(1, ordering: .relaxed) } else { movesToHRTF.add(1, ordering: .relaxed) }
    }

    private func importance(of source: RenderSource, listener: Vector3, distanceModel: DistanceModel,
                            sampleRateHz: Double) -> Float {
        let position = source.channelPositions[0]
        let distance = source.mode == .anchored ? (position - listener).length : position.length
        var value = source.path.inputLevel * source.gain * source.cullFade
            * Float(distanceModel.gain(distanceMetres: distance))
        if Double(source.path.ageFrames) < sampleRateHz { value *= 2 }
        if !source.path.onBus { value *= 1.5 }
        return value
    }

    private func extremes(_ sources: ContiguousArray<RenderSource>) -> (RenderSource?, RenderSource?) {
        var found = Extremes()
        sources.forEachUnretained { source in if source.mode != .off { found.consider(source) } }
        return (found.weakestVoice, found.strongestOnBus)
    }

    /// The least important voice the governor may move (not an alert) and the most important
    /// source on the bus, among the sources considered.
    private struct Extremes {
        var weakestVoice: RenderSource?, strongestOnBus: RenderSource?
        private var weakest = Float.infinity, strongest = -Float.infinity

        mutating func consider(_ source: RenderSource) {
            let importance = source.path.importance
            if source.path.onBus {
                if importance > strongest { strongestOnBus = source; strongest = importance }
            } else if !source.isAlert && importance < weakest {
                weakestVoice = source
                weakest = importance
            }
        }
    }
}
