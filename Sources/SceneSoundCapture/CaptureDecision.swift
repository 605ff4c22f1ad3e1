import Glibc

/// Which playback streams the capture takes, and why it leaves the others alone. Pure, so
/// every rule is tested without a server.
public enum CaptureDecision: Equatable, Sendable {
    /// Move the stream to the capture sink (unless it is there already) and record it.
    case take
    /// The stream sits on the capture sink but must not be captured (an app excluded since):
    /// send it back to the real default sink.
    case returnToDefaultSink(LeaveReason)
    case leave(LeaveReason)

    public enum LeaveReason: String, Sendable {
        /// SceneSound's own output: capturing it would feed the mix back into itself.
        case ownOutput = "SceneSound's own output"
        /// A stream a module plays (loopback, echo-cancel, RTP): not an app.
        case moduleStream = "played by a module"
        /// Encoded audio for a receiver; there is nothing to render.
        case passthrough = "passthrough"
        /// On a sink the user or a policy chose on purpose (echo-cancel, a headset for calls).
        case notOnDefaultSink = "not on the default sink"
        case phone = "media.role=phone"
        case excluded = "excluded by the user"
    }

    /// What the rules need besides the stream.
    public struct Context: Sendable {
        public var ownProcessID: pid_t
        public var defaultSinkIndex: UInt32?
        public var captureSinkIndex: UInt32?
        /// application.process.binary values (or application.name) never captured.
        public var excludedBinaries: Set<String>

        public init(ownProcessID: pid_t, defaultSinkIndex: UInt32?, captureSinkIndex: UInt32?, excludedBinaries: Set<String>) {
            self.ownProcessID = ownProcessID
            self.defaultSinkIndex = defaultSinkIndex
            self.captureSinkIndex = captureSinkIndex
            self.excludedBinaries = excludedBinaries
        }
    }

    public static func decide(_ stream: SinkInputFacts, in context: Context) -> CaptureDecision {
        let properties = stream.properties
        let onCaptureSink = context.captureSinkIndex != nil && stream.sinkIndex == context.captureSinkIndex
        func refuse(_ reason: LeaveReason) -> CaptureDecision {
            onCaptureSink ? .returnToDefaultSink(reason) : .leave(reason)
        }
        // Never moved, not even off the capture sink: a move through the native protocol is
        // remembered as the stream's route. The output pins itself to the real sink instead.
        if properties["application.process.id"].flatMap({ pid_t($0) }) == context.ownProcessID {
            return .leave(.ownOutput)
        }
        if stream.ownerModule != nil && stream.clientIndex == nil { return refuse(.moduleStream) }
        if !stream.isPCM { return refuse(.passthrough) }
        if properties["media.role"] == "phone" { return refuse(.phone) }
        if isExcluded(properties, by: context.excludedBinaries) { return refuse(.excluded) }
        // A stream already on the capture sink got there through us (or a route the server
        // remembered from us): it is the user's default output in disguise.
        if onCaptureSink { return .take }
        guard let defaultSink = context.defaultSinkIndex, stream.sinkIndex == defaultSink else {
            return .leave(.notOnDefaultSink)
        }
        return .take
    }

    /// Excluded by binary name (`mpv`), or by application name for clients that do not
    /// report a binary (flatpaks, network clients).
    public static func isExcluded(_ properties: [String: String], by excluded: Set<String>) -> Bool {
        guard !excluded.isEmpty else { return false }
        if let binary = properties["application.process.binary"], excluded.contains(binary) { return true }
        if let name = properties["application.name"], excluded.contains(name) { return true }
        return false
    }
}
