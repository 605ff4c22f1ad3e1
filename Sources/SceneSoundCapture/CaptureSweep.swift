import CPulse
import SceneSoundPlatform
import SceneSoundPulse

/// Undoes what a capture did to the sound server, for the capture sinks `isTarget` picks:
/// puts the real default sink back if one of them is the default (the one the capture last
/// knew, else the one its sink's properties name, else any other), moves every stream on them
/// to the default sink (moving a stream to the default sink also makes the server forget the
/// route it remembered when we moved it: module-stream-restore and WirePlumber both drop a
/// stream's target when it goes to the default), then unloads their modules. A client's stream
/// linked to no sink at all is moved there too: on PipeWire a stream we moved is linked nowhere
/// for a moment while pipewire-pulse relinks it, and one caught so when our sink went stayed
/// linked nowhere, silent (its target, our sink, gone). For the same reason the sinks are
/// unloaded only once the streams moved are seen on the sink they went to (or after
/// `arrivalLimitSeconds`): a move answered is not yet a stream relinked, and on PipeWire one
/// whose sink went while WirePlumber relinked it was left linked nowhere (`CrashSafetyTests`,
/// a hung capture woken and stopped 30 ms after it took the apps again). Seen by a connection
/// of its own: for a second after a move, pipewire-pulse (0.3.65) tells the connection that
/// moved a stream that it is on its new sink, linked or not; any other connection is told
/// where it is linked. WirePlumber (0.4.13), whose links to a sink still being set up failed
/// because the sink went, tried again and again, and after six failures in a row never linked
/// that stream again: silent for good.
///
/// One piece of code for every way a capture ends: the daemon stopping, the guard after the
/// daemon died or hung, and the next daemon finding leftovers of a crashed one.
enum CaptureSweep {
    struct Outcome: Equatable, Sendable {
        var sinksRemoved = 0
        var streamsReturned = 0
        var restoredDefaultSink: String?
        /// The requests that failed, in words; empty when everything was undone.
        var failures: [String] = []
    }

    /// How long the sweep waits for moved streams to arrive before it unloads the sinks anyway.
    static let arrivalLimitSeconds = 1.0

    /// Runs on the context's mainloop; `done` is called there once every request has answered.
    static func run(
        on context: OpaquePointer,
        mainloop: UnsafeMutablePointer<pa_mainloop_api>,
        isTarget: @escaping ([String: String]) -> Bool,
        realSink: String? = nil,
        done: @escaping (Outcome) -> Void
    ) {
        let requests = PulseRequests(context: context)
        let outcome = Outcome()
        requests.defaultSinkName { defaultName in
            requests.sinks { sinks in
                guard let sinks else {
                    var failed = outcome
                    failed.failures.append("cannot list sinks")
                    return done(failed)
                }
                let targets = sinks.filter { isTarget($0.properties) }
                guard !targets.isEmpty else {
                    return reassertRealSink(requests, realSink: realSink, sinks: sinks, outcome: outcome, done: done)
                }
                // Connecting while the default and the streams go back.
                let observer = Observer(like: context, on: mainloop)
                let finish = { (outcome: Outcome) in
                    observer?.close()
                    done(outcome)
                }
                let others = sinks.filter { !CaptureSinkProperties.isCaptureSink($0.properties) }
                restoreDefault(requests, defaultName: defaultName, realSink: realSink, targets: targets, others: others,
                               outcome: outcome) { realDefault, outcome in
                    returnStreams(requests, from: targets, to: realDefault, outcome: outcome) { outcome, moved in
                        let limit = MonotonicClock.nowSeconds() + arrivalLimitSeconds
                        awaitArrival(observer, mainloop, of: moved, on: realDefault?.index, untilSeconds: limit) {
                            unload(requests, targets, outcome: outcome, done: finish)
                        }
                    }
                }
            }
        }
    }

    /// If a target is the default sink, the one it replaced (or any other sink) becomes the
    /// default again. Passes on the sink streams go back to.
    private static func restoreDefault(
        _ requests: PulseRequests, defaultName: String?, realSink: String?, targets: [SinkFacts], others: [SinkFacts],
        outcome: Outcome, then: @escaping (SinkFacts?, Outcome) -> Void
    ) {
        let current = others.first { $0.name == defaultName }
        guard current == nil, let hijacked = targets.first(where: { $0.name == defaultName }) else {
            return then(current, outcome)
        }
        let remembered = hijacked.properties[CaptureSinkProperties.previousDefaultKey]
        guard let replacement = others.first(where: { $0.name == realSink }) ?? others.first(where: { $0.name == remembered })
            ?? others.first
        else {
            return then(nil, outcome)  // no other sink: the server picks one once ours is gone
        }
        makeDefault(requests, replacement.name, outcome: outcome) { then(replacement, $0) }
    }

    private static func makeDefault(_ requests: PulseRequests, _ name: String, outcome: Outcome, then: @escaping (Outcome) -> Void) {
        var outcome = outcome
        requests.setDefaultSink(name) { success in
            if success {
                outcome.restoredDefaultSink = name
            } else {
                outcome.failures.append("cannot make \(name) the default sink again")
            }
            then(outcome)
        }
    }

    /// Our sink already gone before the sweep (on PipeWire a park sink goes with the
    /// connection that made it: at once when the daemon dies): the server's effective default
    /// fell back to another sink, but the one it was told to use may still name ours, to be
    /// taken again by any later sink of that name. The real sink the capture last knew is made
    /// the default once more.
    private static func reassertRealSink(
        _ requests: PulseRequests, realSink: String?, sinks: [SinkFacts], outcome: Outcome, done: @escaping (Outcome) -> Void
    ) {
        guard let realSink, sinks.contains(where: { $0.name == realSink }) else { return done(outcome) }
        makeDefault(requests, realSink, outcome: outcome, then: done)
    }

    private static func returnStreams(
        _ requests: PulseRequests, from targets: [SinkFacts], to destination: SinkFacts?, outcome: Outcome,
        then: @escaping (Outcome, _ moved: Set<UInt32>) -> Void
    ) {
        // Without a destination, unloading the sink moves its streams to whatever the server
        // picks (PulseAudio 14+ and PipeWire both do).
        guard let destination else { return then(outcome, []) }
        let targetIndices = Set(targets.map(\.index))
        requests.sinkInputs { inputs in
            var outcome = outcome, moved: Set<UInt32> = []
            let stranded = (inputs ?? []).filter {
                targetIndices.contains($0.sinkIndex) || ($0.sinkIndex == UInt32.max && $0.ownerModule == nil)  // PA_INVALID_INDEX
            }
            let counter = CompletionCounter(count: stranded.count) { then(outcome, moved) }
            for input in stranded {
                requests.moveSinkInput(input.index, toSink: destination.index) { success in
                    if success {
                        outcome.streamsReturned += 1
                        moved.insert(input.index)
                    } else {
                        outcome.failures.append("cannot move stream \(input.index) back to \(destination.name)")
                    }
                    counter.finishOne()
                }
            }
        }
    }

    /// Calls `then` once the observer sees every stream in `moved` on `sink` (or gone), or at
    /// `untilSeconds` (at once without an observer: no connection could be opened).
    private static func awaitArrival(
        _ observer: Observer?, _ mainloop: UnsafeMutablePointer<pa_mainloop_api>, of moved: Set<UInt32>, on sink: UInt32?,
        untilSeconds: Double, then: @escaping () -> Void
    ) {
        guard let observer, let sink, !moved.isEmpty, MonotonicClock.nowSeconds() < untilSeconds else { return then() }
        let again = {
            PulseMainloop.after(mainloop, seconds: 0.02) {
                awaitArrival(observer, mainloop, of: moved, on: sink, untilSeconds: untilSeconds, then: then)
            }
        }
        switch pa_context_get_state(observer.context) {
        case PA_CONTEXT_READY:
            observer.requests.sinkInputs { inputs in
                guard let inputs else { return then() }
                inputs.contains { moved.contains($0.index) && $0.sinkIndex != sink } ? again() : then()
            }
        case PA_CONTEXT_FAILED, PA_CONTEXT_TERMINATED:
            then()
        default:
            again()  // still connecting
        }
    }

    /// A second connection to the same server, for `awaitArrival`.
    final class Observer {
        let context: OpaquePointer
        let requests: PulseRequests

        init?(like sweeping: OpaquePointer, on mainloop: UnsafeMutablePointer<pa_mainloop_api>) {
            guard let server = pa_context_get_server(sweeping).map({ String(cString: $0) }),
                  let context = pa_context_new(mainloop, "SceneSound capture sweep")
            else { return nil }
            guard pulseConnect(context, serverAddress: server) == 0 else {
                pa_context_unref(context)
                return nil
            }
            self.context = context
            requests = PulseRequests(context: context)
        }

        func close() {
            pulseDisconnect(context)
            pa_context_unref(context)
        }
    }

    private static func unload(_ requests: PulseRequests, _ targets: [SinkFacts], outcome: Outcome, done: @escaping (Outcome) -> Void) {
        var outcome = outcome
        let modules = Set(targets.compactMap(\.ownerModule))
        let counter = CompletionCounter(count: modules.count) { done(outcome) }
        for module in modules {
            requests.unloadModule(module) { success in
                if success {
                    outcome.sinksRemoved += 1
                } else {
                    outcome.failures.append("cannot unload module \(module)")
                }
                counter.finishOne()
            }
        }
    }
}
