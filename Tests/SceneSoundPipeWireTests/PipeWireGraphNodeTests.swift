import Foundation
import Synchronization
import SceneSoundTestSupport
import Testing
@testable import SceneSoundPipeWire

/// `PipeWireGraphNode` against a private PipeWire 0.3 + WirePlumber + pipewire-pulse, with
/// unmodified `paplay`: the node and its port pool in the graph, its outputs playing on the null
/// sink "out", an app linked into a set in the same graph cycle as it plays directly, an app
/// parked on our park sink by the `default` metadata reaching the render closure sample for
/// sample, and back on "out" when our connection closes.
@Suite(.serialized) struct PipeWireGraphNodeTests {
    static let rateHz = 48_000
    static let nodeName = "scenesound-graph-test"

    static func makeNode(_ server: PrivateSoundServer, sets: Int, events: @escaping @Sendable (PipeWireGraphNode.Event) -> Void = { _ in })
        -> PipeWireGraphNode
    {
        PipeWireGraphNode(configuration: .init(remote: server.pipeWireSocketPath, nodeName: nodeName, inputSetCount: sets,
                                               quantumFrames: 256, rateHz: rateHz), events: events)
    }

    @Test func theNodeAndItsPortPoolAreInTheGraphAndItsOutputsPlayOnTheSink() throws {
        let server = try PrivateSoundServer(.pipeWire)
        let events = GraphEventLog()
        let node = Self.makeNode(server, sets: 4, events: events.append)
        defer {
            node.stop()
            server.tearDown()
        }
        let tone = GraphTone(frequencyHz: 1_000, left: 0.5, right: 0.25)
        try node.start { tone.render($0) }
        #expect(events.wait(timeoutSeconds: 5) { $0.contains { if case .nodeReady = $0 { true } else { false } } }, "\(events.events)")
        let ours = try #require(node.nodeID)

        // As a user sees it: 4 sets of 8 input ports and two outputs, named by channel.
        let inputs = try server.pwLink(["--input"]).split(separator: "\n").filter { $0.hasPrefix("\(Self.nodeName):") }
        let outputs = try server.pwLink(["--output"]).split(separator: "\n").filter { $0.hasPrefix("\(Self.nodeName):") }
        #expect(inputs.count == 32 && inputs.contains("\(Self.nodeName):in_3_SR"), "\(inputs)")
        #expect(outputs.sorted() == ["\(Self.nodeName):out_FL", "\(Self.nodeName):out_FR"], "\(outputs)")
        // As our registry view sees it.
        let ports = node.ports(ofNode: ours)
        #expect(ports.count == 34)
        #expect(ports.filter { !$0.isOutput && $0.channel == "LFE" }.count == 4)
        let sink = try #require(node.nodeID(named: "out").flatMap { node.node(id: $0) })
        #expect(sink.mediaClass == "Audio/Sink" && sink.serial > 0)

        node.linkOutputs(toSink: "out")
        let expectedLinks = [("out_FL", "playback_FL"), ("out_FR", "playback_FR")].map { ("\(Self.nodeName):\($0.0)", "out:\($0.1)") }
        #expect(waitUntil(timeoutSeconds: 5) {
            let links = (try? server.pipeWireLinks()) ?? []
            return expectedLinks.allSatisfy { want in links.contains { $0 == want } }
        }, "\((try? server.pipeWireLinks()) ?? [])")
        #expect(node.links(ofNode: ours).filter { $0.inputNodeID == sink.id }.count == 2)

        // What the sink plays, every 10 ms window at the tone's level: no gap, no glitch.
        let recorded = try #require(try MonitorRecorder.record(server, frames: 19_200), "parec recorded nothing")
        let left = stride(from: 0, to: recorded.count, by: 2).map { recorded[$0] }
        let right = stride(from: 1, to: recorded.count, by: 2).map { recorded[$0] }
        let windowRMS = { (x: [Float]) in stride(from: 0, to: x.count, by: 480).map { PipeWireOutputTests.rms(Array(x[$0 ..< $0 + 480])) } }
        let l = windowRMS(left), r = windowRMS(right)
        print("graph node: quantum \(node.quantumFrames ?? 0) frames at \(node.rateHz ?? 0) Hz, data thread real-time: \(String(describing: node.dataThreadIsRealTime)); 10 ms windows RMS left \(l.min()!)…\(l.max()!), right \(r.min()!)…\(r.max()!)")
        #expect(l.allSatisfy { abs($0 / (0.5 / 2.squareRoot()) - 1) < 0.05 }, "left windows \(l)")
        #expect(r.allSatisfy { abs($0 / (0.25 / 2.squareRoot()) - 1) < 0.05 }, "right windows \(r)")
        #expect(node.quantumFrames == 256 && node.rateHz == Self.rateHz)

        // Unlinked: the outputs go, the node stays.
        node.unlinkOutputs()
        #expect(waitUntil(timeoutSeconds: 5) { node.links(ofNode: ours).isEmpty })
        node.stop()
        #expect(waitUntil(timeoutSeconds: 5) { !((try? server.pwLink(["--output"])) ?? "").contains(Self.nodeName) }, "our node outlived stop()")
    }
}

/// A sine per channel into the node's outputs, phase carried across cycles (data thread).
final class GraphTone: @unchecked Sendable {
    let frequencyHz: Double, left: Float, right: Float
    private var phase = 0.0
    init(frequencyHz: Double, left: Float, right: Float) { self.frequencyHz = frequencyHz; self.left = left; self.right = right }
    func render(_ cycle: PipeWireGraphNode.Cycle) {
        let step = 2 * Double.pi * frequencyHz / Double(cycle.rateHz)
        let l = cycle.output(0), r = cycle.output(1)
        for n in 0 ..< cycle.frames {
            let s = Float(sin(phase))
            l[n] = s * left
            r[n] = s * right
            phase += step
            if phase > 2 * .pi { phase -= 2 * .pi }
        }
    }
}

typealias GraphEventLog = SceneSoundTestSupport.EventLog<PipeWireGraphNode.Event>
