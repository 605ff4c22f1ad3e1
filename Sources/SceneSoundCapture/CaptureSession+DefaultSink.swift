import CPulse
import Foundation

/// Following the server's events: streams appearing, sinks coming and going, and the default
/// sink, which stays ours while the real one behind it is learned.
extension CaptureSession {
    func serverChanged(event: pa_subscription_event_type_t, index: UInt32) {
        guard phase == .capturing else { return }
        let facility = event.rawValue & PA_SUBSCRIPTION_EVENT_FACILITY_MASK.rawValue
        let type = event.rawValue & PA_SUBSCRIPTION_EVENT_TYPE_MASK.rawValue
        switch facility {
        case PA_SUBSCRIPTION_EVENT_SINK_INPUT.rawValue:
            if type == PA_SUBSCRIPTION_EVENT_REMOVE.rawValue { return streamEnded(index) }
            // Born on the capture sink (ours is the default): its onset is in the mix from now.
            // The mix's recording is resumed first, before the server can render the stream.
            if type == PA_SUBSCRIPTION_EVENT_NEW.rawValue {
                wake()
                onsets.streamAppeared(index)
            }
            let judge: () -> Void = { [weak self] in
                self?.requests.sinkInput(index) { [weak self] facts in
                    guard let self else { return }
                    if let facts { evaluate(facts) } else { streamEnded(index) }
                }
            }
            // A new stream is judged against the default sink as it is now, not as the last
            // server event left it: right after the server (re)starts, the default is chosen
            // while the first apps already play.
            if type == PA_SUBSCRIPTION_EVENT_NEW.rawValue { refreshDefaultSink(judge) } else { judge() }
        case PA_SUBSCRIPTION_EVENT_SINK.rawValue:
            if type == PA_SUBSCRIPTION_EVENT_REMOVE.rawValue, index == captureSink?.index {
                return fail("the capture sink was removed")
            }
            if type == PA_SUBSCRIPTION_EVENT_CHANGE.rawValue, index == captureSink?.index || index == defaultSink?.index {
                mirrorVolume(ofSink: index)  // and, as for any sink event, the default looked at
            }
            refreshDefaultSink { [weak self] in self?.rescan() }
            if type == PA_SUBSCRIPTION_EVENT_REMOVE.rawValue {
                // Its streams land on the default, ours, a moment later, without an event on
                // PipeWire: look again then, for those to send on to the real sink.
                after(seconds: 0.5) { [weak self] in self?.refreshDefaultSink { [weak self] in self?.rescan() } }
            }
        case PA_SUBSCRIPTION_EVENT_SERVER.rawValue:
            refreshDefaultSink { [weak self] in self?.rescan() }
        default:
            break
        }
    }

    /// Keeps ours the default sink and learns the real one behind it: where the streams we
    /// let go play, and SceneSound's own output (the consumer pins it there). Another sink
    /// becoming the default means the user (or the server, for a device plugged in) chose it:
    /// it is the real one from now on, and ours takes its place again. If the real one goes
    /// away, another takes over. The sweep undoes all this, however this process ends.
    ///
    /// Asked for in bursts (each new stream is judged against the default as it is now):
    /// callers coming while a refresh is on its way share the next one, which starts after
    /// what they saw. PulseAudio answers on the main loop that also accepts new clients, with
    /// five connections waiting at most and the rest refused: 32 apps starting at once had it
    /// answer two requests each for us meanwhile, and some of them could not connect.
    func refreshDefaultSink(_ then: @escaping () -> Void) {
        if defaultSinkRefresh != nil { return defaultSinkRefresh!.next.append(then) }
        startDefaultSinkRefresh(for: [then])
    }

    func startDefaultSinkRefresh(for waiting: [() -> Void]) {
        defaultSinkRefresh = (waiting, [])
        defaultSinkRefreshGeneration += 1
        let generation = defaultSinkRefreshGeneration
        let finish = { [weak self] in
            guard let self, generation == defaultSinkRefreshGeneration, let refresh = defaultSinkRefresh else { return }
            defaultSinkRefreshGeneration += 1
            if refresh.next.isEmpty { defaultSinkRefresh = nil } else { startDefaultSinkRefresh(for: refresh.next) }
            refresh.waiting.forEach { $0() }
        }
        askDefaultSink(finish)
        // An answer that never came would hold every later refresh behind this one, and the
        // user's next choice of output would go unseen.
        after(seconds: Self.defaultSinkRefreshLimitSeconds, finish)
    }

    static let defaultSinkRefreshLimitSeconds = 2.0

    /// On PipeWire, a default the graph node learns is followed as pipewire-pulse's events are.
    func watchGraphDefaultSink() {
        // Used only under the mainloop's lock, on whichever thread holds it.
        nonisolated(unsafe) weak let session = self
        graph?.watchDefaultSink { [mainloop] in
            mainloop.withLock {
                guard let session, session.phase == .capturing else { return }
                session.refreshDefaultSink { [weak session] in session?.rescan() }
            }
        }
    }

    /// On PipeWire the graph node's reading of the default comes first: pipewire-pulse's copy
    /// for our connection misses for good a choice made while another client connects, the
    /// node's is read again after every new client (docs/CAPTURE.md).
    func askDefaultSink(_ then: @escaping () -> Void) {
        requests.defaultSinkName { [weak self] serverName in
            guard let self else { return }
            let graphName = graph?.defaultSinkName
            requests.sinks { [weak self] sinks in
                guard let self, let captureSink, let sinks else { return then() }
                let real = sinks.filter { !CaptureSinkProperties.isCaptureSink($0.properties) }
                let readings = DefaultSinkChoice.Readings(server: serverName, graph: graphName)
                let now = ProcessInfo.processInfo.systemUptime
                // The same disagreement a second on, not a burst of looks at the same moment.
                let seenBefore = defaultSinkDisagreement.map { $0.readings == readings && now - $0.sinceSeconds >= 1 } ?? false
                let choice = DefaultSinkChoice(readings, captureSink: captureSink.name, current: defaultSink?.name,
                                               realSinks: real.map(\.name), seenBefore: seenBefore)
                if !choice.disagrees {
                    defaultSinkDisagreement = nil
                } else if defaultSinkDisagreement?.readings != readings {
                    defaultSinkDisagreement = (readings, now)
                }
                if choice.disagrees && !choice.takesTheDefaultBack {
                    after(seconds: 1) { [weak self] in self?.refreshDefaultSink { [weak self] in self?.rescan() } }
                }
                if let chosen = real.first(where: { $0.name == choice.realSink }),
                   chosen.name != defaultSink?.name || chosen.index != defaultSink?.index {
                    defaultSink = (chosen.name, chosen.index)
                    _ = guardLink?.tellRealSink(chosen.name)
                    consumer.captureDidChooseRealSink(chosen.name)
                    volumeMirror.realSinkChanged()
                    mirrorVolume(ofSink: chosen.index)
                }
                guard choice.takesTheDefaultBack else { return then() }
                requests.setDefaultSink(captureSink.name) { _ in then() }
            }
        }
    }
}

/// What one look at the default decides: the real sink behind ours (the default when it is
/// not ours, else the one before, else any), and whether ours takes the default back.
///
/// On PipeWire the graph node's reading comes first (pipewire-pulse's copy for our connection
/// can miss a choice for good), but the node's can lag too: while its binding is deaf it learns
/// a choice only when it reads the default again, after the client that chose goes. So when the
/// server's reading names another real sink than the node's, ours does not take the default
/// back at once — that would undo a choice nobody had learned (a fresh-clone run: `pactl
/// set-default-sink headset` while capturing, lost for good) — but looks again a second later:
/// the node has read the default again by then, and if the two still disagree the node's is
/// taken (the server's copy is the stale one).
struct DefaultSinkChoice: Equatable {
    struct Readings: Equatable {
        var server: String?
        var graph: String?
    }

    var realSink: String?
    var takesTheDefaultBack: Bool
    /// The server names another real sink than the node.
    var disagrees = false

    init(_ readings: Readings, captureSink: String, current: String?, realSinks: [String], seenBefore: Bool) {
        let name = readings.graph ?? readings.server
        let real = realSinks.first { $0 == name } ?? realSinks.first { $0 == current } ?? realSinks.first
        let disagreeing = readings.graph != nil && (readings.server.map { $0 != real && realSinks.contains($0) } ?? false)
        realSink = real
        disagrees = disagreeing
        takesTheDefaultBack = name != captureSink && real != nil && (!disagreeing || seenBefore)
    }

    init(realSink: String?, takesTheDefaultBack: Bool, disagrees: Bool = false) {
        self.realSink = realSink
        self.takesTheDefaultBack = takesTheDefaultBack
        self.disagrees = disagrees
    }
}
