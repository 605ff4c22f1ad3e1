import Foundation
import SceneSoundCapture
import SceneSoundPipeWire

// Started by the daemon with `--capture-apps`, with one end of a socket pair as stdin: when
// the daemon dies (however) or stops beating, this puts every captured app back on its sink
// and unloads the daemon's capture sink. See CaptureGuardLink. A hung daemon is also
// disconnected from PipeWire: its node, never finishing a cycle, would keep the user's sink
// silent, and its park sink would stay.
exit(CaptureGuard.run(arguments: Array(CommandLine.arguments.dropFirst())) { daemonPID, serverAddress in
    var environment = ProcessInfo.processInfo.environment
    if let serverAddress { environment["PULSE_SERVER"] = serverAddress }
    guard let socket = PipeWireSession.socketPath(environment: environment) else { return nil }
    switch PipeWireSession.disconnectClients(ofProcess: daemonPID, socketPath: socket, timeoutSeconds: 1.0) {
    case .success(let count): return "disconnected the daemon's \(count) PipeWire connection(s)"
    case .failure(let error): return "cannot disconnect the daemon from PipeWire: \(error)"
    }
})
