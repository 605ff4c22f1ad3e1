import Logging
import NIOCore
import SceneSoundEngine
import SceneSoundOutputs
import Synchronization

/// Silent when silent: once nothing has sounded for `Engine.quietSecondsBeforeIdle` (every
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

    init(engine: Engine, output: OutputBackend, eventLoop: EventLoop, logger: Logger) {
        self.logger = logger
        self.engine = engine
        self.output = output
        self.eventLoop = eventLoop
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

    /// From any thread (a captured app's audio): free while awake.
    func wakeFromAnyThread(for reason: @escaping @autoclosure () -> String) {
        guard isResting else { return }
        eventLoop.execute { [self] in wake(for: reason()) }
    }
}
