import Glibc

/// A plain pthread running one closure: render threads, readers, trackers, workers. Not
/// Dispatch or Foundation, because the client modules are linked into a C library with the
/// Swift standard library only, and render threads need their own scheduling.
package final class PlatformThread: @unchecked Sendable {
    private let thread: pthread_t

    /// Why a thread could not be started: the `pthread_create` error number.
    package struct StartFailure: Error, CustomStringConvertible {
        package let errorNumber: Int32
        package var description: String { "cannot start a thread: \(String(cString: strerror(errorNumber)))" }
    }

    private final class Body {
        let run: () -> Void
        init(_ run: @escaping () -> Void) { self.run = run }
    }

    /// Starts the thread. A `detached` thread cleans up after itself and must not be joined.
    package init(detached: Bool = false, _ body: @escaping @Sendable () -> Void) throws(StartFailure) {
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { raw in
            Unmanaged<Body>.fromOpaque(raw!).takeRetainedValue().run()
            return nil
        }, context)
        guard result == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            throw StartFailure(errorNumber: result)
        }
        self.thread = thread
        if detached { pthread_detach(thread) }
    }

    /// Whether the calling thread is this one (joining yourself would deadlock).
    package var isCurrent: Bool { pthread_equal(pthread_self(), thread) != 0 }

    /// Waits for the thread to end.
    package func join() { pthread_join(thread, nil) }

    /// Waits for the thread to end, or lets it finish on its own when called on the thread
    /// itself (a callback that closes its own connection). The caller guarantees this runs once.
    package func joinOrDetach() {
        if isCurrent { pthread_detach(thread) } else { pthread_join(thread, nil) }
    }
}
