import SceneSoundTestSupport
import Foundation
import NIOCore
import NIOEmbedded
import Testing
import SceneSoundDSP
import SceneSoundEngine
import SceneSoundProtocol
@testable import SceneSoundServer

/// A full engine command queue (the render thread stalled or flooded) loses nothing: commands
/// wait in order and go through once there is room, state-setting ones coalesce, new work is
/// refused with an error while the backlog is long, and all of it is counted in status.
@Suite struct EngineCommandQueueTests {
    static let mono = AudioFormat(sampleFormat: .s16le, rateHz: 48000, channels: 1)

    /// Fills the engine's queue as a stalled render thread would leave it.
    static func fill(_ engine: Engine) -> Int {
        var pushed = 0
        while engine.commands.push(.setDucking(DuckingParameters())) { pushed += 1 }
        return pushed
    }

    @Test func aStreamClosedWhileTheQueueIsFullIsStillRemoved() throws {
        let server = InProcessServer()
        let client = try server.connect()
        #expect(Self.fill(server.engine) > 0)
        // Opened and closed while nothing fits: both commands wait, in order.
        let stream = try client.openStream(Self.mono)
        #expect(try client.request(.streamClose(StreamReference(streamID: stream))) == .ok)
        var health = try server.health()
        #expect(health.engineCommandsDeferred == 2, "\(health)")
        #expect(health.engineCommandsWaiting == 2)
        // The render thread catches up (512 commands a block); the tick hands on what waited.
        var blocks = 0
        while server.core.engineStreams.count > 0 || server.core.commands.waitingCount > 0 {
            server.render()
            blocks += 1
            #expect(blocks < 40, "the stream was never released: its removeStream was lost")
            if blocks >= 40 { break }
        }
        health = try server.health()
        #expect(health.engineCommandsWaiting == 0)
        #expect(health.engineCommandsDeferred == 2)
        #expect(server.core.engineStreams.count == 0)
    }

    @Test func stateCommandsCoalesceWhileTheyWait() throws {
        let server = InProcessServer()
        let client = try server.connect()
        let stream = try client.openStream(Self.mono)
        _ = Self.fill(server.engine)
        for yaw in stride(from: 0.0, to: 90, by: 1) {
            try client.send(.headPose(HeadPose(timestampNanoseconds: 0, orientation: yawQuaternion(yaw))))
        }
        for decibels in [-1, -2, -3, -4] as [Float] {
            #expect(try client.request(.streamSetVolume(StreamSetVolume(streamID: stream, volumeDecibels: decibels))) == .ok)
        }
        let commands = server.core.commands
        #expect(commands.waitingCount == 2, "one head pose and one gain wait, the latest of each")
        #expect(commands.deferredCount == 94)
        // The latest pose is the one the render thread gets.
        while commands.waitingCount > 0 || server.engine.commands.count > 0 { server.render() }
        #expect(abs(server.engine.renderer.headPose.orientation.yawDegrees - 89) < 1e-3)
    }

    @Test func newStreamsAndPlaysAreRefusedWhileTheBacklogIsLong() throws {
        let server = InProcessServer { $0.maximumWaitingEngineCommands = 2 }
        let client = try server.connect()
        try client.send(.sampleUpload(SampleUpload(name: "bell", format: Self.mono, totalBytes: 200, offsetBytes: 0,
                                                    pcm: ArraySlice(repeating: 1, count: 200))), requestID: 90)
        #expect(client.take { $0.requestID == 90 } == .ok)
        _ = Self.fill(server.engine)
        // Each stream waits as an addStream (a new scene's slot is already straight ahead).
        _ = try client.openStream(Self.mono, scene: "a")
        _ = try client.openStream(Self.mono, scene: "a")
        #expect(server.core.commands.waitingCount == 2)
        let open = try client.request(.streamOpen(StreamOpen(kind: .playback, format: Self.mono, sceneID: "")))
        #expect(errorCode(open) == .limitExceeded)
        #expect(errorCode(try client.request(.samplePlay(SamplePlay(name: "bell", kind: .system, sceneID: ""))))
                == .limitExceeded)
        // Requests that only set state are still carried out.
        #expect(try client.request(.headRecenter) == .ok)
        #expect(try server.health().requestsRefusedEngineBehind == 2)
        while server.core.commands.waitingCount > 0 { server.render() }
        _ = try client.openStream(Self.mono)
        guard case .samplePlaying = try client.request(.samplePlay(SamplePlay(name: "bell", kind: .system, sceneID: ""))) else {
            throw TestFailure("the play was refused after the backlog cleared")
        }
    }

    /// The queue on its own: order is kept across a full queue.
    @Test func orderIsKeptAcrossAFullQueue() {
        let queue = SPSCQueue<EngineCommand>(capacity: 2)
        let commands = EngineCommandQueue(queue: queue, refusalThreshold: 100)
        for id in 1...5 as ClosedRange<UInt32> { commands.push(.removeStream(id)) }
        #expect(commands.waitingCount == 3 && commands.deferredCount == 3)
        var seen: [UInt32] = []
        for _ in 0..<5 where seen.count < 5 {
            while let command = queue.pop() { if case .removeStream(let id) = command { seen.append(id) } }
            commands.flush()
        }
        #expect(seen == [1, 2, 3, 4, 5])
        #expect(commands.waitingCount == 0)
    }
}

/// opentrack datagrams pass a token bucket; the excess is dropped unread and counted.
@Suite struct OpenTrackRateTests {
    static func datagram(_ values: [Double], on channel: EmbeddedChannel) throws {
        let bytes = values.flatMap { v in withUnsafeBytes(of: v.bitPattern.littleEndian) { Array($0) } }
        let address = try SocketAddress(ipAddress: "127.0.0.1", port: 5000)
        try channel.writeInbound(AddressedEnvelope(remoteAddress: address, data: channel.allocator.buffer(bytes: bytes)))
    }

    @Test func aFloodOfDatagramsIsLimitedToTheConfiguredRate() throws {
        let server = InProcessServer()
        let channel = EmbeddedChannel(handler: OpenTrackHandler(head: server.core.head, packetsPerSecond: 100))
        for i in 0..<300 { try Self.datagram([0, 0, 0, Double(i % 90), 0, 0], on: channel) }
        let head = server.core.head
        #expect(head.openTrackAccepted == 100 && head.openTrackRateLimited == 200)
        // Half a second refills half the bucket; garbage within the rate is counted as rejected.
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(500))
        for _ in 0..<60 { try Self.datagram([0, 0, 0, .nan, 0, 0], on: channel) }
        #expect(head.openTrackRejected == 50 && head.openTrackRateLimited == 210)
        let status = try server.status().head
        #expect(status.opentrackPackets == 100)
        #expect(status.opentrackRateLimitedPackets == 210)
        #expect(status.opentrackRejectedPackets == 50)
    }
}
