import CPulse
import Synchronization

/// Plays the engine's mix through a PulseAudio (or PipeWire-Pulse) server.
///
/// Audio is pulled: libpulse's mainloop thread calls `render` whenever the server wants more.
/// The output keeps going on its own: when the server dies or restarts it reports
/// `.disconnected`, reconnects with backoff until `stop()`, and resumes pulling from the same
/// `render`, so nothing upstream needs to know.
public final class PulseOutput: @unchecked Sendable {
    public let configuration: Configuration
    private let events: @Sendable (Event) -> Void
    private let statistics = OutputStatistics()

    /// A started output. Held under `lifecycle` only long enough to hand it over: never
    /// while waiting for the mainloop (whose thread may itself be calling `stop()`).
    private struct Running {
        let mainloop: PulseMainloop
        let supervisor: OutputSupervisor
        /// `stop()` ran on the mainloop thread: the loop has quit but still needs joining.
        var stoppedFromMainloopThread = false
    }
    private let lifecycle = Mutex<Running?>(nil)

    public init(configuration: Configuration, events: @escaping @Sendable (Event) -> Void) {
        self.configuration = configuration
        self.events = events
    }

    deinit {
        stop()
    }

    /// Starts the mainloop thread and connects in the background; returns without waiting for
    /// a server (`.connected` says when audio flows). Throws only for a configuration that
    /// cannot work, a second start, or a mainloop libpulse cannot create.
    ///
    /// `render` is called on the PulseAudio thread, once per block, to fill `blockFrames`
    /// interleaved stereo Float32 frames. It must be real-time safe.
    public func start(render: @escaping (UnsafeMutablePointer<Float>, Int) -> Void) throws {
        try start(renderChannels: { buffer, frames, _ in render(buffer, frames) })
    }

    /// As `start(render:)`, with the stream's channel count passed to `render` (2 until
    /// `useChannels` changes it): it fills `frames` interleaved frames of that many channels.
    /// `bufferGrew`, on the same thread: the stream's buffer grew by `frames` after an
    /// underflow, and the next requests ask for them at once, on top of what plays meanwhile.
    public func start(renderChannels render: @escaping (UnsafeMutablePointer<Float>, _ frames: Int, _ channels: Int) -> Void,
                      bufferGrew: @escaping (_ frames: Int) -> Void = { _ in }) throws {
        try configuration.validate()
        joinOutputStoppedFromItsOwnThread()

        let mainloop = try PulseMainloop(threadName: "scenesound-pulse")
        let renderer = BlockRenderer(blockFrames: configuration.blockFrames, render: render, bufferGrew: bufferGrew)
        let supervisor = OutputSupervisor(
            mainloop: mainloop, configuration: configuration, renderer: renderer,
            statistics: statistics, events: events)
        try mainloop.start()
        let claimed = lifecycle.withLock { running in
            guard running == nil else { return false }
            running = Running(mainloop: mainloop, supervisor: supervisor)
            return true
        }
        // Not claimed: the unused mainloop stops and is freed when it goes out of scope here.
        guard claimed else { throw PulseOutputError.alreadyStarted }
        mainloop.withLock { supervisor.begin() }
    }

    /// Disconnects without draining and joins the PulseAudio thread. Idempotent; callable from
    /// any thread. Called from the PulseAudio thread itself (an event handler, `render`), it
    /// disconnects and ends the loop as soon as the current callback returns (`render` may be
    /// called until then); the thread is joined by the next `stop()`, `start()` or deinit on
    /// another thread.
    public func stop() {
        let current = lifecycle.withLock { $0.map { ($0.mainloop, $0.supervisor) } }
        guard let (mainloop, supervisor) = current else { return }

        if mainloop.isCurrentThread {
            lifecycle.withLock { $0?.stoppedFromMainloopThread = true }
            supervisor.stopReacting()
            mainloop.runSoon {
                supervisor.shutDown()
                mainloop.quitFromItsOwnThread()
            }
            return
        }
        guard let running = takeRunning() else { return }  // another thread got there first
        running.mainloop.withLock { running.supervisor.shutDown() }
        running.mainloop.stopAndJoin()
    }

    /// Plays on `sinkName` and stays there, whatever becomes the default sink; nil goes back to
    /// the configured sink (or to following the default). For the app capture, which makes
    /// its own sink the default: the mix must not follow it there. Reopens the stream (a gap
    /// of a few milliseconds) when the sink changes; does nothing before `start`.
    public func pin(toSink sinkName: String?) {
        guard let (mainloop, supervisor) = lifecycle.withLock({ $0.map { ($0.mainloop, $0.supervisor) } }) else { return }
        mainloop.withLock { supervisor.pin(toSink: sinkName) }
    }

    /// Plays `positions` (PulseAudio's channel names, in the order `render` fills them) from
    /// now on: reopens the stream (a gap of a few milliseconds) if they changed; kept across
    /// reconnections and pins. Before `start`, the configuration's are used.
    public func useChannels(_ positions: [String]) throws {
        var checked = configuration
        checked.channelPositions = positions
        try checked.validate()
        guard let (mainloop, supervisor) = lifecycle.withLock({ $0.map { ($0.mainloop, $0.supervisor) } }) else { return }
        mainloop.withLock { supervisor.useChannels(positions) }
    }

    /// Corked, the stream stops running: the server asks for no audio (`render` is not called)
    /// and the sink may suspend; uncorked, it starts at once with freshly rendered audio.
    /// Kept across reconnections. Does nothing before `start`.
    public func setCorked(_ corked: Bool) {
        guard let (mainloop, supervisor) = lifecycle.withLock({ $0.map { ($0.mainloop, $0.supervisor) } }) else { return }
        mainloop.withLock { supervisor.setCorked(corked) }
    }

    /// Output latency: how long the frames of a write wait to be played, on average (buffered
    /// in the server plus the sink's own), from pa_stream_get_latency at each write; nil while
    /// no stream is playing.
    public var measuredLatencySeconds: Double? { statistics.latencySeconds }
    /// The buffer asked of the server now: the configured target, or more after underflows
    /// on a busy machine (`AdaptiveBuffer`); nil while no stream plays.
    public var bufferTargetSeconds: Double? { statistics.targetLatencySeconds }
    public var underrunCount: Int { statistics.underrunCount }
    /// When the latest underflow notices reached us, newest first (CLOCK_MONOTONIC seconds).
    public var recentUnderrunsAtMonotonicSeconds: [Double] { statistics.recentUnderrunsAtMonotonicSeconds }
    /// How many times playback resumed after the server went away.
    public var reconnectCount: Int { statistics.reconnectCount }

    private func takeRunning() -> Running? {
        lifecycle.withLock { running in
            let taken = running
            running = nil
            return taken
        }
    }

    private func joinOutputStoppedFromItsOwnThread() {
        let stopped = lifecycle.withLock { running -> Running? in
            guard let current = running, current.stoppedFromMainloopThread else { return nil }
            running = nil
            return current
        }
        stopped?.mainloop.stopAndJoin()
    }
}
