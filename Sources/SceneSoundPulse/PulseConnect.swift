import CPulse

/// Starts connecting `context` to `serverAddress` (a libpulse server string; nil = libpulse's
/// default lookup), never autospawning: a sound server must not start PulseAudio behind the
/// user's back (and libpulse refuses to as root anyway); callers retry instead. Returns
/// libpulse's result: negative when the connection cannot even be started.
public func pulseConnect(_ context: OpaquePointer, serverAddress: String?) -> Int32 {
    guard let serverAddress else { return pa_context_connect(context, nil, PA_CONTEXT_NOAUTOSPAWN, nil) }
    return serverAddress.withCString { pa_context_connect(context, $0, PA_CONTEXT_NOAUTOSPAWN, nil) }
}

/// Disconnects `context` if it is connected or connecting (disconnecting one that failed or
/// ended is an error in libpulse); the caller still holds its reference.
public func pulseDisconnect(_ context: OpaquePointer) {
    if PA_CONTEXT_IS_GOOD(pa_context_get_state(context)) != 0 { pa_context_disconnect(context) }
}
