import Foundation
import SceneSoundTestSupport
import Testing
@testable import SceneSoundPipeWire

/// The capture guard's way to take a hung daemon out of the graph (`PipeWireSession.
/// disconnectClients`): every client of a process destroyed through the registry, its node going
/// with it as at the process's death. The process here is `pw-record` (a client with a node),
/// stopped (SIGSTOP) as a hung daemon is: its connection stays open, so only the server's side
/// can end it.
@Suite(.serialized) struct PipeWireSessionDisconnectTests {
    @Test func aStoppedProcessIsDisconnectedAndItsNodeGoes() throws {
        let server = try PrivateSoundServer(.pipeWire)
        defer { server.tearDown() }
        let file = NSTemporaryDirectory() + "disconnect-test-\(getpid()).wav"
        defer { try? FileManager.default.removeItem(atPath: file) }
        let player = try ChildProcess("/usr/bin/pw-record", ["--properties", "{ node.name = \"hung-player\" }", file],
                                      display: nil, environment: ["PIPEWIRE_REMOTE": server.pipeWireSocketPath])
        defer { player.kill() }
        try waitUntil(timeoutSeconds: 5, "pw-record's node") { (try? server.pipeWireNodeProperties(named: "hung-player")) != nil }
        kill(player.pid, SIGSTOP)
        defer { kill(player.pid, SIGCONT) }

        let startedAt = Date()
        let result = PipeWireSession.disconnectClients(ofProcess: player.pid, socketPath: server.pipeWireSocketPath, timeoutSeconds: 2)
        let gone = waitUntil(timeoutSeconds: 3) { (try? server.pipeWireNodeProperties(named: "hung-player")) == nil }
        print(String(format: "a stopped pw-record disconnected: %@, its node gone %@ %.0f ms after", "\(result)", gone ? "" : "NOT",
                     1000 * Date().timeIntervalSince(startedAt)))
        guard case .success(let clients) = result else {
            Issue.record("disconnect failed: \(result)")
            return
        }
        #expect(clients == 1)
        #expect(gone, "\(server.pipeWireGraphText())")
        // Nothing of that process left: a second call finds no client, and so does one for a
        // process that never connected; this process's own is refused (it would include the
        // connection doing it).
        let sleeper = try ChildProcess("/bin/sleep", ["10"], display: nil)
        defer { sleeper.kill() }
        #expect(try PipeWireSession.disconnectClients(ofProcess: player.pid, socketPath: server.pipeWireSocketPath, timeoutSeconds: 2).get() == 0)
        #expect(try PipeWireSession.disconnectClients(ofProcess: sleeper.pid, socketPath: server.pipeWireSocketPath, timeoutSeconds: 2).get() == 0)
        let own = PipeWireSession.disconnectClients(ofProcess: getpid(), socketPath: server.pipeWireSocketPath, timeoutSeconds: 2)
        guard case .failure(let error) = own, error.code == EINVAL else {
            Issue.record("this process's own clients: \(own)")
            return
        }
    }

    @Test func noServerThereIsAnErrorNotAHang() {
        let startedAt = Date()
        let result = PipeWireSession.disconnectClients(ofProcess: 1, socketPath: "/nonexistent/pipewire-0", timeoutSeconds: 1)
        guard case .failure(let error) = result else {
            Issue.record("expected a failure, got \(result)")
            return
        }
        #expect(Date().timeIntervalSince(startedAt) < 1.5)
        print("no server: \(error)")
    }
}
