import Foundation
import Synchronization
import SceneSoundPlatform
import SceneSoundTestSupport
import Testing
@testable import SceneSoundPipeWire

// The graph node at rest, after PipeWire restarts, and sweeping what a crash left (helpers:
// PipeWireGraphNodeTests.swift).
/// Stage B's idle (issue 28): the node has no `node.always-process`, so with our outputs
/// unlinked (the output resting) it runs only while something links into it. A parked app
/// linked into a set runs it — the capture gets the app's audio with no output linked — and
/// when the app ends the node is not scheduled any more (no cycles: nothing of ours wakes).
@Suite(.serialized) struct PipeWireGraphNodeRestTests {
    /// Until the node's cycle count stays put across 100 ms (it has stopped being scheduled);
    /// fails after 5 s of cycles.
    static func waitUntilStill(_ node: PipeWireGraphNode, _ what: String) throws {
        var last = node.cycleCount
        try waitUntil(timeoutSeconds: 5, what) {
            usleep(100_000)
            defer { last = node.cycleCount }
            return node.cycleCount == last
        }
    }

    @Test func withOutputsUnlinkedAParkedAppAloneRunsTheNodeAndItsEndStopsIt() throws {
        let server = try PrivateSoundServer(.pipeWire)
        let box = NodeBox()
        let node = PipeWireGraphNodeTests.parkingNode(server, box: box)
        let capture = CapturedSet(capacityFrames: 4 * PipeWireGraphNodeTests.rateHz)
        defer {
            node.stop()
            server.tearDown()
        }
        try node.start { capture.render($0) }
        #expect(node.createParkSink(named: "scenesound-park-test", properties: ["a": "quote \" in it"]) == EINVAL)
        #expect(node.createParkSink(named: "scenesound-park-test", properties: ["scenesound.test": "its mark", "device.description": "Test park"]) == 0)
        #expect(node.createParkSink(named: "scenesound-park-test") == EALREADY)
        try waitUntil(timeoutSeconds: 5, "our park sink") { box.park != nil }
        let marked = try server.pipeWireNodeProperties(named: "scenesound-park-test")
        #expect(marked?["scenesound.test"] as? String == "its mark" && marked?["node.description"] as? String == "Test park",
                "the park sink's properties: \(marked ?? [:])")
        try Self.waitUntilStill(node, "the node settled after the park sink")
        let idleCycles = node.cycleCount
        usleep(500_000)  // the measured window: time itself is what is tested (no cycle in it)
        print("at rest, no link: \(node.cycleCount - idleCycles) cycles in 0.5 s")
        #expect(node.cycleCount == idleCycles, "the node ran with nothing linked")

        let file = server.directory.appendingPathComponent("tone.wav")
        let frames = PipeWireGraphNodeTests.rateHz
        let tone = (0 ..< frames).map { Float(sin(2 * Double.pi * 440 * Double($0) / 48_000) * 0.3) }
        try writeWAV(file, left: tone, right: tone)
        let paplay = try server.startClient("/usr/bin/paplay", [file.path])
        defer { paplay.kill() }
        #expect(waitUntil(timeoutSeconds: 10) { capture.frames >= frames / 2 }, "\(capture.frames) frames captured with our outputs unlinked")
        #expect(waitUntil(timeoutSeconds: 10) { !paplay.isRunning }, "the app did not end")
        try Self.waitUntilStill(node, "the node stopping after the app ended")
        let afterCycles = node.cycleCount
        usleep(1_000_000)  // the measured window: time itself is what is tested
        print("app ended: \(node.cycleCount - afterCycles) cycles in 1 s after")
        #expect(node.cycleCount - afterCycles < 10, "the node kept running after the app ended")
    }
}

/// The node after PipeWire restarts (reconnection asked for): its ports, its outputs' links and
/// the park sink are made again, the loss reported once.
@Suite(.serialized) struct PipeWireGraphNodeReconnectionTests {
    @Test func afterPipeWireRestartsTheNodeItsOutputsAndItsParkSinkAreBack() throws {
        let server = try PrivateSoundServer(.pipeWire)
        let events = GraphEventLog()
        let node = PipeWireGraphNode(configuration: .init(remote: server.pipeWireSocketPath, nodeName: PipeWireGraphNodeTests.nodeName,
                                                          inputSetCount: 2, quantumFrames: 256, rateHz: PipeWireGraphNodeTests.rateHz,
                                                          retrySeconds: (0.05, 1.0)), events: events.append)
        defer {
            node.stop()
            server.tearDown()
        }
        let tone = GraphTone(frequencyHz: 1_000, left: 0.5, right: 0.25)
        try node.start { tone.render($0) }
        func parkReadyCount() -> Int { events.count { if case .parkSinkReady = $0 { true } else { false } } }
        func linkedCount() -> Int { events.count { if case .outputsLinked = $0 { true } else { false } } }
        try waitUntil(timeoutSeconds: 5, "our node") { node.nodeID != nil }
        #expect(node.createParkSink(named: "scenesound-park-test") == 0)
        node.linkOutputs(toSink: "out")
        try waitUntil(timeoutSeconds: 5, "park sink and outputs") { parkReadyCount() == 1 && linkedCount() == 1 }

        server.kill9()
        #expect(events.wait(timeoutSeconds: 5) { $0.contains { if case .disconnected = $0 { true } else { false } } })
        try server.start()
        try waitUntil(timeoutSeconds: 10, "the park sink again, \(events.events)") { parkReadyCount() == 2 }
        try waitUntil(timeoutSeconds: 10, "our outputs linked again, \(events.events)") { linkedCount() == 2 }
        #expect(node.parkSinkNodeID != nil && node.nodeID(named: "scenesound-park-test") == node.parkSinkNodeID)
        #expect(try server.pipeWireNodeProperties(named: "scenesound-park-test") != nil, "the park sink as pw-dump shows it")
        #expect(node.reconnectCount == 1)
        #expect(events.count { if case .disconnected = $0 { true } else { false } } == 1, "\(events.events)")
    }
}

/// What a SceneSound that crashed leaves in the `default` metadata — targets naming a serial
/// that is gone, or one of our park sinks — deleted by the sweep (at start, and the guard's);
/// WirePlumber's "-1" (the default) is left alone.
@Suite(.serialized) struct PipeWireGraphNodeSweepTests {
    @Test func staleTargetsAndOnesNamingOurParkSinkAreSweptTheDefaultIsLeft() throws {
        let server = try PrivateSoundServer(.pipeWire)
        let box = NodeBox()
        let node = PipeWireGraphNodeTests.makeNode(server, sets: 1) { event in
            if case .parkSinkReady(let park) = event { box.set(park: park) }
        }
        defer {
            node.stop()
            server.tearDown()
        }
        try node.start { cycle in for c in 0 ..< 2 { cycle.output(c).update(repeating: 0, count: cycle.frames) } }
        try waitUntil(timeoutSeconds: 5, "our node") { node.nodeID != nil }
        #expect(node.createParkSink(named: "scenesound-park-sweep") == 0)
        try waitUntil(timeoutSeconds: 5, "our park sink") { box.park != nil }
        let ours = try #require(node.nodeID), park = try #require(box.park), out = try #require(node.nodeID(named: "out"))
        func write(_ subject: UInt32, _ key: String, _ value: String) throws {
            // ("--" before the values: "-1" is not an option.)
            try server.pipeWireTool("pw-metadata", ["-n", "default", "--", "\(subject)", key, value, "Spa:Id"])
        }
        try write(out, "target.object", "999999")        // a serial that is no node
        try write(ours, "target.node", "\(park)")        // our park sink
        try write(ours, "target.object", "-1")           // the default: left alone
        try waitUntil(timeoutSeconds: 5, "the targets written") {
            (try PipeWireGraphNodeTests.metadataTargets(server, node: nil)).count == 3
        }
        let swept = node.sweepStaleTargets(parkSinkPrefix: "scenesound-park")
        let left = try PipeWireGraphNodeTests.metadataTargets(server, node: nil)
        print("swept \(String(describing: swept)); left \(left)")
        #expect(swept == 2)
        #expect(left.count == 1 && left[0].contains("id:\(ours) ") && left[0].contains("'-1'"), "\(left)")
    }
}

/// Who runs real-time: the node's data thread from its first cycle, and nothing else. On
/// 0.3.65 work handed to the data loop before its thread has first run is done by the thread
/// that hands it over; raising the data thread that way once left a test's worker thread at
/// SCHED_FIFO 20 under load, and every app and busy loop it started after ran there too.
@Suite(.serialized) struct PipeWireGraphNodeSchedulingTests {
    @Test func theDataThreadIsRealTimeAndTheThreadThatStartsTheNodeKeepsItsScheduling() throws {
        let server = try PrivateSoundServer(.pipeWire)
        defer { server.tearDown() }
        let node = PipeWireGraphNodeTests.makeNode(server, sets: 1)
        defer { node.stop() }
        // Started from a thread of the test's own, at normal scheduling, which reads its
        // scheduling again once the node is running.
        let policies = Mutex<(before: ThreadScheduling, after: ThreadScheduling, started: Bool)>((.normal, .normal, false))
        let done = DispatchSemaphore(value: 0)
        let starter = Thread {
            let before = ThreadScheduling.current()
            let started = (try? node.start { cycle in
                for channel in 0 ..< 2 { cycle.output(channel).update(repeating: 0, count: cycle.frames) }
            }) != nil
            if started {
                node.linkOutputs(toSink: nil)
                _ = waitUntil(timeoutSeconds: 5) { node.cycleCount > 10 }
            }
            policies.withLock { $0 = (before, ThreadScheduling.current(), started) }
            done.signal()
        }
        starter.start()
        try #require(done.wait(timeout: .now() + 15) == .success, "the starting thread never finished")
        let (before, after, started) = policies.withLock { $0 }
        try #require(started, "the node did not start")
        #expect(before == .normal && after == before, "the starting thread: \(before) before, \(after) after")
        try waitUntil(timeoutSeconds: 5, "the node running") { node.cycleCount > 10 }
        if geteuid() == 0 { #expect(node.dataThreadIsRealTime == true, "the data thread at its first cycle") }
    }
}
