import CPulse

/// libpulse's threaded mainloop: one thread that runs every callback of our contexts and
/// streams (and therefore the render), with a lock that other threads take to touch them.
public final class PulseMainloop: @unchecked Sendable {
    private let mainloop: OpaquePointer
    public let api: UnsafeMutablePointer<pa_mainloop_api>

    public init(threadName: String) throws(PulseOutputError) {
        guard let mainloop = pa_threaded_mainloop_new() else {
            throw .mainloopUnavailable("pa_threaded_mainloop_new failed")
        }
        self.mainloop = mainloop
        api = pa_threaded_mainloop_get_api(mainloop)
        pa_threaded_mainloop_set_name(mainloop, threadName)
    }

    /// Joins the thread if it still runs, then frees.
    deinit {
        // A thread cannot join itself: if the last reference goes away inside a callback,
        // the loop is told to quit and its memory is left behind rather than crashing.
        if isCurrentThread {
            quitFromItsOwnThread()
            return
        }
        pa_threaded_mainloop_free(mainloop)
    }

    public func start() throws(PulseOutputError) {
        guard pa_threaded_mainloop_start(mainloop) == 0 else {
            throw .mainloopUnavailable("pa_threaded_mainloop_start failed")
        }
    }

    /// Whether the caller is the mainloop thread (inside a callback), where the lock is
    /// already held and must not be taken again (libpulse asserts on it).
    public var isCurrentThread: Bool { pa_threaded_mainloop_in_thread(mainloop) != 0 }

    /// Runs `body` holding the mainloop lock, or directly when already on the mainloop thread.
    public func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        if isCurrentThread { return try body() }
        pa_threaded_mainloop_lock(mainloop)
        defer { pa_threaded_mainloop_unlock(mainloop) }
        return try body()
    }

    /// Stops the thread and waits for it to exit. Must not run on the mainloop thread.
    public func stopAndJoin() {
        precondition(!isCurrentThread, "PulseMainloop.stopAndJoin called on the mainloop thread")
        pa_threaded_mainloop_stop(mainloop)
    }

    /// From the mainloop thread: makes the loop return after this iteration, so the thread
    /// ends by itself. Joining and freeing happen later on another thread.
    public func quitFromItsOwnThread() {
        api.pointee.quit(api, 0)
    }

    /// Runs `body` once on the mainloop thread at its next iteration, outside of any libpulse
    /// callback. Needed to tear a stream down from inside one of its own callbacks: libpulse
    /// goes on using the stream after e.g. the READY state callback returns.
    public func runSoon(_ body: @escaping () -> Void) {
        let action = Unmanaged.passRetained(DeferredAction(body)).toOpaque()
        let event = api.pointee.defer_new(api, { api, event, userdata in
            let action = Unmanaged<DeferredAction>.fromOpaque(userdata!).takeUnretainedValue()
            api!.pointee.defer_free(event)  // one-shot; the destroy callback releases `action`
            action.body()
        }, action)
        guard let event else {  // pa_mainloop cannot fail here; keep the action from leaking anyway
            Unmanaged<DeferredAction>.fromOpaque(action).release()
            return body()
        }
        api.pointee.defer_set_destroy(event) { _, _, userdata in
            Unmanaged<DeferredAction>.fromOpaque(userdata!).release()
        }
    }

    /// A one-shot timer on the mainloop thread, `seconds` from now. The callback's userdata
    /// must stay valid until the timer fired or was cancelled.
    public func scheduleTimer(
        afterSeconds seconds: Double,
        userdata: UnsafeMutableRawPointer,
        callback: pa_time_event_cb_t
    ) -> OpaquePointer? {
        Self.scheduleTimer(on: api, afterSeconds: seconds, userdata: userdata, callback: callback)
    }

    /// The same on any mainloop's API (a plain `pa_mainloop`'s too).
    public static func scheduleTimer(
        on api: UnsafeMutablePointer<pa_mainloop_api>,
        afterSeconds seconds: Double,
        userdata: UnsafeMutableRawPointer,
        callback: pa_time_event_cb_t
    ) -> OpaquePointer? {
        var due = timeval()
        pa_gettimeofday(&due)
        pa_timeval_add(&due, pa_usec_t(max(0, seconds) * 1_000_000))
        return api.pointee.time_new(api, &due, callback, userdata)
    }

    /// A one-shot timer running `body` on the loop's thread `seconds` from now, on any
    /// mainloop's API. Not cancellable: for waits that end by themselves.
    public static func after(_ api: UnsafeMutablePointer<pa_mainloop_api>, seconds: Double, _ body: @escaping () -> Void) {
        let userdata = Unmanaged.passRetained(DeferredAction(body)).toOpaque()
        let timer = scheduleTimer(on: api, afterSeconds: seconds, userdata: userdata) { api, timer, _, userdata in
            api!.pointee.time_free(timer)
            Unmanaged<DeferredAction>.fromOpaque(userdata!).takeRetainedValue().body()
        }
        if timer == nil { Unmanaged<DeferredAction>.fromOpaque(userdata).release() }
    }

    public func cancelTimer(_ timer: OpaquePointer) {
        api.pointee.time_free(timer)
    }
}

private final class DeferredAction {
    let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }
}
