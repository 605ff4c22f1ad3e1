import CPulse

/// A one-shot timer on a PulseAudio mainloop (threaded or plain): `body` runs on the loop's
/// thread after `seconds`. The capture's session and its sweep (in the daemon and in the guard)
/// wait on the server this way, never by sleeping.
enum PulseTimer {
    static func after(_ api: UnsafeMutablePointer<pa_mainloop_api>, seconds: Double, _ body: @escaping () -> Void) {
        final class Pending { let body: () -> Void; init(_ b: @escaping () -> Void) { body = b } }
        let userdata = Unmanaged.passRetained(Pending(body)).toOpaque()
        var due = timeval()
        pa_gettimeofday(&due)
        pa_timeval_add(&due, pa_usec_t(max(0, seconds) * 1_000_000))
        let timer = api.pointee.time_new(api, &due, { api, timer, _, userdata in
            api!.pointee.time_free(timer)
            Unmanaged<Pending>.fromOpaque(userdata!).takeRetainedValue().body()
        }, userdata)
        if timer == nil { Unmanaged<Pending>.fromOpaque(userdata).release() }
    }
}
