import Foundation

/// Who a captured stream belongs to, from its properties (a client's properties are merged
/// into every stream it plays, so the app's name and pid are found here too).
public struct CapturedStreamIdentity: Sendable, Equatable {
    /// The sink input's index on the current server (a restarted server reuses them).
    public var streamIndex: UInt32
    public var applicationName: String?
    public var binary: String?
    public var processID: pid_t?
    /// The X11 window the stream says it belongs to (libcanberra-gtk sets it for event sounds).
    public var windowID: UInt32?
    /// `event`, `music`, `video`, `game`, … (`phone` streams are never captured).
    public var mediaRole: String?
    /// libcanberra's sound name for event sounds (`bell`, `dialog-warning`, …).
    public var eventID: String?
    public var mediaName: String?
    /// The channels its recording hands on (stereo for a mono or stereo app; a surround app's
    /// own), in the order `captureDidReceive` interleaves them.
    public var channels: CaptureChannels
    /// A one-channel app: recorded in stereo like any (its channel in both), and handed on to be
    /// played as one source, not as a pair.
    public var isMono: Bool
    /// Latency its recording adds that the queue does not show: on PipeWire a whole quantum
    /// arrives at once, and beyond the fragment the direct path's sink step matches (0 at the
    /// defaults; with a 1024-frame quantum 16 ms more), the queue holds half of it on average
    /// (CaptureLatencyTests).
    public var recordingStepSeconds: Double = 0

    public init(streamIndex: UInt32, properties: [String: String], channelPositions: [Int32] = []) {
        self.streamIndex = streamIndex
        applicationName = properties["application.name"]
        binary = properties["application.process.binary"]
        processID = properties["application.process.id"].flatMap { pid_t($0) }
        windowID = properties["window.x11.xid"].flatMap(Self.parseWindowID)
        mediaRole = properties["media.role"]
        eventID = properties["event.id"]
        mediaName = properties["media.name"]
        channels = CaptureChannels.forStream(positions: channelPositions)
        isMono = channelPositions.count == 1
    }

    /// Decimal, as libcanberra writes it, or 0x-prefixed hex; 0 is no window.
    static func parseWindowID(_ text: String) -> UInt32? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let value = trimmed.lowercased().hasPrefix("0x") ? UInt32(trimmed.dropFirst(2), radix: 16) : UInt32(trimmed)
        return value == 0 ? nil : value
    }

    /// An event sound (a click, a bell, a notification): libcanberra names it by event id.
    public var isEventSound: Bool { mediaRole == "event" || eventID != nil }
}
