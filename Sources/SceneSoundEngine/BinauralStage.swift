import SceneSoundDSP

/// The renderer's state for one HRTF set: the set, the voices' shared spectral mix (the set's
/// filter spectra), the ambisonic bus with its decoder. Built off the render thread (a few
/// milliseconds and a few MB); a live switch (`HRTFSwitch`) renders the old and the new stage
/// side by side for a crossfade, then hands the old one back to be freed off the render thread.
public final class BinauralStage {
    public let hrtf: HRTFSet
    /// Every HRTF voice's convolution, summed in the frequency domain and transformed back once.
    public let voiceMix: SpectralVoiceMix
    let busDecoder: AmbisonicDecodeFilters
    /// Sources the governor does not give per-source voices are encoded here.
    public let bus: AmbisonicBus
    /// Frames a source keeps rendering after its input ends, so filters and delays ring out.
    public let ringOutFrames: Int
    /// What the room's reverb is heard through (DiffuseFieldResponse), with a room.
    let diffuseField: [Float]?

    /// `busFilters`: the bus decoder designed from `hrtf` (designed here when nil);
    /// `diffuseField`: the room's `DiffuseFieldResponse.filter(of: hrtf)` (likewise).
    public init(hrtf: HRTFSet, configuration: EngineConfiguration, busFilters: AmbisonicDecodeFilters? = nil,
                diffuseField: [Float]? = nil) {
        precondition(hrtf.sampleRateHz == configuration.sampleRateHz, "the HRTF set must be prepared at the output rate")
        self.hrtf = hrtf
        voiceMix = SpectralVoiceMix(hrtf: hrtf, partitionFrames: configuration.voiceSpanFrames, kernels: .fastest)
        busDecoder = busFilters ?? AmbisonicDecodeFilters.design(from: hrtf)
        bus = AmbisonicBus(filters: busDecoder, maximumFrames: configuration.blockFrames,
                           maximumTerms: SpatialRenderer.busTermsPerSum, kernels: .fastest)
        ringOutFrames = hrtf.filterTaps + Int(hrtf.maximumDelaySamples.rounded(.up)) + 4
        self.diffuseField = configuration.room == .none ? nil : diffuseField ?? DiffuseFieldResponse.filter(of: hrtf)
    }

    /// A source's voices on this stage, for a source whose input keeps `historyFrames` before
    /// each block (the bus voices' delays read it in place: a longer delay than that history
    /// allows is held at its end).
    public func makeVoices(channelCount: Int, historyFrames: Int, maximumFrames: Int) -> SourceVoices {
        SourceVoices(hrtf: hrtf, channelCount: channelCount,
                     maximumDelaySamples: min(hrtf.maximumDelaySamples, Float(historyFrames - 1)),
                     maximumFrames: maximumFrames)
    }
}

/// One source's per-channel voices on one stage: its HRTF voices, its bus voices and where the
/// bus last placed each channel (the placement's cues are the stage's).
public final class SourceVoices {
    let voices: ContiguousArray<BinauralVoice>
    let busVoices: ContiguousArray<AmbisonicBusVoice>
    let busPlacements: UnsafeMutablePointer<BusPlacement>
    /// The input history its bus voices' delays read (`AmbisonicBusVoice.historyLength`).
    let busHistoryFrames: Int
    private let channelCount: Int

    /// Voices for `hrtf`: they render only into a stage of that set (SpectralVoiceMix checks).
    init(hrtf: HRTFSet, channelCount: Int, maximumDelaySamples: Float, maximumFrames: Int) {
        self.channelCount = channelCount
        let span = EngineConfiguration.voiceSpanFrames(blockFrames: maximumFrames)
        voices = ContiguousArray((0..<channelCount).map { _ in BinauralVoice(hrtf: hrtf, partitionFrames: span) })
        busVoices = ContiguousArray((0..<channelCount).map { _ in
            AmbisonicBusVoice(maximumDelaySamples: maximumDelaySamples, maximumFrames: maximumFrames)
        })
        busHistoryFrames = AmbisonicBusVoice.historyLength(maximumDelaySamples: maximumDelaySamples)
        busPlacements = .allocate(capacity: channelCount)
        busPlacements.initialize(repeating: BusPlacement(), count: channelCount)
    }

    deinit {
        busPlacements.deinitialize(count: channelCount)
        busPlacements.deallocate()
    }
}

/// A live change of HRTF set, built off the render thread: the new stage and, for every
/// stream the engine holds or will hold before this command, its voices on that stage. The
/// render thread renders both stages for `SpatialRenderer.hrtfCrossfadeSeconds` (after one
/// silent pass that fills the new voices' histories) and mixes them with complementary smoothstep
/// gains: the two renders are of the same sources, correlated, so amplitudes add. It then
/// moves the old stage and each source's old voices in here and hands this back
/// (`EngineEvent.retiredHRTF`), to be freed off the render thread.
public final class HRTFSwitch {
    public let stage: BinauralStage
    let incoming: ContiguousArray<(source: RenderSource, voices: SourceVoices)>
    /// Filled by the render thread when the switch ends: what it no longer uses.
    public private(set) var retiredStage: BinauralStage?
    private let retiredVoices: UnsafeMutablePointer<SourceVoices?>

    /// `streams`: every stream added to the engine and not yet handed back, and those whose
    /// `addStream` is queued before this switch.
    public init(stage: BinauralStage, streams: [EngineStream], blockFrames: Int) {
        self.stage = stage
        incoming = ContiguousArray(streams.map { stream in
            (stream.source, stage.makeVoices(channelCount: stream.source.channelCount,
                                             historyFrames: stream.source.historyFrames, maximumFrames: blockFrames))
        })
        retiredVoices = .allocate(capacity: max(1, streams.count))
        retiredVoices.initialize(repeating: nil, count: max(1, streams.count))
    }

    deinit {
        retiredVoices.deinitialize(count: max(1, incoming.count))
        retiredVoices.deallocate()
    }

    /// Render thread, at the start: each source gets its voices on the new stage beside its own.
    func attach() {
        for i in 0..<incoming.count { incoming[i].source.incomingVoices = incoming[i].voices }
    }

    /// Render thread, at the end: each source renders on its new voices alone; its old ones,
    /// and the old stage, are kept here (released with this object, off the render thread).
    func detach(retiring stage: BinauralStage) {
        retiredStage = stage
        for i in 0..<incoming.count {
            let source = incoming[i].source
            guard let next = source.incomingVoices else { continue }
            retiredVoices[i] = source.voices  // the old voices' last reference is now this one
            source.voices = next
            source.incomingVoices = nil
        }
    }
}
