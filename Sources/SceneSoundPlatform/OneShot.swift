import Glibc

/// A value delivered once, by any thread, and awaited by any number of blocked threads, with an
/// optional timeout. This is how blocking APIs sit on callback cores: a completion fulfils it
/// on the reader thread, the caller waits on it.
///
/// A pthread mutex and condition variable rather than `Synchronization.Mutex`, which cannot
/// wait; the condition runs on `CLOCK_MONOTONIC` so timeouts ignore wall-clock changes. No
/// Foundation or Dispatch: the C library links only the Swift standard library.
package final class OneShot<Value: Sendable>: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var value: Value?  // guarded by `mutex`

    package init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Stores `newValue` and wakes every waiter. Later calls are ignored; returns whether this
    /// one won.
    @discardableResult
    package func fulfill(_ newValue: Value) -> Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        guard value == nil else { return false }
        value = newValue
        pthread_cond_broadcast(condition)
        return true
    }

    /// Waits as long as it takes.
    package func wait() -> Value {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while true {
            if let value { return value }
            pthread_cond_wait(condition, mutex)
        }
    }

    /// The value, or nil when `timeoutSeconds` passed first (nil timeout: wait forever).
    package func wait(timeoutSeconds: Double?) -> Value? {
        guard let timeoutSeconds else { return wait() }
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let total = Double(deadline.tv_nsec) / 1e9 + max(0, min(timeoutSeconds, 1e9))
        deadline.tv_sec += Int(total.rounded(.down))
        deadline.tv_nsec = Int((total - total.rounded(.down)) * 1e9)
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while value == nil {
            if pthread_cond_timedwait(condition, mutex, &deadline) == ETIMEDOUT { break }
        }
        return value
    }

    /// The value if it has arrived, without waiting.
    package var current: Value? {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return value
    }
}
