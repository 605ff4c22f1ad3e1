import Foundation
import SceneSoundWindows

/// Hyprland's windows over its two sockets in `$XDG_RUNTIME_DIR/hypr/$HYPRLAND_INSTANCE_SIGNATURE/`
/// (before 0.40: `/tmp/hypr/…`): `.socket.sock` answers one request per connection (`j/clients`,
/// `j/monitors`, `j/activewindow`) and closes; `.socket2.sock` sends event lines `EVENT>>DATA`.
/// Each event, and a timer while sounds play (Hyprland sends no event for every geometry
/// change), brings a new query.
public enum HyprlandWindowSource {
    /// The instance's socket directory, or nil without a signature.
    public static func socketDirectory(environment: [String: String]) -> String? {
        guard let signature = environment["HYPRLAND_INSTANCE_SIGNATURE"], !signature.isEmpty else { return nil }
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty,
           FileManager.default.fileExists(atPath: "\(runtime)/hypr/\(signature)") {
            return "\(runtime)/hypr/\(signature)"
        }
        return "/tmp/hypr/\(signature)"
    }

    public static func make(socketDirectory: String, configuration: CompositorWindowSource.Configuration = .init(),
                            log: @escaping @Sendable (String) -> Void,
                            onSnapshot: (@Sendable (WindowSnapshot) -> Void)?) -> CompositorWindowSource {
        CompositorWindowSource(description: "Hyprland at \(socketDirectory)", configuration: configuration, log: log,
                               onSnapshot: onSnapshot) { () throws(CompositorError) in
            try HyprlandSession(directory: socketDirectory)
        }
    }
}

final class HyprlandSession: CompositorSession {
    private let directory: String
    private let events: UnixStreamSocket

    init(directory: String) throws(CompositorError) {
        self.directory = directory
        events = try UnixStreamSocket(path: directory + "/.socket2.sock")
        events.setNonBlocking()
    }

    var eventDescriptor: Int32 { events.descriptor }

    func readEvents() throws(CompositorError) -> Bool {
        guard let bytes = try events.readAvailable() else { throw .disconnected("Hyprland closed the event socket") }
        // Every event line is a reason to look again; what it says is in the next query.
        return !bytes.isEmpty
    }

    func query() throws(CompositorError) -> CompositorState {
        let clients = try request("j/clients")
        let monitors = try request("j/monitors")
        let active = try request("j/activewindow")
        return try HyprlandClients.state(clients: clients, monitors: monitors, activeWindow: active)
    }

    /// Hyprland has no request that flags a window from outside.
    func setDemandsAttention(windowID: UInt32, _ demands: Bool) throws(CompositorError) {}

    /// One request on a connection of its own, closed as soon as the answer is read (Hyprland
    /// waits on an open connection).
    private func request(_ command: String) throws(CompositorError) -> [UInt8] {
        let socket = try UnixStreamSocket(path: directory + "/.socket.sock")
        try socket.writeAll(Array(command.utf8))
        return try socket.readToEnd()
    }
}
