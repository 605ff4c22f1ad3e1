import CPulse
import Foundation
import SceneSoundPulse

/// The guard's own view of the sound server while the capture rests: every playback-stream
/// event (an app starting, resuming, pausing) makes `descriptor` readable. The guard then asks
/// the daemon whether it is alive (a resting daemon sends no heartbeat, and one that hung while
/// resting would otherwise leave a new app silent on our sink). A connection of its own on a
/// libpulse thread that only waits on the server's socket: no timer, no wake-up while nothing
/// happens.
final class GuardServerWatch {
    private let mainloop: PulseMainloop
    private let context: OpaquePointer
    /// Read end: readable after each event. Write end: written by the mainloop thread.
    let descriptor: Int32
    private let writeEnd: Int32

    /// nil if the server cannot be reached now (the guard then relies on the heartbeat alone).
    init?(serverAddress: String?) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return nil }
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        guard let mainloop = try? PulseMainloop(threadName: "guard-watch"),
              let context = pa_context_new(mainloop.api, "SceneSound capture guard (watch)") else {
            close(ends[0]); close(ends[1])
            return nil
        }
        self.mainloop = mainloop
        self.context = context
        descriptor = ends[0]
        writeEnd = ends[1]
        let userdata = Unmanaged.passUnretained(self).toOpaque()
        pa_context_set_state_callback(context, { context, _ in
            guard pa_context_get_state(context) == PA_CONTEXT_READY,
                  let operation = pa_context_subscribe(context, PA_SUBSCRIPTION_MASK_SINK_INPUT, nil, nil) else { return }
            pa_operation_unref(operation)
        }, userdata)
        pa_context_set_subscribe_callback(context, { _, _, _, userdata in
            let watch = Unmanaged<GuardServerWatch>.fromOpaque(userdata!).takeUnretainedValue()
            var byte: UInt8 = 1
            _ = write(watch.writeEnd, &byte, 1)  // full pipe: an event is already waiting
        }, userdata)
        // On failure deinit undoes this (every property is set by now).
        guard pulseConnect(context, serverAddress: serverAddress) == 0, (try? mainloop.start()) != nil else { return nil }
    }

    deinit {
        mainloop.withLock {
            pa_context_set_subscribe_callback(context, nil, nil)
            pa_context_set_state_callback(context, nil, nil)
            pa_context_disconnect(context)
        }
        mainloop.stopAndJoin()
        pa_context_unref(context)
        close(descriptor)
        close(writeEnd)
    }

    /// Empties the pipe; true if any event had come.
    func drain() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 64)
        var any = false
        while read(descriptor, &buffer, buffer.count) > 0 { any = true }
        return any
    }
}
