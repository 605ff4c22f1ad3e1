import Glibc

/// The clocks every module reads: `CLOCK_MONOTONIC` for deadlines and latencies (immune to
/// wall-clock changes), and the calling thread's CPU time for render-load accounting. Plain
/// `clock_gettime` calls: safe on the render thread (no allocation, no lock, vDSO).
package enum MonotonicClock {
    @inline(__always)
    package static func nowNanoseconds() -> Int { nanoseconds(CLOCK_MONOTONIC) }

    package static func nowSeconds() -> Double { Double(nowNanoseconds()) * 1e-9 }

    /// The deadline `timeoutSeconds` from now in `nowSeconds()` terms, or nil for "wait forever".
    package static func deadlineSeconds(after timeoutSeconds: Double?) -> Double? {
        timeoutSeconds.map { nowSeconds() + max(0, $0) }
    }

    /// CPU time the calling thread has used: what a render block cost, apart from preemption.
    @inline(__always)
    package static func threadCPUNanoseconds() -> Int { nanoseconds(CLOCK_THREAD_CPUTIME_ID) }

    @inline(__always)
    private static func nanoseconds(_ clock: clockid_t) -> Int {
        var time = timespec()
        clock_gettime(clock, &time)
        return time.tv_sec * 1_000_000_000 + time.tv_nsec
    }
}
