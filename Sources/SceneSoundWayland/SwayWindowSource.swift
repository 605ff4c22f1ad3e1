import Foundation
import SceneSoundWindows

/// sway's windows over its IPC socket (`$SWAYSOCK`): one connection for requests (GET_TREE,
/// GET_OUTPUTS, RUN_COMMAND), one subscribed to window, workspace and (sway ≥ 1.9) output
/// events. Each event, and a timer while sounds play (a floating window moved or resized, a
/// tiling relayout, send no event), brings a new GET_TREE.
public enum SwayWindowSource {
    public static func make(socketPath: String, configuration: CompositorWindowSource.Configuration = .init(),
                            log: @escaping @Sendable (String) -> Void,
                            onSnapshot: (@Sendable (WindowSnapshot) -> Void)?) -> CompositorWindowSource {
        CompositorWindowSource(description: "sway at \(socketPath)", configuration: configuration, log: log,
                               onSnapshot: onSnapshot) { () throws(CompositorError) in
            var firstFailure: CompositorError?
            for candidate in candidates(configured: socketPath) {
                do throws(CompositorError) { return try SwaySession(socketPath: candidate) } catch { firstFailure = firstFailure ?? error }
            }
            throw firstFailure ?? .disconnected("\(socketPath): no sway socket")
        }
    }

    /// `$SWAYSOCK` first, then the other sway sockets beside it, newest first: sway names its
    /// socket after its pid, so a restarted sway listens on a path the daemon's environment does
    /// not name (the runtime directory is the user's own, 0700).
    static func candidates(configured: String) -> [String] {
        let directory = (configured as NSString).deletingLastPathComponent
        let others = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
            .filter { $0.hasPrefix("sway-ipc.") && $0.hasSuffix(".sock") }
            .map { directory + "/" + $0 }
            .filter { $0 != configured }
            .map { path in (path, (try? FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date) ?? .distantPast) }
            .sorted { $0.1 > $1.1 }
            .map(\.0)
        return [configured] + others
    }
}

final class SwaySession: CompositorSession {
    private let requests: UnixStreamSocket
    private let events: UnixStreamSocket
    private var eventBuffer: [UInt8] = []
    private var views: [SwayTree.View] = []

    init(socketPath: String) throws(CompositorError) {
        requests = try UnixStreamSocket(path: socketPath)
        events = try UnixStreamSocket(path: socketPath)
        // sway before 1.9 refuses the whole subscription when it names "output": that one alone.
        try subscribe(["window", "workspace"], required: true)
        try subscribe(["output"], required: false)
        events.setNonBlocking()
    }

    private func subscribe(_ names: [String], required: Bool) throws(CompositorError) {
        let payload = "[" + names.map { "\"\($0)\"" }.joined(separator: ",") + "]"
        try events.writeAll(I3IPCFrame.encode(.subscribe, payload: payload))
        let reply = try Self.readFrame(events, expecting: I3IPCFrame.MessageType.subscribe.rawValue)
        let success = (SwayTree.object(reply) as? [String: Any])?["success"] as? Bool
        if required && success != true { throw .disconnected("sway refused to subscribe to \(payload)") }
    }

    var eventDescriptor: Int32 { events.descriptor }

    func readEvents() throws(CompositorError) -> Bool {
        guard let bytes = try events.readAvailable() else { throw .disconnected("sway closed the event connection") }
        guard !bytes.isEmpty else { return false }
        eventBuffer += bytes
        // Every event is a reason to look again; what it says is in the next tree.
        _ = try I3IPCFrame.takeFrames(from: &eventBuffer)
        return true
    }

    func query() throws(CompositorError) -> CompositorState {
        let tree = try request(.getTree)
        let outputs = try request(.getOutputs)
        let (state, views) = try SwayTree.state(tree: tree, outputs: outputs)
        self.views = views
        return state
    }

    func setDemandsAttention(windowID: UInt32, _ demands: Bool) throws(CompositorError) {
        guard let view = views.first(where: { $0.windowID == windowID }) else { return }
        _ = try request(.runCommand, payload: "[con_id=\(view.conID)] urgent \(demands ? "enable" : "disable")")
    }

    private func request(_ type: I3IPCFrame.MessageType, payload: String = "") throws(CompositorError) -> [UInt8] {
        try requests.writeAll(I3IPCFrame.encode(type, payload: payload))
        return try Self.readFrame(requests, expecting: type.rawValue)
    }

    /// The reply to the request just sent (a blocking socket's next frame).
    private static func readFrame(_ socket: UnixStreamSocket, expecting type: UInt32) throws(CompositorError) -> [UInt8] {
        let header = try socket.readExactly(I3IPCFrame.headerBytes)
        let (length, replyType) = try I3IPCFrame.header(header[...])
        let payload = length > 0 ? try socket.readExactly(length) : []
        guard replyType == type else { throw .disconnected("sway answered type \(replyType) to a request of type \(type)") }
        return payload
    }
}
