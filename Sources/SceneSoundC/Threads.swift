import Glibc

/// A value set once and awaited by any number of threads. The client module's equivalent is
/// internal to it; this one is all the C layer needs (no timeouts).
final class Latch<Value: Sendable>: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var value: Value?  // guarded by `mutex`

    init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// The first value wins; later ones are ignored.
    func set(_ newValue: Value) {
        pthread_mutex_lock(mutex)
        if value == nil {
            value = newValue
            pthread_cond_broadcast(condition)
        }
        pthread_mutex_unlock(mutex)
    }

    func wait() -> Value {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while true {
            if let value { return value }
            pthread_cond_wait(condition, mutex)
        }
    }
}

/// A plain pthread running one closure (no Dispatch or Foundation: the library carries only
/// the Swift standard library).
final class WorkerThread: @unchecked Sendable {
    private let thread: pthread_t

    private final class Body {
        let run: () -> Void
        init(_ run: @escaping () -> Void) { self.run = run }
    }

    init(_ body: @escaping @Sendable () -> Void) throws(CFailure) {
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { raw in
            Unmanaged<Body>.fromOpaque(raw!).takeRetainedValue().run()
            return nil
        }, context)
        guard result == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            throw CFailure(StatusCode.noResources, "cannot start the render thread (error \(result))")
        }
        self.thread = thread
    }

    var isCurrent: Bool { pthread_equal(pthread_self(), thread) != 0 }

    /// Waits for the thread to end, or lets it finish on its own when called on it. Runs once.
    func joinOrDetach() {
        if isCurrent { pthread_detach(thread) } else { pthread_join(thread, nil) }
    }
}
