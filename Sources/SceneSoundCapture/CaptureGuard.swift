import CPulse
import Foundation
import SceneSoundPulse

/// The guard process's side (see `CaptureGuardLink`): waits for the daemon to die or hang,
/// then sweeps the capture sinks of its session, and exits.
public enum CaptureGuard {
    public struct Options: Equatable, Sendable {
        public var session: String
        public var serverAddress: String?
        /// No heartbeat for this long counts as hung.
        public var hangSeconds: Double = 2.0
        /// How long to keep trying to reach a sound server that is restarting.
        public var connectSeconds: Double = 5.0

        public init(session: String, serverAddress: String? = nil) {
            self.session = session
            self.serverAddress = serverAddress
        }

        /// `--session TOKEN [--server ADDRESS] [--hang-seconds S]`; nil with a message on bad input.
        public static func parse(_ arguments: [String]) -> Result<Options, UsageError> {
            var session: String?
            var server: String?
            var hang = 2.0
            var remaining = arguments[...]
            while let flag = remaining.popFirst() {
                guard let value = remaining.popFirst() else {
                    return .failure(UsageError(message: "\(flag) needs a value"))
                }
                switch flag {
                case "--session": session = value
                case "--server": server = value
                case "--hang-seconds":
                    guard let seconds = Double(value), seconds > 0, seconds <= 60 else {
                        return .failure(UsageError(message: "--hang-seconds: '\(value)' is not a number of seconds in (0, 60]"))
                    }
                    hang = seconds
                default:
                    return .failure(UsageError(message: "unknown option '\(flag)' (accepted: --session, --server, --hang-seconds)"))
                }
            }
            guard let session, !session.isEmpty else { return .failure(UsageError(message: "--session TOKEN is required")) }
            var options = Options(session: session, serverAddress: server)
            options.hangSeconds = hang
            return .success(options)
        }
    }

    public struct UsageError: Error, Equatable {
        public let message: String
    }

    public enum Ending: Equatable, Sendable {
        case daemonEnded
        case daemonHung
    }

    /// Blocks until the daemon on the other end of `descriptor` ends or stops beating. Every
    /// byte is a beat, except `r`: the capture rests and sends no beat until its next byte
    /// (only the socket's end counts then); `s` + a sink name + newline also names the real
    /// default sink, which the capture sink stands in front of (`realSinkNamed` hears each).
    ///
    /// `serverEvents`, readable after each playback-stream event on the sound server (see
    /// `GuardServerWatch`): while the daemon rests, such an event makes the guard ask it
    /// (`p`) and expect an answer within `hangSeconds`, so that a daemon hung at rest is undone
    /// once an app needs it.
    public static func waitForDaemon(
        descriptor: Int32, hangSeconds: Double, serverEvents: Int32? = nil,
        realSinkNamed: (String) -> Void = { _ in }, drainServerEvents: () -> Void = {}
    ) -> Ending {
        var lastBeat = Date()
        var isResting = false
        var buffer = [UInt8](repeating: 0, count: 256)
        var sinkName: [UInt8]?
        // A server event taken in the same round as the daemon's `r` may have come after the
        // daemon went to rest (and then hung): it must be asked about too, or the app that
        // caused it stays silent on our sink until another event.
        var eventThisRound = false
        func askWhetherAlive() -> Bool {
            // Alive? Any byte after this answers; none within the limit is a hang.
            var ping = UInt8(ascii: "p")
            if send(descriptor, &ping, 1, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT)) < 0, errno == EPIPE { return false }
            isResting = false
            lastBeat = Date()
            return true
        }
        while true {
            let remaining = hangSeconds - Date().timeIntervalSince(lastBeat)
            if remaining <= 0, !isResting { return .daemonHung }
            var pollers = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
            if let serverEvents { pollers.append(pollfd(fd: serverEvents, events: Int16(POLLIN), revents: 0)) }
            let ready = poll(&pollers, nfds_t(pollers.count), isResting ? -1 : Int32((remaining * 1000).rounded(.up)))
            if ready < 0 {
                if errno == EINTR { continue }
                return .daemonEnded
            }
            if ready == 0 { return .daemonHung }
            eventThisRound = false
            if pollers.count > 1, pollers[1].revents != 0 {
                drainServerEvents()
                eventThisRound = true
                if isResting, !askWhetherAlive() { return .daemonEnded }
            }
            guard pollers[0].revents != 0 else { continue }
            let count = read(descriptor, &buffer, buffer.count)
            if count == 0 || (count < 0 && errno != EINTR && errno != EAGAIN) { return .daemonEnded }
            if count > 0 { lastBeat = Date() }
            for byte in buffer.prefix(max(0, count)) {
                if sinkName == nil {
                    if byte == UInt8(ascii: "s") { sinkName = [] } else { isResting = byte == UInt8(ascii: "r") }
                } else if byte == UInt8(ascii: "\n") {
                    realSinkNamed(String(decoding: sinkName!, as: UTF8.self))
                    sinkName = nil
                } else if sinkName!.count < 1024 {
                    sinkName!.append(byte)
                }
            }
            if isResting, eventThisRound, !askWhetherAlive() { return .daemonEnded }
        }
    }

    /// Sweeps the session's capture sinks on the sound server, retrying the connection for
    /// `options.connectSeconds`; `realSink` is made the default again if ours is it. nil if
    /// the server could not be reached (then nothing of ours is loaded there either: a
    /// restarted server starts without our modules).
    public static func sweep(_ options: Options, realSink: String? = nil) -> String? {
        let deadline = Date().addingTimeInterval(options.connectSeconds)
        repeat {
            switch sweepOnce(options, realSink: realSink, deadline: deadline) {
            case .done(let outcome):
                return describe(outcome)
            case .unreachable:
                Thread.sleep(forTimeInterval: 0.1)
            }
        } while Date() < deadline
        return nil
    }

    static func describe(_ outcome: CaptureSweep.Outcome) -> String {
        var words = "returned \(outcome.streamsReturned) stream(s), unloaded \(outcome.sinksRemoved) sink(s)"
        if let restored = outcome.restoredDefaultSink { words += ", made \(restored) the default sink again" }
        if !outcome.failures.isEmpty { words += "; failed: " + outcome.failures.joined(separator: "; ") }
        return words
    }

    private enum Attempt {
        case done(CaptureSweep.Outcome)
        case unreachable
    }

    /// One connection on a plain (single-threaded) mainloop.
    private static func sweepOnce(_ options: Options, realSink: String?, deadline: Date) -> Attempt {
        guard let mainloop = pa_mainloop_new() else { return .unreachable }
        defer { pa_mainloop_free(mainloop) }
        guard let api = pa_mainloop_get_api(mainloop), let context = pa_context_new(api, "SceneSound capture guard") else { return .unreachable }
        defer { pa_context_unref(context) }

        final class State {
            var outcome: CaptureSweep.Outcome?
            var failed = false
            var sweeping = false
        }
        let state = State()
        let session = options.session
        guard pulseConnect(context, serverAddress: options.serverAddress) == 0 else { return .unreachable }
        defer { pa_context_disconnect(context) }

        while state.outcome == nil, !state.failed, Date() < deadline {
            switch pa_context_get_state(context) {
            case PA_CONTEXT_READY where !state.sweeping:
                state.sweeping = true
                CaptureSweep.run(on: context, mainloop: api, isTarget: { $0[CaptureSinkProperties.sessionKey] == session }, realSink: realSink) {
                    state.outcome = $0
                }
            case PA_CONTEXT_FAILED, PA_CONTEXT_TERMINATED:
                state.failed = true
                continue
            default:
                break
            }
            // Blocks for at most 100 ms, so the deadline is checked even if the server is silent.
            pa_mainloop_prepare(mainloop, 100_000)
            pa_mainloop_poll(mainloop)
            pa_mainloop_dispatch(mainloop)
        }
        if let outcome = state.outcome { return .done(outcome) }
        return .unreachable
    }

    /// The guard's whole life: wait, sweep, report one line on stderr. Returns the exit status.
    /// `disconnectHungDaemon` (given the daemon's PID and the server's address) takes a hung
    /// daemon out of the sound server after the sweep, in words: what a death does by itself
    /// (on PipeWire, its nodes leave the graph) a hang does not.
    public static func run(
        arguments: [String], descriptor: Int32 = 0, disconnectHungDaemon: (pid_t, String?) -> String? = { _, _ in nil }
    ) -> Int32 {
        // Spawned by the daemon: the parent now (once the daemon is gone, another process).
        let daemonPID = getppid()
        let options: Options
        switch Options.parse(arguments) {
        case .success(let parsed): options = parsed
        case .failure(let error):
            FileHandle.standardError.write(Data("scenesound-capture-guard: \(error.message)\n".utf8))
            return 2
        }
        var realSink: String?
        let watch = GuardServerWatch(serverAddress: options.serverAddress)
        let ending = waitForDaemon(
            descriptor: descriptor, hangSeconds: options.hangSeconds, serverEvents: watch?.descriptor,
            realSinkNamed: { realSink = $0 }, drainServerEvents: { _ = watch?.drain() })
        withExtendedLifetime(watch) {}
        let why = ending == .daemonHung ? "daemon silent for \(options.hangSeconds) s" : "daemon ended"
        var result = sweep(options, realSink: realSink).map { "\(why): \($0)" } ?? "\(why): no sound server reachable, nothing to undo"
        if ending == .daemonHung, daemonPID > 1, let disconnected = disconnectHungDaemon(daemonPID, options.serverAddress) {
            result += "; \(disconnected)"
        }
        FileHandle.standardError.write(Data("scenesound-capture-guard: \(result)\n".utf8))
        return 0
    }
}
