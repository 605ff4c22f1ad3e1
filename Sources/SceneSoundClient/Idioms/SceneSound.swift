import Foundation
import SceneSoundProtocol
import Synchronization

/// The entry points that need no setup: system and alert sounds on the default connection.
///
/// ```swift
/// import SceneSoundClient
/// try SceneSound.playAlertSound("dialog-warning", spatialExperience: .headTracked(.automatic))
/// ```
public enum SceneSound {
    /// The connection that `SceneSound`, `SceneSoundPlayer` and `SceneSoundSourceNode` share
    /// unless given another: made on first use to the socket `$SCENESOUND_SOCKET` names, else
    /// `$XDG_RUNTIME_DIR/scenesound/socket`, under the program's name. Made again on the next use
    /// after the server went away, or when `$SCENESOUND_SOCKET` names another socket.
    public static func defaultConnection() throws(ClientError) -> ClientConnection {
        try SharedConnection.current().connection
    }
}

/// A connection and what the idioms keep per connection: the samples already in its server's
/// cache, so that each system or alert sound is uploaded once.
final class SharedConnection: Sendable {
    let connection: ClientConnection
    /// Cache names of the samples uploaded over `connection`.
    let uploadedSamples = Mutex<Set<String>>([])

    init(_ connection: ClientConnection) { self.connection = connection }

    private static let shared = Mutex<SharedConnection?>(nil)
    /// The default connection, made (again) when needed. Connecting happens under the lock, so
    /// threads starting at once share one connection.
    static func current() throws(ClientError) -> SharedConnection {
        let path = try SocketPath.resolve(explicit: nil, environment: ProcessInfo.processInfo.environment)
        return try shared.withLock { (shared) throws(ClientError) -> SharedConnection in
            if let existing = shared, existing.connection.disconnection == nil, existing.connection.socketPath == path {
                return existing
            }
            let made = SharedConnection(try ClientConnection(socketPath: path, clientName: programName))
            shared = made
            return made
        }
    }

    /// `connection`, or the default connection when nil.
    static func given(_ connection: ClientConnection?) throws(ClientError) -> ClientConnection {
        if let connection { return connection }
        return try current().connection
    }

    /// The name the server lists the program under (`scenesound status`).
    static var programName: String {
        let path = CommandLine.arguments.first ?? ""
        let name = path.split(separator: "/").last.map(String.init) ?? ""
        return name.isEmpty ? "swift-client" : String(name.utf8.prefix(255)) ?? "swift-client"
    }
}
