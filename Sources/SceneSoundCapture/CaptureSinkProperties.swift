import Foundation

/// The null sink the captured streams are moved to, and the properties that mark it as ours.
/// The marks are what lets anything — the guard, the next daemon, a user with pactl — find
/// and undo what a capture left behind, without knowing which process made it.
public enum CaptureSinkProperties {
    public static let sinkName = "scenesound_capture"
    /// Present on every sink we load: which capture session made it.
    public static let sessionKey = "scenesound.capture.session"
    /// The process that loaded it; a sink whose process is gone is a leftover.
    public static let ownerPIDKey = "scenesound.capture.owner_pid"
    /// The default sink when it was loaded, to restore if ours ever ends up the default.
    public static let previousDefaultKey = "scenesound.capture.previous_default"

    /// module-null-sink's arguments. `norewinds`: a null sink otherwise renders up to 2 s
    /// ahead and rewinds when an app's volume changes, which the monitor hears as crackles.
    /// 7.1, so that games (and Wine) choose surround; stereo apps are still recorded in
    /// stereo (`CaptureChannels`).
    /// `isPassive` (PipeWire, apps linked into SceneSound's node): an app's link to the sink
    /// alone does not start the app; our link into the node, made next, does, so the node gets
    /// the app's first cycle. PipeWire before 0.3.68 makes such a link passive itself, and
    /// WirePlumber 0.4 marks it so (`link.passive`); from 0.3.68 on PipeWire does not for a
    /// stream, and WirePlumber 0.5 no longer marks it: the app starts on the sink, a driver of its
    /// own, and our link then joins it to the node's group, where at another quantum it runs dry
    /// once (128 frames of silence in its first 256 heard, docs/DESKTOPS.md).
    /// `forcedQuantumFrames`, the node's quantum, has the sink run at it from the app's first
    /// cycle: asked from PipeWire 0.3.68 on, whichever WirePlumber (the capture does not know
    /// its version; with 0.4 the sink still holds the app and the force only sets the quantum).
    static func nullSinkArguments(session: String, ownerPID: pid_t, previousDefaultSink: String?, rateHz: Int,
                                  isPassive: Bool = false, forcedQuantumFrames: Int? = nil) -> String {
        var properties = marks(session: session, ownerPID: ownerPID, previousDefaultSink: previousDefaultSink)
            .sorted { $0.key < $1.key }.map { "\($0.key)='\($0.value)'" }
        if isPassive { properties.append("node.passive=true") }
        if let forcedQuantumFrames { properties.append("node.force-quantum=\(forcedQuantumFrames)") }
        return "sink_name=\(sinkName) sink_properties=\"\(properties.joined(separator: " "))\" " +
            "norewinds=1 format=float32le rate=\(rateHz) channels=\(CaptureChannels.sinkChannelCount) " +
            "channel_map=\(CaptureChannels.sinkChannelNames.joined(separator: ","))"
    }

    /// What marks a capture sink as ours, whoever makes it (a module, or SceneSound's PipeWire
    /// node: `CaptureGraph.makeParkSink`); no value holds a quote, a backslash or an `=`.
    static func marks(session: String, ownerPID: pid_t, previousDefaultSink: String?) -> [String: String] {
        var marks = [
            "device.description": "SceneSound app capture",
            sessionKey: quotable(session),
            ownerPIDKey: String(ownerPID),
        ]
        if let previous = previousDefaultSink, !previous.isEmpty, previous == quotable(previous) {
            marks[previousDefaultKey] = previous
        }
        return marks
    }

    /// PipeWire's version from its pulse server's name ("PulseAudio (on PipeWire 1.4.2)"); nil
    /// for PulseAudio itself or a name not of that form.
    static func pipeWireVersion(serverName: String?) -> [Int]? {
        guard let serverName, let range = serverName.range(of: "on PipeWire ") else { return nil }
        let numbers = serverName[range.upperBound...].prefix { $0.isNumber || $0 == "." }
            .split(separator: ".").compactMap { Int($0) }
        return numbers.count >= 2 ? numbers : nil
    }

    /// Whether a passive sink's link from an app holds the app until another link starts it,
    /// whatever the session manager does: PipeWire before 0.3.68 (upstream "impl-link: only make
    /// passive links with suspendable peers" made such a link active), or a server whose version
    /// is not known.
    static func passiveSinkHoldsApps(pipeWireVersion version: [Int]?) -> Bool {
        guard let version else { return true }
        return version.lexicographicallyPrecedes([0, 3, 68])
    }

    /// The value with every character a module argument could be confused by removed.
    static func quotable(_ value: String) -> String {
        String(value.filter { !"'\"\\ =".contains($0) && !$0.isNewline })
    }

    /// Whether `properties` (a sink's) mark it as a capture sink.
    static func isCaptureSink(_ properties: [String: String]) -> Bool {
        properties[sessionKey] != nil
    }

    /// A capture sink left by a process that no longer runs: nobody will undo it but us.
    static func isLeftover(_ properties: [String: String], processIsAlive: (pid_t) -> Bool) -> Bool {
        guard isCaptureSink(properties) else { return false }
        guard let pid = properties[ownerPIDKey].flatMap({ pid_t($0) }), pid > 0 else { return true }
        return !processIsAlive(pid)
    }
}

/// kill(pid, 0): the process exists (zombies included, which is right: their parent may
/// still be about to reap them, and a later sweep catches them).
func processIsAlive(_ pid: pid_t) -> Bool {
    kill(pid, 0) == 0 || errno == EPERM
}
