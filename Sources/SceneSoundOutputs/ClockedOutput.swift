import Glibc
import SceneSoundEngine
import Synchronization

/// Renders on its own real-time-paced thread: one block per block duration on the monotonic
/// clock (absolute deadlines, so it never drifts). Each block goes to a sink closure — the
/// null output drops it, the wav output queues it for its writer thread.
final class ClockedRenderThread: @unchecked Sendable {
    private let running = Atomic<Bool>(false)
    private var thread: pthread_t?
    private let engine: Engine
    private let deliver: (UnsafeMutablePointer<Float>, Int) -> Void

    init(engine: Engine, deliver: @escaping (UnsafeMutablePointer<Float>, Int) -> Void) {
        self.engine = engine
        self.deliver = deliver
    }

    func start() throws {
        running.store(true, ordering: .releasing)
        let box = Unmanaged.passRetained(self)
        var handle = pthread_t()
        let result = pthread_create(&handle, nil, { context in
            let me = Unmanaged<ClockedRenderThread>.fromOpaque(context!).takeRetainedValue()
            me.run()
            return nil
        }, box.toOpaque())
        guard result == 0 else {
            box.release()
            running.store(false, ordering: .releasing)
            throw OutputError("cannot start the render thread (pthread_create: \(result))")
        }
        thread = handle
    }

    func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing), let thread else { return }
        pthread_join(thread, nil)
        self.thread = nil
    }

    /// Blocks finished after their period ended: what a sound card would have heard as an
    /// underrun.
    var lateBlockCount: Int { lateBlocks.load(ordering: .relaxed) }
    /// Of those, the blocks whose rendering itself took more CPU time than the block lasts: late
    /// by the engine's own fault, not because the thread was kept from running.
    var overloadedBlockCount: Int { overloadedBlocks.load(ordering: .relaxed) }
    private let lateBlocks = Atomic<Int>(0)
    private let overloadedBlocks = Atomic<Int>(0)
    /// The most CPU time one block took to render, and when (since the thread started): where
    /// to look when a block overran.
    var slowestBlock: (cpuSeconds: Double, atSeconds: Double) {
        (Double(slowestBlockNanoseconds.load(ordering: .relaxed)) * 1e-9,
         Double(slowestBlockAtNanoseconds.load(ordering: .relaxed)) * 1e-9)
    }
    private let slowestBlockNanoseconds = Atomic<Int>(0)
    private let slowestBlockAtNanoseconds = Atomic<Int>(0)

    /// How the thread got scheduled (set when it starts).
    let scheduling = RenderThreadSchedulingRecord()

    private func run() {
        scheduling.promoteIfNew()
        let block = engine.configuration.blockFrames
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: block * 2)
        defer { buffer.deallocate() }
        let period = Int(Double(block) / engine.configuration.sampleRateHz * 1e9)
        let started = Self.now()
        var deadline = started
        while running.load(ordering: .acquiring) {
            let cpuBefore = Self.threadCPUTime()
            engine.render(into: buffer)
            deliver(buffer, block)
            let cpu = Self.threadCPUTime() - cpuBefore
            deadline += period
            let now = Self.now()
            if cpu > slowestBlockNanoseconds.load(ordering: .relaxed) {
                slowestBlockNanoseconds.store(cpu, ordering: .relaxed)
                slowestBlockAtNanoseconds.store(now - started, ordering: .relaxed)
            }
            if now > deadline {
                lateBlocks.add(1, ordering: .relaxed)
                if cpu > period { overloadedBlocks.add(1, ordering: .relaxed) }
                // Far behind (the machine stalled): start afresh rather than burst to catch up.
                if now - deadline > 20 * period { deadline = now }
                continue
            }
            var wake = timespec(tv_sec: deadline / 1_000_000_000, tv_nsec: deadline % 1_000_000_000)
            clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &wake, nil)
        }
    }

    private static func threadCPUTime() -> Int {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return ts.tv_sec * 1_000_000_000 + ts.tv_nsec
    }

    private static func now() -> Int {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return ts.tv_sec * 1_000_000_000 + ts.tv_nsec
    }
}

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

    public var status: OutputStatus {
        OutputStatus(kind: "null", underruns: thread?.lateBlockCount ?? 0, overloadedBlocks: thread?.overloadedBlockCount ?? 0,
                     slowestBlock: thread?.slowestBlock, renderThreadScheduling: thread?.scheduling.current)
    }
}
