/// Receives what the capture takes. Every call comes on the capture's PulseAudio thread, in
/// order for each stream: start, audio and updates, end, except that on PipeWire a stream's
/// audio comes on libpipewire's real-time data thread (one thread for every stream, each call
/// between the stream's start and end). Implementations must return quickly (copy the audio
/// into a queue); blocking here delays every captured app.
public protocol AppCaptureConsumer: AnyObject, Sendable {
    func captureDidStart(_ stream: CapturedStreamIdentity)
    /// The stream's properties changed (a window id set late, a new title).
    func captureDidUpdate(_ stream: CapturedStreamIdentity)
    /// Interleaved Float32 at the configured rate in the stream's channels (`channels` of its
    /// identity: stereo, or a surround app's own), valid only during the call.
    func captureDidReceive(streamIndex: UInt32, interleaved samples: UnsafeBufferPointer<Float>)
    /// The stream ended, was excluded, was moved elsewhere by the user, or the capture stopped.
    func captureDidEnd(streamIndex: UInt32)
    /// A stream the capture would take is left where it plays, and why: the user moved it
    /// elsewhere, the server refused to move it, or its recording kept failing (it then plays
    /// on the real sink rather than silent on the capture's). Once per stream and cause.
    func captureDidLeave(_ stream: CapturedStreamIdentity, reason: String)
    func captureStateDidChange(_ state: AppCapture.State)
    /// The real sink behind the capture's, which is the default sink while capturing: where
    /// the apps it lets go play, and where the consumer's own output must play (pinned: with
    /// the capture sink the default, following the default would play into it). Told when
    /// capturing starts and whenever the user chooses another sink.
    func captureDidChooseRealSink(_ sinkName: String)
    /// Nothing has played on the capture sink for a while and the capture rests (true), or
    /// something plays again (false). Optional.
    func captureDidRest(_ isResting: Bool)
    /// Something the capture put right that the user may want to know of (one line). Optional.
    func captureDidRepair(_ message: String)
}

extension AppCaptureConsumer {
    public func captureDidRest(_ isResting: Bool) {}
    public func captureDidRepair(_ message: String) {}
}
