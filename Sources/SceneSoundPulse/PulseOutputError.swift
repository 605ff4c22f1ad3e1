/// Errors `PulseOutput.start` throws. A missing or dying server is not one of them: that is
/// retried in the background and reported through events.
public enum PulseOutputError: Error, Equatable, CustomStringConvertible {
    case invalidConfiguration(String)
    case alreadyStarted
    /// libpulse could not create or start its mainloop thread (out of memory or threads).
    case mainloopUnavailable(String)

    public var description: String {
        switch self {
        case .invalidConfiguration(let why): "invalid PulseAudio output configuration: \(why)"
        case .alreadyStarted: "the PulseAudio output is already started; call stop() first"
        case .mainloopUnavailable(let why): "cannot start the PulseAudio mainloop: \(why)"
        }
    }
}
