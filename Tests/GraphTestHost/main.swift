import Foundation
import SceneSoundPipeWire

// A process holding a PipeWireGraphNode that the graph node tests kill (a test cannot kill
// itself): its park sink made, its outputs linked to "out", every app that appears parked on
// the park sink by the `default` metadata and linked into set 0, the set played on the outputs.
// Prints "ready" and then "parked NODE" per app on stdout. Runs until killed.
// Usage: scenesound-graph-test-host PIPEWIRE_SOCKET

func say(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
}

final class Host: @unchecked Sendable {
    var node: PipeWireGraphNode?
    var park: UInt32?
    let lock = NSLock()
}

let host = Host()
let node = PipeWireGraphNode(configuration: .init(remote: CommandLine.arguments[1], nodeName: "scenesound-graph-test-host", inputSetCount: 2)) { event in
    switch event {
    case .parkSinkReady(let park):
        host.lock.withLock { host.park = park }
    case .appAppeared(let app, _):
        guard let park = host.lock.withLock({ host.park }), let node = host.node else { return }
        let targeted = node.setTarget(ofApp: app, to: park)
        let linked = node.link(set: 0, toApp: app, channels: [0, 1])
        say("parked \(app) (target \(targeted), link \(linked))")
    case .refused(let proxy, let why):
        say("refused \(proxy): \(why)")
    default: break
    }
}
host.node = node
do {
    try node.start { cycle in
        for channel in 0 ..< 2 {
            let output = cycle.output(channel)
            if let input = cycle.input(set: 0, channel: channel) { output.update(from: input, count: cycle.frames) }
            else { output.update(repeating: 0, count: cycle.frames) }
        }
    }
} catch {
    say("failed \(error)")
    exit(1)
}
node.createParkSink(named: "scenesound-park-test")
node.linkOutputs(toSink: "out")
while host.lock.withLock({ host.park }) == nil || node.links(ofNode: node.nodeID ?? 0).count < 2 { usleep(1_000) }
say("ready")
while true { pause() }
