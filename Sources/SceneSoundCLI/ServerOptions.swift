import ArgumentParser
import Foundation
import SceneSoundClient

/// `--socket PATH`, shared by every verb that talks to the server.
struct ServerOptions: ParsableArguments {
    @Option(name: .customLong("socket"),
            help: ArgumentHelp("The server's socket (default: $SCENESOUND_SOCKET, else $XDG_RUNTIME_DIR/scenesound/socket).",
                               valueName: "PATH"))
    var socketPath: String?

    /// Connects as `scenesound`. Failures are one line that says what to do (exit 1).
    func connect() throws -> ClientConnection {
        do {
            let path = try SocketPath.resolve(explicit: socketPath, environment: ProcessInfo.processInfo.environment)
            return try ClientConnection(socketPath: path, clientName: "scenesound")
        } catch {
            throw RuntimeError(error.description)
        }
    }

    /// Connects, makes one exchange with the server, disconnects; a `ClientError` becomes the
    /// one-line runtime error (exit 1).
    func exchange<Value>(_ body: (ClientConnection) throws(ClientError) -> Value) throws -> Value {
        let connection = try connect()
        defer { connection.close() }
        return try withClientErrors { () throws(ClientError) in try body(connection) }
    }
}

/// Runs client calls so that a `ClientError` becomes the one-line runtime error (exit 1).
func withClientErrors<Value>(_ body: () throws(ClientError) -> Value) throws -> Value {
    do { return try body() } catch { throw RuntimeError(error.description) }
}
