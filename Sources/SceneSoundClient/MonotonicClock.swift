import Glibc

/// `CLOCK_MONOTONIC` in seconds: deadlines for blocking waits, immune to wall-clock changes.
enum MonotonicClock {
    static func nowSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// The deadline `timeoutSeconds` from now, or nil for "wait forever".
    static func deadline(after timeoutSeconds: Double?) -> Double? {
        timeoutSeconds.map { nowSeconds() + max(0, $0) }
    }
}
