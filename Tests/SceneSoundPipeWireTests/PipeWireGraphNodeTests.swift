import Foundation
import Synchronization
import SceneSoundTestSupport
import Testing
@testable import SceneSoundPipeWire

/// `PipeWireGraphNode` against a private PipeWire 0.3 + WirePlumber + pipewire-pulse, with
/// unmodified `paplay`: the node and its port pool in the graph, its outputs playing on the null
/// sink "out" (and following the default sink), an app linked into a set in the same graph cycle
/// as it plays directly (sample for sample), an app parked on our park sink by the `default`
/// metadata reaching the render closure, and back on "out" when our connection closes (stop,
/// and SIGKILL of a process holding the node).
@Suite(.serialized) struct PipeWireGraphNodeTests {
    static let rateHz = 48_000
    static let nodeName = "scenesound-graph-test"

    static func makeNode(_ server: PrivateSoundServer, sets: Int, events: @escaping @Sendable (PipeWireGraphNode.Event) -> Void = { _ in })
        -> PipeWireGraphNode
    {
        PipeWireGraphNode(configuration: .init(remote: server.pipeWireSocketPath, nodeName: nodeName, inputSetCount: sets,
                                               quantumFrames: 256, rateHz: rateHz), events: events)
    }

    /// A node that parks each app that appears on our park sink (once that is ready) and links
    /// its FL and FR into set 0; `box` holds the node, the park sink and the app. Every event
    /// is also handed to `also`.
    static func parkingNode(_ server: PrivateSoundServer, box: NodeBox,
                            also: @escaping @Sendable (PipeWireGraphNode.Event) -> Void = { _ in }) -> PipeWireGraphNode {
        let node = makeNode(server, sets: 2) { event in
            also(event)
            switch event {
            case .parkSinkReady(let park): box.set(park: park)
            case .appAppeared(let app, _):
                guard let park = box.park, let node = box.node else { return }
                box.set(app: app)
                node.setTarget(ofApp: app, to: park)
                node.link(set: 0, toApp: app, channels: [0, 1])
            default: break
            }
        }
        box.node = node
        return node
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

        // As a user sees it: 4 sets of 8 input ports and eight outputs, named by channel.
        let inputs = try server.pwLink(["--input"]).split(separator: "\n").filter { $0.hasPrefix("\(Self.nodeName):") }
        let outputs = try server.pwLink(["--output"]).split(separator: "\n").filter { $0.hasPrefix("\(Self.nodeName):") }
        #expect(inputs.count == 32 && inputs.contains("\(Self.nodeName):in_3_SR"), "\(inputs)")
        #expect(outputs.sorted() == ["FC", "FL", "FR", "LFE", "RL", "RR", "SL", "SR"].map { "\(Self.nodeName):out_\($0)" }, "\(outputs)")
        // As our registry view sees it.
        let ports = node.ports(ofNode: ours)
        #expect(ports.count == 40)
        #expect(ports.filter { !$0.isOutput && $0.channel == "LFE" }.count == 4)
        let sink = try #require(node.nodeID(named: "out").flatMap { node.node(id: $0) })
        #expect(sink.mediaClass == "Audio/Sink" && sink.serial > 0)

        node.linkOutputs(toSink: nil)  // the default sink, "out"
        let expectedLinks = [("out_FL", "playback_FL"), ("out_FR", "playback_FR")].map { ("\(Self.nodeName):\($0.0)", "out:\($0.1)") }
        #expect(waitUntil(timeoutSeconds: 5) {
            let links = (try? server.pipeWireLinks()) ?? []
            return expectedLinks.allSatisfy { want in links.contains { $0 == want } }
        }, "\((try? server.pipeWireLinks()) ?? [])")
        #expect(node.links(ofNode: ours).filter { $0.inputNodeID == sink.id }.count == 2)

        // What the sink plays, every 10 ms window at the tone's level: no gap, no glitch. A take
        // with a gap is taken again (three at most) when something outside the node explains it:
        // parec joining the graph reconfigures it (PipeWireOutputTests' takes; a fresh-clone run
        // had one 10 ms window at 68 % 100 ms in, none of our cycles late), or the machine
        // disturbed it (a stall over 2 ms, or the host's steal: `MachineStallWatch.disturbance`;
        // another run lost parts of six windows to cycles of ours it made late). A gap with
        // cycles of ours late while the machine ran on fails at once; so does a third take, a
        // known issue only when the machine disturbed that one too.
        let windowRMS = { (x: [Float]) in stride(from: 0, to: x.count, by: 480).map { PipeWireOutputTests.rms(Array(x[$0 ..< $0 + 480])) } }
        var l: [Double] = [], r: [Double] = [], disturbance: String?
        for take in 1 ... 3 {
            let lateBefore = node.lateCycleCount, watch = MachineStallWatch(thresholdSeconds: 0.002)
            let recorded = try #require(try MonitorRecorder.record(server, frames: 19_200), "parec recorded nothing")
            watch.stop()
            disturbance = watch.disturbance()
                ?? watch.stalls.map(\.durationSeconds).max().map { String(format: "the machine stalled for %.1f ms", $0 * 1000) }
            l = windowRMS(stride(from: 0, to: recorded.count, by: 2).map { recorded[$0] })
            r = windowRMS(stride(from: 1, to: recorded.count, by: 2).map { recorded[$0] })
            let clean = l.allSatisfy { abs($0 / (0.5 / 2.squareRoot()) - 1) < 0.05 } && r.allSatisfy { abs($0 / (0.25 / 2.squareRoot()) - 1) < 0.05 }
            let lateCycles = node.lateCycleCount - lateBefore
            if clean || take == 3 || (lateCycles > 0 && disturbance == nil) { break }
            print("graph node: take \(take) had a gap, \(lateCycles) cycle(s) of ours late, \(disturbance ?? "the machine undisturbed"); left windows \(l)")
        }
        print("graph node: quantum \(node.quantumFrames ?? 0) frames at \(node.rateHz ?? 0) Hz, data thread real-time: \(String(describing: node.dataThreadIsRealTime)); 10 ms windows RMS left \(l.min()!)…\(l.max()!), right \(r.min()!)…\(r.max()!)")
        let levels = {
            #expect(l.allSatisfy { abs($0 / (0.5 / 2.squareRoot()) - 1) < 0.05 }, "left windows \(l)")
            #expect(r.allSatisfy { abs($0 / (0.25 / 2.squareRoot()) - 1) < 0.05 }, "right windows \(r)")
        }
        if let disturbance {
            withKnownIssue("the last take's levels, \(disturbance)", isIntermittent: true) { levels() }
        } else {
            levels()
        }
        #expect(node.quantumFrames == 256 && node.rateHz == Self.rateHz)

        // Following the default sink: a new default takes our outputs.
        try server.pactl(["load-module", "module-null-sink", "sink_name=other", "rate=48000"])
        try server.pactl(["set-default-sink", "other"])
        #expect(waitUntil(timeoutSeconds: 5) {
            guard let other = node.nodeID(named: "other") else { return false }
            let targets = node.links(ofNode: ours).map(\.inputNodeID)
            return targets.count == 2 && targets.allSatisfy { $0 == other }
        }, "our links go to \(node.links(ofNode: ours).map { node.node(id: $0.inputNodeID)?.name ?? "?" })")

        // Unlinked: the outputs go, the node stays.
        node.unlinkOutputs()
        #expect(waitUntil(timeoutSeconds: 5) { node.links(ofNode: ours).isEmpty })
        node.stop()
        #expect(waitUntil(timeoutSeconds: 5) { !((try? server.pwLink(["--output"])) ?? "").contains(Self.nodeName) }, "our node outlived stop()")
    }

    /// Additive, as the probe measured it: the app keeps WirePlumber's own link to "out" and is
    /// also linked into set 0; the render puts that set's FL on our FR. The app plays noise and
    /// clicks on its left only, so one recording of the sink's monitor has the direct path on FL
    /// and ours on FR: the frames between the clicks are what the node adds, and from our first
    /// sound on FR must equal FL sample for sample (the same cycles; whatever the app's own
    /// stream does under load reaches both paths alike).
    @Test func anAppLinkedIntoASetIsHeardInTheSameCycleAsPlayedDirectly() throws {
        let server = try PrivateSoundServer(.pipeWire)
        let box = NodeBox()
        let node = Self.makeNode(server, sets: 2) { event in
            if case .appAppeared(let app, _) = event { box.node?.link(set: 0, toApp: app, channels: [0, 1]) }
        }
        box.node = node
        defer {
            node.stop()
            server.tearDown()
        }
        try node.start { cycle in
            let left = cycle.output(0), right = cycle.output(1)
            left.update(repeating: 0, count: cycle.frames)
            if let input = cycle.input(set: 0, channel: 0) { right.update(from: input, count: cycle.frames) }
            else { right.update(repeating: 0, count: cycle.frames) }
        }
        try Self.waitForOutputs(node)
        let lateCyclesBefore = node.lateCycleCount, watch = MachineStallWatch(thresholdSeconds: 0.002)
        let clicks = (0 ..< 5).map { 4_800 + $0 * 9_600 }
        let file = server.directory.appendingPathComponent("clicks.wav")
        var generator = SystemRandomNumberGenerator()
        var left = (0 ..< 57_600).map { _ in Float(Int16.random(in: -3_000 ... 3_000, using: &generator)) / 32_768 }
        for at in clicks { left[at] = 0.9 }
        try writeWAV(file, left: left, right: [Float](repeating: 0, count: left.count))

        let recording = try MonitorRecording(server: server, file: server.directory.appendingPathComponent("monitor.raw"))
        try waitUntil(timeoutSeconds: 5, "parec recording") { recording.frameCount >= 4_800 }
        let paplay = try server.startClient("/usr/bin/paplay", [file.path])
        defer { paplay.kill() }
        try waitUntil(timeoutSeconds: 10, "paplay to finish") { !paplay.isRunning }
        let framesAtEnd = recording.frameCount
        try waitUntil(timeoutSeconds: 5, "0.2 s more recorded") { recording.frameCount >= framesAtEnd + 9_600 }
        let samples = recording.finish(afterFrames: 0, timeoutSeconds: 0)
        let direct = clickFrames(samples, channel: 0), through = clickFrames(samples, channel: 1)
        print("clicks played directly at \(direct), through the node at \(through)")
        // The direct path is the app's own stream to the sink: a click it lost (ci58: the
        // second, on both paths alike) the app or the server lost, while the machine disturbed
        // the take a known issue, said. A click missing through the node only (ci57: the
        // fourth, its quantum silent there) is a loss the comparison below judges; each one
        // heard is at the direct one's cycle.
        try #require(direct.count >= 3 && through.count <= clicks.count, "direct \(direct), through the node \(through)")
        watch.expectTimely(direct.count == clicks.count, "the direct path has \(direct.count) clicks of \(clicks.count): \(direct)")
        let offsets = direct.compactMap { at in through.first { abs($0 - at) <= 1_024 }.map { $0 - at } }
        #expect(offsets.count == through.count, "direct \(direct), through the node \(through)")
        print("frames added by the node: \(offsets) (quantum \(node.quantumFrames ?? 0))")
        #expect(offsets.allSatisfy { $0 >= 0 && $0 <= (node.quantumFrames ?? 256) }, "\(offsets)")
        let frames = samples.count / 2
        let firstDirect = try #require((0 ..< frames).first { samples[2 * $0] != 0 })
        let firstOurs = try #require((0 ..< frames).first { samples[2 * $0 + 1] != 0 })
        let lastDirect = try #require((0 ..< frames).last { samples[2 * $0] != 0 })
        let differing = (firstOurs ... lastDirect).filter { abs(samples[2 * $0] - samples[2 * $0 + 1]) > 1e-4 }
        print("through the node from \(firstOurs - firstDirect) frames after the direct path's first sound; \(differing.count) of \(lastDirect - firstOurs + 1) frames differ from the direct path after that")
        // The known weakness (as the capture's copies, CaptureOnServerTests): a driver a period
        // late runs the next cycle at once without our node, and the app's input of that cycle
        // is gone — a quantum silent through the node — and the late cycle can also hand the
        // node the next cycle's input, a quantum shifted: per cycle the node recorded late, at
        // most one quantum silent and one more differing; while the machine disturbed the take,
        // up to 16 quanta differing or a quantum per late cycle, silent or not (fresh-clone runs
        // on 1 Dec 2026: 512 frames silent with none of our cycles late, the host stealing 14 %
        // of the CPUs; 2298; by hand 3070, 2302 of them silent, 10 late cycles, 11 %; official
        // CI on 2 Dec: 7416, 5370 silent, 42 late cycles, an 11 ms stall; ci68: 1021, 509 silent,
        // 3 late cycles, the machine undisturbed). Said and recorded as a known issue; any other
        // difference fails.
        watch.stop()
        let lateCycles = node.lateCycleCount - lateCyclesBefore, quantum = node.quantumFrames ?? 256
        let machine = watch.disturbance()
        let silentThroughTheNode = differing.filter { samples[2 * $0 + 1] == 0 }.count
        let sameAsDirect = {
            #expect(differing.isEmpty, """
                \(differing.count) frames differ from the direct path (\(silentThroughTheNode) of them silent through the node), the first at \
                \(differing.first ?? 0) (\(differing.first.map { "\(samples[2 * $0]) direct, \(samples[2 * $0 + 1]) through the node" } ?? "")); \
                the node's late cycles \(lateCycles); \(machine ?? "the machine undisturbed")
                """)
        }
        let lostToLateCycles = silentThroughTheNode <= lateCycles * quantum && differing.count <= 2 * lateCycles * quantum
        let lostToTheMachine = machine != nil && differing.count <= max(16, lateCycles) * quantum
        if !differing.isEmpty, lostToLateCycles || lostToTheMachine {
            print("through the node: \(differing.count) frames differ (\(silentThroughTheNode) silent), the node had \(lateCycles) late cycle(s); \(machine ?? "the machine undisturbed")")
            withKnownIssue("cycles of the graph lost: \(differing.count) frames differ through the node", isIntermittent: true) { sameAsDirect() }
        } else {
            sameAsDirect()
        }
    }

    /// An unmodified app parked on our park sink by the `default` metadata (set in the app
    /// node's own registry event, before WirePlumber links it) and linked into set 0: the app is
    /// linked to the park sink and to us, not to "out", and the render closure gets it at the
    /// file's level on each channel (whether sample for sample is printed). When our connection
    /// closes (stop: the targets cleared), WirePlumber puts the app back on "out" within 3 s.
    @Test func aParkedAppReachesTheRenderAtItsLevelAndIsBackOnTheSinkWhenWeStop() throws {
        let server = try PrivateSoundServer(.pipeWire)
        let box = NodeBox()
        let events = GraphEventLog()
        let node = Self.parkingNode(server, box: box, also: events.append)
        let capture = CapturedSet(capacityFrames: 4 * Self.rateHz)
        defer {
            node.stop()
            server.tearDown()
        }
        try node.start { capture.render($0) }
        #expect(node.createParkSink(named: "scenesound-park-test") == 0)
        try waitUntil(timeoutSeconds: 5, "our park sink") { box.park != nil }
        try Self.waitForOutputs(node)

        var generator = SystemRandomNumberGenerator()
        let fileFrames = 3 * Self.rateHz
        var left = (0 ..< fileFrames).map { _ in Float(Int16.random(in: -8_000 ... 8_000, using: &generator)) / 32_768 }
        left[0] = 0.25  // the first sample is never silence: it marks where the file starts
        let right = (0 ..< fileFrames).map { _ in Float(Int16.random(in: -8_000 ... 8_000, using: &generator)) / 32_768 }
        let file = server.directory.appendingPathComponent("noise.wav")
        try writeWAV(file, left: left, right: right)
        let paplay = try server.startClient("/usr/bin/paplay", [file.path])
        defer { paplay.kill() }
        let inSet = waitUntil(timeoutSeconds: 10) { capture.frames >= Self.rateHz + 4_800 }
        try #require(inSet, "\(capture.frames) frames of the app in set 0; app \(String(describing: box.app)), its links to \(box.app.map { node.links(ofNode: $0).map(\.inputNodeID) } ?? []), our node \(String(describing: node.nodeID)), park \(String(describing: box.park)), sink \(String(describing: try? Self.sinkOf(server, application: "paplay"))); events: \(events.events)")
        let app = try #require(box.app)
        let ours = try #require(node.nodeID), park = try #require(box.park), out = try #require(node.nodeID(named: "out"))
        #expect(node.node(id: app)?.mediaClass == "Stream/Output/Audio")
        #expect(waitUntil(timeoutSeconds: 2) { node.node(id: app)?.processID == paplay.pid }, "\(String(describing: node.node(id: app)))")
        let targets = Set(node.links(ofNode: app).map(\.inputNodeID))
        #expect(targets == [ours, park], "the app is linked to \(targets.map { node.node(id: $0)?.name ?? "\($0)" })")
        #expect(!targets.contains(out))
        #expect(try Self.sinkOf(server, application: "paplay") == "scenesound-park-test")
        #expect(try Self.metadataTargets(server, node: app).count == 2, "target.object and target.node written")

        let (capturedLeft, capturedRight) = capture.snapshot()
        let start = try #require(capturedLeft.indices.first { capturedLeft[$0] != 0 || capturedRight[$0] != 0 }, "nothing captured")
        try #require(capturedLeft.count - start >= Self.rateHz)
        // The bar: a second of the app reaches the closure at the file's level on each channel,
        // its own channels kept apart (L+R in both would be 41 % louder). Sample for sample is
        // the additive test's bar, against the direct path; here whether the capture is the file
        // exactly is printed: under two busy loops 1 run in 30 had one quantum skipped mid-file,
        // cause not found (docs/CAPTURE.md), an open point for the switch-over.
        let level = { (x: ArraySlice<Float>) in PipeWireOutputTests.rms(Array(x)) }
        let capturedLevels = [level(capturedLeft[start ..< start + Self.rateHz]), level(capturedRight[start ..< start + Self.rateHz])]
        let fileLevels = [level(left[0 ..< Self.rateHz]), level(right[0 ..< Self.rateHz])]
        let same = { (c: Int, f: Int) in abs(capturedLeft[c] - left[f]) <= 1e-4 && abs(capturedRight[c] - right[f]) <= 1e-4 }
        let fileFrame = (0 ..< 9_600).first { f in (0 ..< 8).allSatisfy { same(start + $0, f + $0) } }
        let walk = fileFrame.map { Alignment(capturedLeft, capturedRight, from: start, file: left, right, fileFrame: $0, frames: Self.rateHz) }
        print("parked app in the closure: the app's output ports \(node.ports(ofNode: app).filter(\.isOutput).map(\.channel)), links to us \(node.links(ofNode: app).filter { $0.inputNodeID == ours }.map { link in "\(link.id):\(link.outputPortID)\(node.ports(ofNode: app).first { $0.id == link.outputPortID }?.channel ?? "?")->\(node.ports(ofNode: ours).first { $0.id == link.inputPortID }?.name ?? "?")" }), events \(events.events.filter { if case .linkAdded = $0 { false } else if case .linkRemoved = $0 { false } else { true } }); levels \(capturedLevels) (file \(fileLevels)); exactly the file from its frame \(fileFrame.map(String.init) ?? "(not found)")\(walk.map { ": " + $0.summary } ?? "")")
        #expect(zip(capturedLevels, fileLevels).allSatisfy { abs($0 / $1 - 1) < 0.05 }, "levels \(capturedLevels), the file's \(fileLevels)")

        // Freeing the set returns once the server has destroyed our links, so that a move of the
        // app comes after them (PipeWire 0.3.65 can crash on a link destroyed while its app is
        // suspended by a move, docs/CAPTURE.md): the view, kept by the server's answers, shows none.
        node.unlink(set: 0)
        let stillLinked = node.links(ofNode: app).filter { $0.inputNodeID == ours }
        #expect(stillLinked.isEmpty, "links \(stillLinked.map(\.id)) from the app to us right after unlink(set:) returned")

        // Our connection closes: node, park sink and links go; the app is played directly again.
        let stopped = Date()
        node.stop()
        try waitUntil(timeoutSeconds: 3, "the app back on out") { try Self.sinkOf(server, application: "paplay") == "out" }
        print("the app was back on out \(Int(Date().timeIntervalSince(stopped) * 1000)) ms after stop()")
        // A target we wrote would outlive our connection: stop() cleared them.
        let leftOver = try Self.metadataTargets(server, node: app)
        #expect(leftOver.isEmpty, "\(leftOver)")
        #expect(paplay.isRunning, "the app ended before it could be moved back (file too short)")
    }

    /// The crash: the process holding the node (scenesound-graph-test-host) is SIGKILLed while
    /// an app is parked on its park sink. Node, park sink and links go with its connection, the
    /// metadata target names a sink that is gone, and WirePlumber puts the app back on "out"
    /// within 3 s.
    @Test func aParkedAppIsBackOnTheSinkWithin3SecondsOfTheNodesProcessBeingKilled() throws {
        let server = try PrivateSoundServer(.pipeWire)
        defer { server.tearDown() }
        let log = server.directory.appendingPathComponent("host.log")
        let hostPath = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("scenesound-graph-test-host").path
        let host = try ChildProcess(hostPath, [server.pipeWireSocketPath], display: nil, outputPath: log.path)
        defer { host.kill() }
        func said() -> String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }
        try waitUntil(timeoutSeconds: 10, "the host's node ready") { said().contains("ready\n") || !host.isRunning }
        try #require(host.isRunning, "the host ended: \(said())")

        let file = server.directory.appendingPathComponent("tone.wav")
        let tone = (0 ..< 6 * Self.rateHz).map { Float(sin(2 * Double.pi * 440 * Double($0) / Double(Self.rateHz)) * 0.25) }
        try writeWAV(file, left: tone, right: tone)
        let paplay = try server.startClient("/usr/bin/paplay", [file.path])
        defer { paplay.kill() }
        let parked = waitUntil(timeoutSeconds: 5) { (try? Self.sinkOf(server, application: "paplay")) == "scenesound-park-test" }
        try #require(parked, "the app is on \(String(describing: try? Self.sinkOf(server, application: "paplay"))); the host said: \(said()); links: \((try? server.pipeWireLinks()) ?? []); metadata: \((try? Self.metadataTargets(server, node: nil)) ?? [])")
        #expect(said().contains("parked "), "\(said())")

        let killed = Date()
        host.kill()
        try waitUntil(timeoutSeconds: 3, "the app back on out") { try Self.sinkOf(server, application: "paplay") == "out" }
        print("the app was back on out \(Int(Date().timeIntervalSince(killed) * 1000)) ms after SIGKILL of the node's process; the metadata left: \((try? Self.metadataTargets(server, node: nil)) ?? [])")
        #expect(paplay.isRunning, "the app ended before it could be moved back")
        #expect(waitUntil(timeoutSeconds: 3) { !((try? server.pwLink(["--output"])) ?? "x").contains("scenesound-graph-test-host") }, "our node outlived its process")
    }

    /// Waits for our node's ports, links its outputs to "out" and waits for the two links.
    static func waitForOutputs(_ node: PipeWireGraphNode) throws {
        try waitUntil(timeoutSeconds: 5, "our node's ports") { node.nodeID.map { node.ports(ofNode: $0).count } == node.configuration.inputSetCount * 8 + PipeWireGraphNode.outputChannels }
        node.linkOutputs(toSink: "out")
        try waitUntil(timeoutSeconds: 5, "our outputs linked to out") {
            guard let ours = node.nodeID, let out = node.nodeID(named: "out") else { return false }
            return node.links(ofNode: ours).filter { $0.inputNodeID == out }.count == 2
        }
    }

    /// The `default` metadata's target.* entries on a node, as pw-metadata lists them.
    static func metadataTargets(_ server: PrivateSoundServer, node: UInt32?) throws -> [String] {
        try server.pipeWireTool("pw-metadata", ["-n", "default"])
            .split(separator: "\n").filter { $0.contains("\(node.map { "id:\($0) " } ?? "")key:'target.") }.map(String.init)
    }

    static func sinkOf(_ server: PrivateSoundServer, application: String) throws -> String? {
        try PipeWireOutputTests.ourStream(server, application: application)?.sink
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

final class NodeBox: @unchecked Sendable {
    var node: PipeWireGraphNode?
    private let ids = Mutex<(park: UInt32?, app: UInt32?)>((nil, nil))
    var park: UInt32? { ids.withLock { $0.park } }
    var app: UInt32? { ids.withLock { $0.app } }
    func set(park: UInt32) { ids.withLock { $0.park = park } }
    func set(app: UInt32) { ids.withLock { $0.app = $0.app ?? app } }
}

/// Set 0's FL and FR as the render closure got them (from the first cycle it had a buffer), also
/// played on our outputs. Buffers made before the node runs; the count published with release.
final class CapturedSet: @unchecked Sendable {
    private let left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>
    private let capacity: Int
    private let count = Atomic<Int>(0)
    init(capacityFrames: Int) {
        capacity = capacityFrames
        left = .allocate(capacity: capacityFrames)
        right = .allocate(capacity: capacityFrames)
    }
    deinit { left.deallocate(); right.deallocate() }
    var frames: Int { count.load(ordering: .acquiring) }
    func render(_ cycle: PipeWireGraphNode.Cycle) {
        let outLeft = cycle.output(0), outRight = cycle.output(1)
        guard let l = cycle.input(set: 0, channel: 0) else {
            outLeft.update(repeating: 0, count: cycle.frames)
            outRight.update(repeating: 0, count: cycle.frames)
            return
        }
        let r = cycle.input(set: 0, channel: 1)
        outLeft.update(from: l, count: cycle.frames)
        if let r { outRight.update(from: r, count: cycle.frames) } else { outRight.update(repeating: 0, count: cycle.frames) }
        let at = count.load(ordering: .relaxed)
        let n = min(cycle.frames, capacity - at)
        guard n > 0 else { return }
        (left + at).update(from: l, count: n)
        if let r { (right + at).update(from: r, count: n) } else { (right + at).update(repeating: 0, count: n) }
        count.store(at + n, ordering: .releasing)
    }
    func snapshot() -> ([Float], [Float]) {
        let n = frames
        return (Array(UnsafeBufferPointer(start: left, count: n)), Array(UnsafeBufferPointer(start: right, count: n)))
    }
}

/// The frames (of an interleaved stereo recording) where a channel first rises above 0.3, one
/// per click (a click is one sample; anything within 100 frames after it is the same click).
func clickFrames(_ interleaved: [Float], channel: Int) -> [Int] {
    var frames: [Int] = []
    for frame in 0 ..< interleaved.count / 2 where abs(interleaved[2 * frame + channel]) > 0.3 {
        if let last = frames.last, frame - last < 100 { continue }
        frames.append(frame)
    }
    return frames
}

/// A 16-bit stereo WAV at 48 kHz (what paplay reads through libsndfile).
func writeWAV(_ url: URL, left: [Float], right: [Float]) throws {
    let samples = left.indices.flatMap { i in
        [Int16(clamping: Int((left[i] * 32_768).rounded())), Int16(clamping: Int((right[i] * 32_768).rounded()))]
    }
    try TestSignal.writeWAV(samples, to: url)
}

/// Walks a capture against the file it should be: runs of equal frames, silence inserted (a
/// frame of zeros where the file has sound), jumps in the file (frames skipped or repeated), and
/// frames that are nowhere near in the file (altered).
struct Alignment {
    var equalFrames = 0, zeroFrames = 0, skippedFrames = 0, backwardJumps = 0, alteredFrames = 0
    var events: [String] = []
    var summary: String { "\(equalFrames) equal, \(zeroFrames) zeros inserted, \(skippedFrames) skipped, \(backwardJumps) backward jumps, \(alteredFrames) altered\(events.isEmpty ? "" : ": " + events.prefix(12).joined(separator: ", "))" }

    init(_ l: [Float], _ r: [Float], from start: Int, file fl: [Float], _ fr: [Float], fileFrame: Int, frames: Int) {
        var c = start, f = fileFrame
        func same(_ c: Int, _ f: Int) -> Bool { f >= 0 && f < fl.count && c < l.count && abs(l[c] - fl[f]) <= 1e-4 && abs(r[c] - fr[f]) <= 1e-4 }
        while c < l.count, c - start < frames, f < fl.count {
            if same(c, f) { equalFrames += 1; c += 1; f += 1; continue }
            if l[c] == 0 && r[c] == 0 {
                let from = c
                while c < l.count && l[c] == 0 && r[c] == 0 { c += 1 }
                zeroFrames += c - from
                events.append("\(c - from) zeros at \(from)")
                continue
            }
            let window = max(0, f - 9_600) ..< max(0, min(fl.count - 8, f + 48_000))
            guard c + 8 <= l.count, let next = window.first(where: { g in (0 ..< 8).allSatisfy { same(c + $0, g + $0) } }) else {
                alteredFrames += 1
                c += 1
                continue
            }
            if next < f { backwardJumps += 1 } else { skippedFrames += next - f }
            events.append("file jumps \(next - f) at \(c)")
            f = next
        }
    }
}
