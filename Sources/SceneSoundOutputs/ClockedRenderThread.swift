import Glibc
import SceneSoundEngine
import Synchronization
import SceneSoundPlatform

/// Renders on its own real-time-paced thread: one block per block duration on the monotonic
/// clock (absolute deadlines, so it never drifts). Each block goes to a sink closure — the
/// null output drops it, the wav output queues it for its writer thread.
final class ClockedRenderThread: @unchecked Sendable {
    private let running = Atomic<Bool>(false)
    private var thread: PlatformThread?
    /// The scheduling the render thread obtained (real-time where permitted).
    let scheduling = RealtimeSchedulingRequest()
    private let engine: Engine
    private let deliver: (UnsafeMutablePointer<Float>, Int) -> Void

    /// Parked, the thread sleeps on `wakeUp` between blocks instead of rendering.
    private let parked = Atomic<Bool>(false)
    private let wakeUp: UnsafeMutablePointer<sem_t>

    init(engine: Engine, deliver: @escaping (UnsafeMutablePointer<Float>, Int) -> Void) {
        self.engine = engine
        self.deliver = deliver
        wakeUp = .allocate(capacity: 1)
        sem_init(wakeUp, 0, 0)
    }

    deinit {
        sem_destroy(wakeUp)
        wakeUp.deallocate()
    }

    /// Parked: no more blocks until unparked (then at once, on a fresh clock).
    func setParked(_ park: Bool) {
        guard parked.exchange(park, ordering: .acquiringAndReleasing) != park else { return }
        if !park { sem_post(wakeUp) }
    }

    func start() throws {
        running.store(true, ordering: .releasing)
        do {
            thread = try PlatformThread { [self] in run() }
        } catch {
            running.store(false, ordering: .releasing)
            throw OutputError("cannot start the render thread (\(error))")
        }
    }

    func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing), let thread else { return }
        sem_post(wakeUp)
        thread.join()
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

    private func run() {
        scheduling.ensureRequestedOnCurrentThread()
        let block = engine.configuration.blockFrames
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: block * 2)
        defer { buffer.deallocate() }
        let period = Int(Double(block) / engine.configuration.sampleRateHz * 1e9)
        let started = MonotonicClock.nowNanoseconds()
        var deadline = started
        while running.load(ordering: .acquiring) {
            if parked.load(ordering: .acquiring) {
                // Between blocks: nothing is being rendered, so this wait breaks no deadline.
                while parked.load(ordering: .acquiring), running.load(ordering: .acquiring) { sem_wait(wakeUp) }
                deadline = MonotonicClock.nowNanoseconds()
                continue
            }
            let cpuBefore = MonotonicClock.threadCPUNanoseconds()
            engine.render(into: buffer)
            deliver(buffer, block)
            let cpu = MonotonicClock.threadCPUNanoseconds() - cpuBefore
            deadline += period
            let now = MonotonicClock.nowNanoseconds()
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
}
