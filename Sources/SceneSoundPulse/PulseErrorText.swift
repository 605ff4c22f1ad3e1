import CPulse

/// libpulse's message for an error code, e.g. "Connection refused".
public func pulseErrorText(_ code: Int32) -> String {
    guard let text = pa_strerror(code) else { return "PulseAudio error \(code)" }
    return String(cString: text)
}

/// The context's last error, e.g. after a failed connect or a failed stream.
public func pulseErrorText(context: OpaquePointer) -> String {
    pulseErrorText(pa_context_errno(context))
}
