import Glibc
import Logging
import NIOCore
import NIOPosix
import SceneSoundEngine
import SceneSoundOutputs
import SceneSoundPlatform
import Synchronization

/// Silent when silent: once nothing has sounded for `EngineConfiguration.restAfterSeconds` (every
/// stream empty, the tails below −90 dBFS) and no command waits, the output stops asking for
/// audio (so the sound server may suspend the sink and the card sleep) and the server's tick
/// stops, so that the daemon only waits on events. The first piece of new work (a stream
/// added, a client's audio, a captured app's audio) wakes both at once.
final class OutputRest: @unchecked Sendable {
    private let engine: Engine
    private let output: OutputBackend
    private let eventLoop: EventLoop
    /// Written on the event loop; read anywhere (the capture's threads) to wake cheaply.
    private let resting = Atomic<Bool>(false)
    /// Times the output went to rest and woke, for status and tests.
    private let rests = Atomic<Int>(0)
    /// Called on the event loop: stop the tick, start it again.
    var stopTicking: () -> Void = {}
    var startTicking: () -> Void = {}

    private let logger: Logger
    /// Rung by `wakeFromAnyThread`, answered on the event loop.
    private let doorbell = Doorbell()
    private var doorbellChannel: Channel?

    init(engine: Engine, output: OutputBackend, eventLoop: EventLoop, logger: Logger) {
        self.logger = logger
        self.engine = engine
        self.output = output
        self.eventLoop = eventLoop
    }

    /// Starts answering the doorbell on the event loop (called once, as the server starts).
    func listen() throws {
        let descriptor = dup(doorbell.readDescriptor)
        guard descriptor >= 0 else { throw ServerError("cannot watch the output's doorbell: \(String(cString: strerror(errno)))") }
        do {
            doorbellChannel = try NIOPipeBootstrap(group: eventLoop)
                .channelInitializer { [self] channel in
                    channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(DoorbellAnswer(rest: self)) }
                }
                .takingOwnershipOfDescriptor(input: descriptor).wait()
        } catch {
            close(descriptor)
            throw error
        }
    }

    /// Stops answering (as the server stops).
    func stopListening() {
        try? doorbellChannel?.close().wait()
        doorbellChannel = nil
    }

    var isResting: Bool { resting.load(ordering: .acquiring) }
    var restCount: Int { rests.load(ordering: .relaxed) }

    /// After each tick, on the event loop: rest if the engine has been quiet long enough and
    /// nothing is on its way to it.
    func considerResting(settled: Bool) {
        guard settled, !isResting, engine.isQuiet else { return }
        resting.store(true, ordering: .releasing)
        rests.add(1, ordering: .relaxed)
        output.setResting(true)
        stopTicking()
    }

    /// On the event loop: new work. The engine counts quiet time from zero again, the output
    /// asks for audio at once, and the tick runs.
    func wake(for reason: @autoclosure () -> String) {
        guard isResting else { return }
        logger.debug("the output wakes: \(reason())")
        engine.requestActivity()
        resting.store(false, ordering: .releasing)
        output.setResting(false)
        startTicking()
    }

    /// From any thread, the output's data thread included (a captured app's audio on the
    /// PipeWire node): an atomic load while awake; while resting a ring of the doorbell, which
    /// neither allocates nor locks, answered on the event loop.
    func wakeFromAnyThread() {
        guard isResting else { return }
        doorbell.ring()
    }

    /// On the event loop, the doorbell's pipe readable.
    fileprivate func answerDoorbell() {
        guard doorbell.answer() else { return }
        wake(for: "a captured app's audio")
    }
}

/// Reads the doorbell's pipe on the event loop; what it reads says only "rung".
private final class DoorbellAnswer: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    private let rest: OutputRest
    init(rest: OutputRest) { self.rest = rest }
    func channelRead(context: ChannelHandlerContext, data: NIOAny) { rest.answerDoorbell() }
}
