import SceneSoundEngine

/// `--output null`: renders in real time and discards the mix (benchmarks, tests).
public final class NullOutput: OutputBackend, @unchecked Sendable {
    private var thread: ClockedRenderThread?

    public init() {}

    public func start(engine: Engine) throws {
        let thread = ClockedRenderThread(engine: engine) { _, _ in
            engine.markDelivered(throughFrame: engine.renderedFrames)
        }
        try thread.start()
        self.thread = thread
    }

    public func stop() throws { thread?.stop() }

    public func setResting(_ resting: Bool) { thread?.setParked(resting) }

    public var status: OutputStatus {
        OutputStatus(kind: "null", underruns: thread?.lateBlockCount ?? 0, overloadedBlocks: thread?.overloadedBlockCount ?? 0,
                     slowestBlock: thread?.slowestBlock,
                     renderThreadScheduling: thread?.scheduling.obtained?.description)
    }
}
