import Foundation
import SceneSoundPipeWire

/// The capture guard's step on PipeWire after it swept for a hung daemon (`CaptureGuard.run`'s
/// `disconnectHungDaemon`): the daemon's connections to PipeWire destroyed, as its death would
/// end them. A hung daemon's node, never finishing a cycle, keeps the apps linked into it and
/// every node of its driver's group (the user's sink) silent, and its park sink stays. Woken,
/// the daemon finds its connection gone and reconnects. Both guard programs use it: the
/// standalone one and the daemon's own binary run as `scenesound-capture-guard`.
public enum HungDaemonDisconnect {
    /// What was done, in words for the guard's line; nil when the server is not PipeWire.
    public static func run(daemonPID: pid_t, serverAddress: String?) -> String? {
        var environment = ProcessInfo.processInfo.environment
        if let serverAddress { environment["PULSE_SERVER"] = serverAddress }
        guard let socket = PipeWireSession.socketPath(environment: environment) else { return nil }
        switch PipeWireSession.disconnectClients(ofProcess: daemonPID, socketPath: socket, timeoutSeconds: 1.0) {
        case .success(let count): return "disconnected the daemon's \(count) PipeWire connection(s)"
        case .failure(let error): return "cannot disconnect the daemon from PipeWire: \(error)"
        }
    }
}
