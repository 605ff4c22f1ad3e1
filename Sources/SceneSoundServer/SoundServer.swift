import Foundation
import Logging
import NIOCore
import NIOPosix
import SceneSoundEngine
import SceneSoundOutputs
import SceneSoundProtocol
import SceneSoundPulse
import SceneSoundWindows

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
    private var windowSource: WindowSource?
    private var attentionAdapter: WindowSourceAttention?
    private var openTrackChannel: Channel?
    private var oscChannel: Channel?

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
            core.resting()
            self.logger.debug("nothing sounding: the output and the tick rest")
            // A closed window's scene still has its minute to run out: one tick then.
            if let seconds = core.scenes.registry.secondsUntilNextExpiry {
                let core = core
                eventLoop.scheduleTask(in: .nanoseconds(Int64((seconds + 0.01) * 1e9))) { core.tick() }
            }
        }
        rest.startTicking = { [unowned self] in startTicking() }
        core.commands.onWork = { [rest] in rest.wake(for: "new work for the engine") }
        core.outputDevices.eventLoop = eventLoop
        core.outputDevices.useChannels = { [output] layout in output.useChannels(layout) }
    }

    /// The output device now playing (the daemon's `SinkWatch` reports it; nil: unknown), on
    /// the event loop: the rendering and the device's settings follow at once.
    public func outputDeviceChanged(_ device: OutputDevice?) {
        let core = core
        eventLoop.execute { core.outputDevices.deviceChanged(device) }
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
        try rest.listen()
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
        try? oscChannel?.close().wait()
        rest.stopListening()
        windowSource?.stop()
        try? group.syncShutdownGracefully()
    }

    // MARK: Windows

    /// Follows the windows of the source `makeSource` builds (X11, a compositor), given the
    /// closure its snapshots go to, and anchors scenes to them.
    public func startWindowTracking(settings: WindowAnchoringSettings = .init(),
                                    makeSource: (@escaping @Sendable (WindowSnapshot) -> Void) -> WindowSource) {
        let core = core, loop = eventLoop
        let source = makeSource { snapshot in
            // Handed to the event loop; the source's thread never waits on the server.
            loop.execute { core.applyWindows(snapshot) }
        }
        try? eventLoop.submit {
            core.anchorToWindows(settings: settings)
            // Sources that re-read on a timer do so only while something plays.
            core.playingChanged = { [weak source] playing in source?.setSoundsPlaying(playing) }
            self.windowSource = source
            let attention = WindowSourceAttention(source: source)
            self.attentionAdapter = attention  // alertAttention holds it weakly
            self.alertAttention = attention
        }.wait()
        source.start()
        logger.info("following windows: \(source.sourceDescription)")
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

    /// Listens for OSC head poses on `host`:`port` (127.0.0.1 unless the user names another
    /// address): IEM SceneRotator's two addresses, plus `extra` (another sender's).
    public func startOSC(host: String = "127.0.0.1", port: Int, extra: OSCPoseFormat? = nil) throws {
        let core = core, rate = configuration.maximumOSCPacketsPerSecond, logger = logger
        let formats = [extra].compactMap { $0 } + [.sceneRotatorYawPitchRoll, .sceneRotatorQuaternions]
        let bootstrap = DatagramBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        OSCHandler(head: core.head, formats: formats, packetsPerSecond: rate, logger: logger))
                }
            }
        do {
            oscChannel = try bootstrap.bind(host: host, port: port).wait()
        } catch {
            throw ServerError("cannot listen for OSC on \(host):\(port): \(error)")
        }
        logger.info("OSC input on \(host):\(port): \(formats.map(\.description).joined(separator: "; "))")
    }
}

public struct ServerError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Alerts flag their window through the window source (X11: `_NET_WM_STATE_DEMANDS_ATTENTION`).
final class WindowSourceAttention: AlertAttention {
    private let source: WindowSource
    init(source: WindowSource) { self.source = source }

    func alertNeedsAttention(windowID: UInt32, sceneID: String) {
        source.setDemandsAttention(windowID: windowID, true)
    }
}
