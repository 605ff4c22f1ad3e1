import Glibc

/// A plain pthread running one closure: the connection's reader, or a detached worker. Not
/// Dispatch or Foundation, because this module is linked into a C library with the Swift
/// stdlib only.
final class ReaderThread: @unchecked Sendable {
    private var thread: pthread_t

    private final class Body {
        let run: () -> Void
        init(_ run: @escaping () -> Void) { self.run = run }
    }

    /// Starts the thread. A `detached` thread cleans up after itself and must not be joined.
    init(detached: Bool = false, _ body: @escaping @Sendable () -> Void) throws(ClientError) {
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { raw in
            let body = Unmanaged<Body>.fromOpaque(raw!).takeRetainedValue()
            body.run()
            return nil
        }, context)
        guard result == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            throw .disconnected(reason: "cannot start a thread (\(UnixSocket.errnoText(result)))")
        }
        self.thread = thread
        if detached { pthread_detach(thread) }
    }

    /// Whether the calling thread is this one (joining yourself would deadlock).
    var isCurrent: Bool { pthread_equal(pthread_self(), thread) != 0 }

    /// Waits for the thread to end, or detaches it when called on the thread itself.
    /// The caller guarantees this runs once.
    func joinOrDetach() {
        if isCurrent {
            pthread_detach(thread)
        } else {
            pthread_join(thread, nil)
        }
    }
}
