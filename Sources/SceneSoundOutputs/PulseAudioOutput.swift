import SceneSoundPlatform
import SceneSoundEngine
import SceneSoundPulse
import Synchronization

/// `--output pulse[:SINK]`: the user's PulseAudio (or PipeWire's PulseAudio server), through
/// the async API with a ~20 ms buffer; PulseAudio's thread pulls the engine. Reconnects by
/// itself when the server goes away; the engine, and so every client's stream, goes on.
public final class PulseAudioOutput: OutputBackend, @unchecked Sendable {
    public let sinkName: String?
    public let targetLatencySeconds: Double
    private var pulse: PulseOutput?
    private let connectedSink = Mutex<String?>(nil)
    private let lastEvent = Mutex<String?>(nil)
    private let onEvent: @Sendable (PulseOutput.Event) -> Void
    /// libpulse's mainloop thread renders: it asks for real-time scheduling on its first block.
    private let scheduling = RealtimeSchedulingRequest()

    public init(sinkName: String?, targetLatencySeconds: Double = 0.020,
                onEvent: @escaping @Sendable (PulseOutput.Event) -> Void = { _ in }) {
        self.sinkName = sinkName
        self.targetLatencySeconds = targetLatencySeconds
        self.onEvent = onEvent
    }

    public func start(engine: Engine) throws {
        let configuration = PulseOutput.Configuration(
            sinkName: sinkName, rateHz: Int(engine.configuration.sampleRateHz),
            blockFrames: engine.configuration.blockFrames, targetLatencySeconds: targetLatencySeconds,
            applicationName: "SceneSound", streamName: "SceneSound spatial mix")
        let pulse = PulseOutput(configuration: configuration) { [weak self] event in
            self?.record(event)
        }
        do {
            try pulse.start(renderChannels: { [scheduling] buffer, _, channels in
                scheduling.ensureRequestedOnCurrentThread()
                engine.render(into: buffer, channelCount: channels)
                engine.markDelivered(throughFrame: engine.renderedFrames)
            }, bufferGrew: { frames in engine.stretchStreamsArrivingInRealTime(byFrames: frames) })
        } catch {
            throw OutputError("PulseAudio output: \(error)")
        }
        self.pulse = pulse
    }

    private func record(_ event: PulseOutput.Event) {
        switch event {
        case .connected(let sink): connectedSink.withLock { $0 = sink }; lastEvent.withLock { $0 = nil }
        case .disconnected(let reason): connectedSink.withLock { $0 = nil }; lastEvent.withLock { $0 = reason }
        case .failed(let reason): lastEvent.withLock { $0 = reason }
        case .reconnecting, .underrun: break
        }
        onEvent(event)
    }

    public func stop() throws { pulse?.stop() }

    public func setResting(_ resting: Bool) { pulse?.setCorked(resting) }

    /// Reopens the stream with the layout's channels (PulseAudio's names for them).
    public func useChannels(_ layout: ChannelLayout) {
        do {
            try pulse?.useChannels(layout.speakers.map(\.pulseName))
        } catch {
            lastEvent.withLock { $0 = "cannot play \(layout): \(error)" }
        }
    }

    /// Plays on `sinkName` whatever the default sink becomes; nil: back to `sinkName` as
    /// configured (or to the default). See `PulseOutput.pin(toSink:)`.
    public func pin(toSink sinkName: String?) { pulse?.pin(toSink: sinkName) }

    public var status: OutputStatus {
        let sink = connectedSink.withLock { $0 }
        var status = OutputStatus(kind: "pulse", target: sink ?? sinkName, connected: sink != nil,
                                  latencySeconds: pulse?.measuredLatencySeconds,
                                  queueTargetSeconds: pulse?.bufferTargetSeconds ?? targetLatencySeconds,
                                  underruns: pulse?.underrunCount ?? 0, reconnects: pulse?.reconnectCount ?? 0,
                                  renderThreadScheduling: scheduling.obtained?.description,
                                  lastError: lastEvent.withLock { $0 })
        status.recentUnderflowsAtMonotonicSeconds = pulse?.recentUnderrunsAtMonotonicSeconds
        return status
    }
}
