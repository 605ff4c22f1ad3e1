import Foundation
import Logging
import NIOCore
import NIOPosix
import SceneSoundEngine
import SceneSoundOutputs
import SceneSoundProtocol
import SceneSoundX11

/// The daemon's server: the Unix socket and the opentrack port (SwiftNIO, one event loop), the
/// tick timer and the window tracker around a `ServerCore`, which holds the protocol and the
/// state. Everything the core touches is confined to that loop.
public final class SoundServer: @unchecked Sendable {
    public let configuration: ServerConfiguration
    public let engine: Engine
    public let output: OutputBackend
    let logger: Logger
    let eventLoop: EventLoop
    let core: ServerCore
    private let group: MultiThreadedEventLoopGroup
    private var serverChannel: Channel?
    private var tickTask: RepeatedTask?
    private var windowTracker: WindowTracker?
    private var attentionAdapter: X11AlertAttention?
    private var openTrackChannel: Channel?

    public init(configuration: ServerConfiguration, engine: Engine, output: OutputBackend,
                hrtfPath: String, logger: Logger) {
        self.configuration = configuration
        self.engine = engine
        self.output = output
        self.logger = logger
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        eventLoop = group.next()
        core = ServerCore(configuration: configuration, engine: engine, outputStatus: { output.status },
                          hrtfPath: hrtfPath, logger: logger)
        rest = OutputRest(engine: engine, output: output, eventLoop: eventLoop, logger: logger)
        rest.stopTicking = { [unowned self] in
            tickTask?.cancel()
            tickTask = nil
            self.logger.debug("nothing sounding: the output and the tick rest")
            // A closed window's scene still has its minute to run out: one tick then.
            if let seconds = core.scenes.registry.secondsUntilNextExpiry {
                let core = core
                eventLoop.scheduleTask(in: .nanoseconds(Int64((seconds + 0.01) * 1e9))) { core.tick() }
            }
        }
        rest.startTicking = { [unowned self] in startTicking() }
        core.commands.onWork = { [rest] in rest.wake(for: "new work for the engine") }
    }

    /// The output's and the tick's rest while nothing sounds.
    let rest: OutputRest

    /// Set on the event loop by `stop`: no tick starts again.
    private var stopping = false

    private func startTicking() {
        guard !stopping else { return }
        let core = core, rest = rest
        tickTask = eventLoop.scheduleRepeatedTask(initialDelay: .zero,
                                                  delay: .nanoseconds(Int64(configuration.tickSeconds * 1e9))) { _ in
            core.tick()
            rest.considerResting(settled: core.isSettled)
        }
    }

    /// Binds the socket (directory 0700, socket 0600) and starts serving.
    public func start() throws {
        try SocketPlacement.prepare(path: configuration.socketPath)
        let core = core, configuration = configuration, logger = logger
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: 64)
            // Past 1 MiB of unread output the channel turns unwritable (see ClientSession.tick).
            .childChannelOption(ChannelOptions.writeBufferWaterMark, value: .init(low: 256 * 1024, high: 1024 * 1024))
            // A client's EOF is seen as such, so a graceful close can wait for it.
            .childChannelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    try pipeline.addHandler(PeerAdmissionHandler(configuration: configuration, sessions: core.sessions,
                                                                 counters: core.counters, logger: logger))
                    try core.addSession(to: pipeline)
                }
            }
        // Created 0600 (bind makes the file under the umask; listening starts straight after, so
        // a chmod afterwards would leave a moment at the looser mode).
        let previousMask = umask(0o177)
        let bound = Result { try bootstrap.bind(unixDomainSocketPath: configuration.socketPath).wait() }
        umask(previousMask)
        let channel = try bound.get()
        guard chmod(configuration.socketPath, 0o600) == 0 else {
            throw ServerError("cannot restrict \(configuration.socketPath) to its owner: \(String(cString: strerror(errno)))")
        }
        serverChannel = channel
        try eventLoop.submit { self.startTicking() }.wait()
        logger.info("listening on \(configuration.socketPath)")
    }

    /// Stops accepting first (and removes the socket), so that no client connects to a server
    /// on its way out, then ends every session and stops the event loop.
    public func stop() {
        try? serverChannel?.close().wait()
        unlink(configuration.socketPath)
        let core = core
        try? eventLoop.submit { [self] in
            stopping = true
            tickTask?.cancel()
            tickTask = nil
            core.shutDown()
        }.wait()
        try? openTrackChannel?.close().wait()
        windowTracker?.stop()
        try? group.syncShutdownGracefully()
    }

    // MARK: Windows

    /// Follows the windows of an X display (nil: $DISPLAY) and anchors scenes to them.
    public func startWindowTracking(displayName: String?, settings: WindowAnchoringSettings = .init()) {
        let core = core, loop = eventLoop
        let tracker = WindowTracker(configuration: .init(displayName: displayName)) { snapshot in
            // Handed to the event loop; the tracker thread never waits on the server.
            loop.execute { core.applyWindows(snapshot) }
        }
        try? eventLoop.submit {
            core.anchorToWindows(settings: settings)
            self.windowTracker = tracker
            let attention = X11AlertAttention(tracker: tracker)
            self.attentionAdapter = attention  // alertAttention holds it weakly
            self.alertAttention = attention
        }.wait()
        tracker.start()
        logger.info("following windows on display \(displayName ?? "$DISPLAY")")
    }

    // MARK: Head

    /// Listens for opentrack on 127.0.0.1:`port` (loopback only: head poses are the user's).
    public func startOpenTrack(port: Int) throws {
        let core = core, rate = configuration.maximumOpenTrackPacketsPerSecond
        let bootstrap = DatagramBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(OpenTrackHandler(head: core.head, packetsPerSecond: rate))
                }
            }
        do {
            openTrackChannel = try bootstrap.bind(host: "127.0.0.1", port: port).wait()
        } catch {
            throw ServerError("cannot listen for opentrack on 127.0.0.1:\(port): \(error)")
        }
        logger.info("opentrack input on 127.0.0.1:\(port)")
    }
}

public struct ServerError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Alerts flag their window through the tracker's connection (`_NET_WM_STATE_DEMANDS_ATTENTION`).
final class X11AlertAttention: AlertAttention {
    private let tracker: WindowTracker
    init(tracker: WindowTracker) { self.tracker = tracker }

    func alertNeedsAttention(windowID: UInt32, sceneID: String) {
        tracker.setDemandsAttention(windowID: windowID)
    }
}
