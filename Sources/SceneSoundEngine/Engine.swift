import CCPUFeatures
import SceneSoundDSP
import Synchronization

#if canImport(Glibc)
import Glibc
#endif
import SceneSoundPlatform

/// The real-time engine: the render core plus the server's streams and scenes, fed by a
/// lock-free command queue and reporting through an event queue. `render(into:)` is called by
/// the output backend's thread once per block; it never allocates, locks, logs or waits.
public final class Engine: @unchecked Sendable {
    public let configuration: EngineConfiguration
    public let hrtf: HRTFSet
    public let renderer: SpatialRenderer
    public let commands: SPSCQueue<EngineCommand>
    public let events: SPSCQueue<EngineEvent>
    public let maximumStreams: Int
    public let maximumScenes: Int
    /// Where an unknown scene sounds: straight ahead at the screen.
    public let defaultScenePosition: Vector3

    @exclusivity(unchecked) private var streams: ContiguousArray<EngineStream>
    @exclusivity(unchecked) private var duck = AlertDuckEnvelope()
    private let scenes: UnsafeMutablePointer<SceneState>

    // Counters read by the server (status); written only here.
    private let outputFrames = Atomic<Int>(0)
    private let loadPermille = Atomic<Int>(0)
    private let peakLoadPermille = Atomic<Int>(0)
    /// Events that found the queue full: none, since every event waits in the engine until
    /// there is room (a count here is a bug, shown in status).
    private let droppedEvents = Atomic<Int>(0)
    /// Set by the backend after it handed a block to the device (or file).
    private let deliveredFrames = Atomic<Int>(0)
    /// When the newest head pose took effect: the first output frame rendered with it, and
    /// the monotonic time it was picked up (for motion-to-sound latency).
    private let poseAppliedFrame = Atomic<Int>(-1)
    private let poseAppliedNanoseconds = Atomic<Int>(0)
    /// Output frames rendered since anything last sounded (see `isQuiet`), and the server's
    /// request to count again from zero (it woke the output for new work).
    private let quietFrames = Atomic<Int>(0)
    private let activityRequested = Atomic<Bool>(false)

    /// A mix below −90 dBFS is silence (the reverb's and limiter's tails end there).
    static let quietPeak: Float = 3.1623e-5

    struct SceneState {
        var position: Vector3
        var widthMetres: Double
        var lowpassCutoffHz: Double
        var gain: Float
        /// Where muffling is heading: gain and cutoff glide there over tens of milliseconds
        /// (a minimized window fades into the background instead of switching).
        var targetLowpassCutoffHz: Double = .infinity
        var targetGain: Float = 1
    }

    /// Full-scale gain change per second, and cutoff change in octaves per second: −12 dB
    /// takes about 25 ms, a cutoff from open down to 800 Hz about 30 ms.
    static let sceneGainRatePerSecond: Float = 30
    static let sceneCutoffOctavesPerSecond = 160.0

    /// `busFilters`: the bus decoder designed from `hrtf`, designed here when nil (a tenth of a
    /// second); tests that build many engines over one set pass one design to all, programs
    /// the one cached on disk (AmbisonicDecoderCache). `eventQueueCapacity`: tests make it small
    /// to fill it.
    public init(hrtf: HRTFSet, configuration: EngineConfiguration, maximumStreams: Int = 1024,
                maximumScenes: Int = 1024, listenerDistanceMetres: Double = 0.6,
                busFilters: AmbisonicDecodeFilters? = nil, eventQueueCapacity: Int = 8192) {
        self.hrtf = hrtf
        self.configuration = configuration
        self.maximumStreams = maximumStreams
        self.maximumScenes = maximumScenes
        renderer = SpatialRenderer(hrtf: hrtf, configuration: configuration, maximumSources: maximumStreams,
                                   busFilters: busFilters)
        commands = SPSCQueue(capacity: 8192)
        events = SPSCQueue(capacity: eventQueueCapacity)
        streams = []
        streams.reserveCapacity(maximumStreams)
        defaultScenePosition = Vector3(x: 0, y: 0, z: -listenerDistanceMetres)
        scenes = .allocate(capacity: maximumScenes)
        scenes.initialize(repeating: SceneState(position: defaultScenePosition, widthMetres: 0,
                                                lowpassCutoffHz: .infinity, gain: 1),
                          count: maximumScenes)
    }

    deinit {
        scenes.deinitialize(count: maximumScenes)
        scenes.deallocate()
    }

    // MARK: Read from other threads

    /// Output frames rendered so far.
    public var renderedFrames: Int { outputFrames.load(ordering: .acquiring) }
    /// Output frames the backend has delivered so far.
    public var deliveredFrameCount: Int { deliveredFrames.load(ordering: .acquiring) }
    /// Render time of the last block over its duration, and the peak since the last call.
    public var renderLoad: Double { Double(loadPermille.load(ordering: .relaxed)) / 1000 }
    public func takePeakRenderLoad() -> Double {
        Double(peakLoadPermille.exchange(0, ordering: .relaxed)) / 1000
    }
    public var droppedEventCount: Int { droppedEvents.load(ordering: .relaxed) }
    /// The output frame from which the newest pose is rendered (−1: none yet), and when
    /// (CLOCK_MONOTONIC nanoseconds) the render thread picked it up.
    public var headPoseApplied: (outputFrame: Int, monotonicNanoseconds: Int) {
        (poseAppliedFrame.load(ordering: .acquiring), poseAppliedNanoseconds.load(ordering: .relaxed))
    }

    /// Nothing has sounded for `configuration.restAfterSeconds`: every stream's ring empty, no drain
    /// pending, the mix (reverb and limiter tails included) below −90 dBFS, and no activity
    /// requested since. The server then lets the output rest.
    public var isQuiet: Bool {
        guard !activityRequested.load(ordering: .acquiring) else { return false }
        return Double(quietFrames.load(ordering: .acquiring)) >= configuration.restAfterSeconds * configuration.sampleRateHz
    }

    /// Server: new work is on its way (the output is being woken); `isQuiet` stays false until
    /// the render thread has rendered again and counts from zero.
    public func requestActivity() { activityRequested.store(true, ordering: .releasing) }

    /// Backend: the block ending at output frame `frame` has been handed to the device.
    public func markDelivered(throughFrame frame: Int) { deliveredFrames.store(frame, ordering: .releasing) }

    /// Backend: its buffer grew by `frames`, which it is about to render ahead at once (PulseAudio
    /// asks for the difference as soon as the buffer is set). Streams whose audio comes at the
    /// sound server's pace, not ahead (captured apps), give them as a stretch rather than out of
    /// their queues (`RingInput.stretch`). Any thread; no lock.
    public func stretchStreamsArrivingInRealTime(byFrames frames: Int) {
        if frames > 0 { stretchRequestedFrames.add(frames, ordering: .relaxed) }
    }
    private let stretchRequestedFrames = Atomic<Int>(0)

    // MARK: Render thread

    /// Renders one block of `channelCount` interleaved channels (the output stream's: 2, or a
    /// speaker layout's 6 or 8), whatever the rendering; a rendering of fewer channels leaves
    /// the others silent (for the blocks until the output reopens with its count).
    /// A rendering of more channels than the output's folds down (SpatialRenderer+Speakers.swift).
    public func render(into output: UnsafeMutablePointer<Float>, channelCount: Int) {
        precondition(ChannelLayout.channelCountRange.contains(channelCount))
        let start = MonotonicClock.nowNanoseconds()
        scenesound_set_denormal_flushing(1)  // whichever thread renders (output, offline, benchmark)
        applyCommands()
        if stretchRequestedFrames.load(ordering: .relaxed) > 0 {
            let frames = stretchRequestedFrames.exchange(0, ordering: .relaxed)
            streams.forEachUnretained { $0.input.stretch(frames) }
        }
        duck.advance(alerting: streams.containsUnretained { $0.isAlert && !$0.removing && $0.input.ring.availableFrames > 0 },
                     blockSeconds: Double(configuration.blockFrames) / configuration.sampleRateHz)
        advanceSceneRamps()
        streams.forEachUnretained { place($0) }
        renderer.render(into: output, channelCount: channelCount)
        let end = outputFrames.load(ordering: .relaxed) + configuration.blockFrames
        outputFrames.store(end, ordering: .releasing)
        finishBlock(outputFrame: end)
        countQuietFrames(output, samples: channelCount * configuration.blockFrames)

        let elapsed = Double(MonotonicClock.nowNanoseconds() - start) * 1e-9
        let load = Int(elapsed * configuration.sampleRateHz / Double(configuration.blockFrames) * 1000)
        loadPermille.store(load, ordering: .relaxed)
        if load > peakLoadPermille.load(ordering: .relaxed) { peakLoadPermille.store(load, ordering: .relaxed) }
    }

    /// Renders one block of interleaved stereo (`configuration.blockFrames` frames).
    public func render(into output: UnsafeMutablePointer<Float>) { render(into: output, channelCount: 2) }

    /// Bounded, so that a flood of commands cannot push a block past its deadline: at most
    /// 512 commands, of which at most `streamsStartedPerBlock` new streams (a new voice's first
    /// block costs the most); the next one waits in `deferred` for the following block.
    private func applyCommands() {
        var started = 0
        for _ in 0..<512 {
            guard let command = deferred.take() ?? commands.pop() else { return }
            if case .addStream = command, renderer.isSwitching {
                deferred = command  // made for the incoming set: it starts once that set renders alone
                return
            }
            if case .switchHRTF = command, !renderer.canSwitch {
                deferred = command  // one switch at a time, the last one handed back first
                return
            }
            if case .addStream = command {
                // A stream refused for the limit goes back through the event queue: with no
                // room there it waits here, so that it is never released on this thread.
                if started == Self.streamsStartedPerBlock || (streams.count >= maximumStreams && !events.hasRoom) {
                    deferred = command
                    return
                }
                started += 1
            }
            if case .setRendering = command, renderer.isChangingRendering {
                deferred = command  // one crossfade at a time; the latest change waits (the queue replaces it)
                return
            }
            if case .setHeadphoneEQ = command, !renderer.headphoneEQ.canSwitch {
                deferred = command  // until the filters it would retire have been handed back
                return
            }
            apply(command)
        }
    }

    static let streamsStartedPerBlock = 24
    /// The rendering the last `setRendering` asked for.
    @exclusivity(unchecked) private(set) var rendering = OutputRendering.headphones
    @exclusivity(unchecked) private var deferred: EngineCommand?

    private func apply(_ command: EngineCommand) {
        switch command {
        case .addStream(let stream):
            guard streams.count < maximumStreams else {
                emit(.released(stream))  // the server checks its limit first; never grow here
                return
            }
            streams.append(stream)
            renderer.add(stream.source)
        case .removeStream(let id):
            if let stream = stream(id) {
                stream.removing = true
                stream.source.gain = 0
            }
        case .notifyWhenDrained(let id, let through):
            if let stream = stream(id) {
                stream.drainThroughFrame = max(stream.drainThroughFrame, through)
                stream.drainAtOutputFrame = .max
            }
        case .setGain(let id, let gain):
            if let stream = stream(id) { stream.gain = gain }
        case .setMode(let id, let mode):
            stream(id)?.source.mode = mode
        case .setScene(let id, let index):
            if let stream = stream(id), index >= 0, index < maximumScenes { stream.sceneIndex = index }
        case .placeScene(let index, let position, let width):
            guard index >= 0, index < maximumScenes else { return }
            scenes[index].position = position
            scenes[index].widthMetres = width
        case .setSceneLowpass(let index, let cutoff, let gain):
            guard index >= 0, index < maximumScenes else { return }
            scenes[index].targetLowpassCutoffHz = cutoff
            scenes[index].targetGain = gain
        case .resetScene(let index):
            guard index > 0, index < maximumScenes else { return }  // slot 0, the default, is never freed
            scenes[index] = SceneState(position: defaultScenePosition, widthMetres: 0, lowpassCutoffHz: .infinity, gain: 1)
        case .setHeadPose(let pose, let glide):
            renderer.setHeadPose(pose, glide: glide)
            poseAppliedNanoseconds.store(MonotonicClock.nowNanoseconds(), ordering: .relaxed)
            poseAppliedFrame.store(outputFrames.load(ordering: .relaxed), ordering: .releasing)
        case .setDucking(let parameters):
            duck.parameters = parameters
        case .setHeadphoneEQ(let filter):
            renderer.headphoneEQ.use(filter)
        case .switchHRTF(let change):
            renderer.beginSwitch(change)
        case .setRendering(let rendering):
            self.rendering = rendering
            renderer.setRendering(rendering)
        }
    }

    private func stream(_ id: StreamID) -> EngineStream? {
        for stream in streams where stream.id == id { return stream }
        return nil
    }

    /// Channel positions and level from the stream's scene.
    private func place(_ stream: EngineStream) {
        let scene = scenes[stream.sceneIndex]
        let source = stream.source
        // Alerts skip the scene's muffling (minimized, other desktop) so they get through.
        let sceneGain = stream.isAlert ? 1 : scene.gain
        if !stream.removing { source.gain = stream.gain * sceneGain * (stream.ducksUnderAlerts ? duck.gain : 1) }
        source.lowpassCutoffHz = stream.isAlert ? .infinity : scene.lowpassCutoffHz
        let p = scene.position
        if source.layout.placement == .speakers {
            source.placeSpeakers(around: p)
        } else if source.channelCount == 1 {
            source.channelPositions[0] = p
        } else if scene.widthMetres > 0 {
            // A window's stereo spans it: the channels at its left and right thirds.
            let right = Self.horizontalRight(of: p)
            source.channelPositions[0] = p - right * (scene.widthMetres / 3)
            source.channelPositions[1] = p + right * (scene.widthMetres / 3)
        } else {
            let pair = RenderSource.stereoPositions(around: p, spreadDegrees: configuration.stereoSpreadDegrees)
            source.channelPositions[0] = pair.left
            source.channelPositions[1] = pair.right
        }
    }

    /// Moves every scene's muffling one block towards its target.
    private func advanceSceneRamps() {
        let blockSeconds = Double(configuration.blockFrames) / configuration.sampleRateHz
        let gainStep = Self.sceneGainRatePerSecond * Float(blockSeconds)
        let octaveStep = Self.sceneCutoffOctavesPerSecond * blockSeconds
        for i in 0..<maximumScenes {
            var scene = scenes[i]
            guard scene.gain != scene.targetGain || scene.lowpassCutoffHz != scene.targetLowpassCutoffHz else { continue }
            scene.gain += max(-gainStep, min(gainStep, scene.targetGain - scene.gain))
            // Cutoffs glide in octaves; "open" is treated as 24 kHz on the way.
            let from = log2(min(scene.lowpassCutoffHz, 24000)), to = log2(min(scene.targetLowpassCutoffHz, 24000))
            let next = from + max(-octaveStep, min(octaveStep, to - from))
            scene.lowpassCutoffHz = abs(next - to) < 1e-9 ? scene.targetLowpassCutoffHz : exp2(next)
            scenes[i] = scene
        }
    }

    static func horizontalRight(of p: Vector3) -> Vector3 {
        let flat = Vector3(x: p.x, y: 0, z: p.z)
        let length = flat.length
        guard length > 1e-9 else { return Vector3(x: 1, y: 0, z: 0) }
        // Right of the direction towards p, seen from the listener: (−z, 0, x)/|p|.
        return Vector3(x: -flat.z / length, y: 0, z: flat.x / length)
    }

    /// Hands back removed streams and reports drains. An event that finds the queue full waits
    /// for a later block (the stream stays silent, the drain pending): none is lost, so the
    /// server learns of every release and drain, and nothing is freed on this thread.
    private func countQuietFrames(_ output: UnsafeMutablePointer<Float>, samples: Int) {
        if activityRequested.load(ordering: .acquiring) {
            // Zero first, then the flag: whoever sees the flag cleared sees the count reset.
            quietFrames.store(0, ordering: .releasing)
            activityRequested.store(false, ordering: .releasing)
        }
        // The first loud sample settles it (a block that sounds is not scanned to its end).
        var sounding = deferred != nil
        var index = 0
        while !sounding && index < samples {
            sounding = abs(output[index]) >= Self.quietPeak
            index += 1
        }
        sounding = sounding || streams.containsUnretained { $0.input.ring.availableFrames > 0 || $0.drainThroughFrame > 0 }
        let frames = sounding ? 0 : quietFrames.load(ordering: .relaxed) + configuration.blockFrames
        quietFrames.store(frames, ordering: .releasing)
    }

    private func finishBlock(outputFrame: Int) {
        while events.hasRoom, let filter = renderer.headphoneEQ.takeRetired() {
            emit(.retiredHeadphoneEQ(filter))
        }
        if events.hasRoom, let change = renderer.takeFinishedSwitch() { emit(.retiredHRTF(change)) }
        var index = 0
        while index < streams.count {
            if streams[index].removing {
                // Faded out during this block: handed back for release off this thread. No
                // reference of this thread's outlives the push: the server may let go of it
                // at once, and the last release must be the server's.
                guard events.hasRoom else {
                    index += 1
                    continue
                }
                renderer.remove(streams[index].source)
                streams.swapAt(index, streams.count - 1)
                emit(.released(streams.removeLast()))
                continue
            }
            let stream = streams[index]
            if stream.drainThroughFrame > 0 {
                if stream.drainAtOutputFrame == .max, stream.input.ring.framesRead >= stream.drainThroughFrame {
                    // The last frame entered this block; it leaves after the limiter's delay.
                    stream.drainAtOutputFrame = outputFrame + renderer.latencyFrames
                }
                if outputFrame >= stream.drainAtOutputFrame, events.hasRoom {
                    emit(.drained(stream.id, throughFrame: stream.drainThroughFrame, outputFrame: stream.drainAtOutputFrame))
                    stream.drainThroughFrame = 0
                    stream.drainAtOutputFrame = .max
                }
            }
            index += 1
        }
    }

    private func emit(_ event: EngineEvent) {
        if !events.push(event) { droppedEvents.add(1, ordering: .relaxed) }
    }
}
