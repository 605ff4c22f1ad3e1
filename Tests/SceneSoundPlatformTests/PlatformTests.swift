import Glibc
import Testing
import Synchronization
@testable import SceneSoundPlatform

@Suite struct ReconnectBackoffTests {
    @Test func doublesUpToTheCeilingAndResets() {
        var backoff = ReconnectBackoff(initialSeconds: 0.05, maximumSeconds: 1)
        let delays = (0 ..< 7).map { _ in backoff.nextDelaySeconds() }
        #expect(delays == [0.05, 0.1, 0.2, 0.4, 0.8, 1.0, 1.0])
        backoff.reset()
        #expect(backoff.nextDelaySeconds() == 0.05)
    }

    @Test func aCeilingBelowTheStartIsTheStart() {
        var backoff = ReconnectBackoff(initialSeconds: 0.5, maximumSeconds: 0.1)
        #expect(backoff.nextDelaySeconds() == 0.5)
        #expect(backoff.nextDelaySeconds() == 0.5)
    }
}

@Suite struct OneShotTests {
    @Test func aValueFromAnotherThreadWakesTheWaiterAndTheFirstWins() throws {
        let shot = OneShot<Int>()
        let thread = try PlatformThread {
            #expect(shot.fulfill(1))
            #expect(!shot.fulfill(2))
        }
        #expect(shot.wait(timeoutSeconds: 10) == 1)
        thread.join()
        #expect(shot.current == 1)
        #expect(shot.wait() == 1)
    }

    @Test func aTimeoutReturnsNilNoSooner() {
        let shot = OneShot<Int>()
        let start = MonotonicClock.nowSeconds()
        #expect(shot.wait(timeoutSeconds: 0.05) == nil)
        #expect(MonotonicClock.nowSeconds() - start >= 0.05)
        #expect(shot.current == nil)
    }
}

@Suite struct PlatformThreadTests {
    @Test func runsItsBodyOnAThreadOfItsOwn() throws {
        let ranOnItself = OneShot<Bool>()
        let identity = OneShot<PlatformThread>()
        let thread = try PlatformThread { ranOnItself.fulfill(identity.wait().isCurrent) }
        identity.fulfill(thread)
        thread.join()
        #expect(ranOnItself.current == true)
        #expect(!thread.isCurrent)
    }

    @Test func aDetachedThreadEndsOnItsOwn() throws {
        let done = OneShot<Bool>()
        _ = try PlatformThread(detached: true) { done.fulfill(true) }
        #expect(done.wait(timeoutSeconds: 10) == true)
    }

    /// The render threads ask for SCHED_FIFO; as root (CI) they get it, otherwise whatever is
    /// permitted — either way what is reported is what the thread runs with.
    @Test func schedulingReportsWhatTheThreadGot() throws {
        let result = OneShot<(ThreadScheduling, ThreadScheduling)>()
        let thread = try PlatformThread {
            let requested = ThreadScheduling.requestRealtimeForCurrentThread()
            result.fulfill((requested, ThreadScheduling.current()))
        }
        thread.join()
        let (requested, current) = try #require(result.current)
        #expect(requested == current)
        if geteuid() == 0 { #expect(requested == .realtimeFIFO(priority: ThreadScheduling.realtimePriority)) }
        #expect(ThreadScheduling.current() == .normal)  // the test's own thread is untouched
    }

    /// What a real-time render thread starts (a thread here; a process alike) runs at normal
    /// scheduling, not above every normal thread by inheritance.
    @Test func aThreadARealtimeThreadStartsIsNotRealtime() throws {
        let result = OneShot<(ThreadScheduling, ThreadScheduling)>()
        let thread = try PlatformThread {
            let requested = ThreadScheduling.requestRealtimeForCurrentThread()
            let started = OneShot<ThreadScheduling>()
            guard let inner = try? PlatformThread({ started.fulfill(ThreadScheduling.current()) }) else { return }
            inner.join()
            result.fulfill((requested, started.current ?? .realtimeFIFO(priority: 0)))
        }
        thread.join()
        let (requested, started) = try #require(result.current)
        if geteuid() == 0 { #expect(requested == .realtimeFIFO(priority: ThreadScheduling.realtimePriority)) }
        #expect(started == .normal, "a thread started by a thread at \(requested) runs at \(started)")
    }
}

@Suite struct MonotonicClockTests {
    @Test func neverGoesBackAndThreadTimeCountsWork() {
        let wallBefore = MonotonicClock.nowNanoseconds()
        let cpuBefore = MonotonicClock.threadCPUNanoseconds()
        var sink = 0.0
        for i in 0 ..< 2_000_000 { sink += sin(Double(i)) }
        #expect(sink.isFinite)
        let cpu = MonotonicClock.threadCPUNanoseconds() - cpuBefore
        let wall = MonotonicClock.nowNanoseconds() - wallBefore
        #expect(cpu > 0)
        #expect(wall >= cpu / 2)  // one thread cannot use more CPU than time passed (slack for clock granularity)
        #expect(MonotonicClock.deadlineSeconds(after: nil) == nil)
        #expect(MonotonicClock.deadlineSeconds(after: 1)! > MonotonicClock.nowSeconds())
    }
}

@Suite struct DoorbellTests {
    /// Whether the doorbell's pipe is readable within `milliseconds`.
    private func readable(_ doorbell: Doorbell, withinMilliseconds milliseconds: CInt) -> Bool {
        var watch = pollfd(fd: doorbell.readDescriptor, events: Int16(POLLIN), revents: 0)
        return poll(&watch, 1, milliseconds) == 1 && watch.revents & Int16(POLLIN) != 0
    }

    @Test func aRingFromAnotherThreadWakesTheWatcherOnceUntilAnswered() throws {
        let doorbell = Doorbell()
        #expect(!readable(doorbell, withinMilliseconds: 0))
        #expect(!doorbell.answer())
        let wrote = Atomic<Int>(0)
        let thread = try PlatformThread {
            for _ in 0 ..< 1000 where doorbell.ring() { wrote.add(1, ordering: .relaxed) }
        }
        #expect(readable(doorbell, withinMilliseconds: 10_000))
        thread.join()
        // A thousand rings before any answer: one byte written, the rest coalesced.
        #expect(wrote.load(ordering: .relaxed) == 1)
        #expect(doorbell.isRung)
        #expect(doorbell.answer())
        #expect(!readable(doorbell, withinMilliseconds: 0))
        #expect(!doorbell.isRung)
        // Answered: the next ring writes again.
        #expect(doorbell.ring())
        #expect(readable(doorbell, withinMilliseconds: 0))
        #expect(doorbell.answer())
        #expect(!doorbell.answer())
    }
}

@Suite struct LatestRecordsTests {
    @Test func keepsTheLatestNewestFirstAndCountsEveryOne() {
        let records = LatestRecords(keeping: 4)
        #expect(records.newestFirst.isEmpty && records.count == 0)
        for word: UInt64 in 1 ... 3 { records.record(word) }
        #expect(records.newestFirst == [3, 2, 1])
        for word: UInt64 in 4 ... 10 { records.record(word) }
        #expect(records.newestFirst == [10, 9, 8, 7], "only the latest \(records.kept)")
        #expect(records.count == 10)
    }
}
