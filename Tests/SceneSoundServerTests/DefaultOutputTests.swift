import Foundation
import Testing
import SceneSoundTestSupport

/// With no `--output`, the daemon plays through PipeWire itself when the session's server is
/// PipeWire, and through libpulse otherwise; `status` says which.
@Suite(.serialized) struct DefaultOutputTests {
    @Test(arguments: PrivateSoundServer.Kind.allCases)
    func theDefaultOutputFollowsTheSessionsSoundServer(kind: PrivateSoundServer.Kind) throws {
        let server = try PrivatePulse(kind)
        // Only the pulse server's address, as a desktop session's environment has it (or none
        // and XDG_RUNTIME_DIR): PipeWire's socket is found beside it.
        let daemon = try Daemon(output: "", environment: server.environment)
        defer { daemon.stop() }
        let client = try RawClient(socketPath: daemon.socketPath)
        var output = try HeadTrackingTests.statusDocument(client).output
        #expect(waitUntil(timeoutSeconds: 5) {
            output = (try? HeadTrackingTests.statusDocument(client).output) ?? output
            return output.connected && output.latencySeconds != nil
        })
        print("\(kind): default output \(output.kind), target \(output.target ?? "-"), latency \((output.latencySeconds ?? 0) * 1000) ms, render thread \(output.renderThreadScheduling ?? "-")")
        if kind == .pipeWire {
            // The graph node's data thread renders, real-time (raised by the node, or by
            // libpipewire's module-rt), reported as it runs.
            let scheduling = output.renderThreadScheduling ?? "-"
            #expect(scheduling.hasPrefix("SCHED_FIFO") || geteuid() != 0, "render thread \(scheduling)")
        }
        #expect(output.kind == (kind == .pipeWire ? "pipewire" : "pulse"))
        #expect(output.target == "out")
        // (The line is logged once the output has started, which may be after status answers:
        // seen once in four runs with the graph node, which connects sooner than the stream did.)
        #expect(waitUntil(timeoutSeconds: 5) { daemon.log.contains("ready: output \(kind == .pipeWire ? "pipewire" : "pulse")") })
    }
}
