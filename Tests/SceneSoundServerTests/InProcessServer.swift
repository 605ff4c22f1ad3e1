import Foundation
import NIOCore
import NIOEmbedded
import SceneSoundDSP
import SceneSoundEngine
import SceneSoundOutputs
import SceneSoundProtocol
import SceneSoundSOFA
@testable import SceneSoundServer
import SceneSoundTestSupport

/// The real KEMAR set, loaded once per test process through the tests' HRTF cache.
enum KEMARSet {
    static let set: HRTFSet = {
        let cache = NSTemporaryDirectory() + "scenesound-test-cache/scenesound"
        return try! HRTFLoader(cacheDirectory: cache).load(path: SOFAFile.defaultPath, sampleRateHz: 48000).set
    }()
    /// Its bus decoder, designed once for every engine the tests build.
    static let busFilters = AmbisonicDecodeFilters.design(from: set)
}

/// The server's core over a real engine, in this process and on this thread: sessions are
/// `EmbeddedChannel`s with the real pipeline (framing, session), and the test plays the output,
/// rendering blocks and marking them delivered before each tick. No sockets, no sleeps.
final class InProcessServer {
    let engine: Engine
    let core: ServerCore
    let loop = EmbeddedEventLoop()
    /// The last block rendered, interleaved stereo.
    private(set) var block: [Float]

    init(maximumEngineStreams: Int = 1024, maximumScenes: Int = 1024,
         _ configure: (inout ServerConfiguration) -> Void = { _ in }) {
        var configuration = ServerConfiguration(socketPath: "/nonexistent/in-process")
        configure(&configuration)
        engine = Engine(hrtf: KEMARSet.set, configuration: EngineConfiguration(sampleRateHz: 48000, blockFrames: 256, room: .none),
                        maximumStreams: maximumEngineStreams, maximumScenes: maximumScenes, busFilters: KEMARSet.busFilters)
        core = ServerCore(configuration: configuration, engine: engine,
                          outputStatus: { OutputStatus(kind: "in-process") }, hrtfPath: SOFAFile.defaultPath,
                          logger: .init(label: "in-process"))
        block = [Float](repeating: 0, count: 256 * 2)
    }

    /// A connected client; with `handshake`, HELLO has been answered with WELCOME.
    func connect(name: String = "test", handshake: Bool = true, peerPID: Int32 = 0) throws -> EmbeddedClient {
        let channel = EmbeddedChannel(loop: loop)
        try core.addSession(to: channel.pipeline.syncOperations)
        try channel.connect(to: SocketAddress(unixDomainSocketPath: "/nonexistent/peer")).wait()
        if peerPID != 0 { channel.pipeline.fireUserInboundEventTriggered(PeerAdmission.admitted(peerPID: peerPID)) }
        let client = EmbeddedClient(channel: channel)
        if handshake {
            guard case .welcome(let welcome) = try client.request(.hello(Hello(clientPID: 1, clientName: name))) else {
                throw TestFailure("no WELCOME")
            }
            client.welcome = welcome
        }
        return client
    }

    /// Renders `blocks` blocks as an output thread would, marks them delivered, then ticks.
    func render(blocks: Int = 1, delivered: Bool = true) {
        for _ in 0..<blocks {
            block.withUnsafeMutableBufferPointer { engine.render(into: $0.baseAddress!) }
        }
        if delivered { engine.markDelivered(throughFrame: engine.renderedFrames) }
        core.tick()
    }

    /// The status document as a client gets it, read through the shared schema: a field missing
    /// or unknown fails, so the in-process tests hold the server to the schema too.
    func status() throws -> StatusDocument {
        try StatusSchema.decode(core.statusDocument().serialized)
    }

    func health() throws -> StatusDocument.Health { try status().health }
}

/// A client on an `EmbeddedChannel`: writes frames into the pipeline, reads what the session
/// wrote back. Everything happens synchronously, so a reply is there as soon as the call returns.
final class EmbeddedClient {
    let channel: EmbeddedChannel
    var welcome: Welcome?
    private var decoder = FrameDecoder(maxFrameBytes: 16 << 20)
    private var nextRequestID: UInt32 = 1
    /// Frames read and not yet taken.
    private(set) var inbox: [(message: Message, requestID: UInt32)] = []
    var credits: [UInt32: Int] = [:]

    init(channel: EmbeddedChannel) { self.channel = channel }

    var isOpen: Bool { channel.isActive }

    func sendRaw(_ bytes: [UInt8]) throws {
        try channel.writeInbound(channel.allocator.buffer(bytes: bytes))
    }

    func send(_ message: Message, requestID: UInt32 = 0) throws {
        try sendRaw(FrameEncoder.frame(message.inVersion(welcome?.version ?? 1), requestID: requestID))
    }

    func takeRequestID() -> UInt32 {
        defer { nextRequestID += 1 }
        return nextRequestID
    }

    /// Sends a request; its reply must already have been written (nil: none yet).
    func request(_ message: Message) throws -> Message {
        let id = takeRequestID()
        try send(message, requestID: id)
        guard let reply = take(where: { $0.requestID == id && $0.message.isReply }) else {
            throw TestFailure("no reply to \(message.type)")
        }
        return reply
    }

    /// Reads everything the session has written so far into the inbox.
    func readAll() throws {
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) {
            decoder.append(contentsOf: buffer.readableBytesView)
            while let frame = try decoder.nextFrame() {
                let message = try Message.decode(frame: frame)
                if case .creditGranted(let grant) = message { credits[grant.streamID, default: 0] += Int(grant.bytes) }
                inbox.append((message, frame.requestID))
            }
        }
    }

    /// Takes the first frame in the inbox that matches.
    func take(where predicate: ((message: Message, requestID: UInt32)) -> Bool) -> Message? {
        try? readAll()
        guard let index = inbox.firstIndex(where: predicate) else { return nil }
        return inbox.remove(at: index).message
    }

    /// Takes every frame read so far.
    func takeAll() throws -> [(message: Message, requestID: UInt32)] {
        try readAll()
        defer { inbox.removeAll() }
        return inbox
    }

    /// The first ERROR in the inbox: its code and request id.
    func takeError() -> (code: ErrorCode, requestID: UInt32)? {
        try? readAll()
        guard let index = inbox.firstIndex(where: { if case .error = $0.message { true } else { false } }),
              case .error(let reply) = inbox[index].message else { return nil }
        return (reply.code, inbox.remove(at: index).requestID)
    }

    func openStream(_ format: AudioFormat = AudioFormat(sampleFormat: .s16le, rateHz: 48000, channels: 1),
                    kind: StreamKind = .playback, scene: String = "", loop: Bool = false) throws -> UInt32 {
        let reply = try request(.streamOpen(StreamOpen(kind: kind, format: format, loop: loop, sceneID: scene)))
        guard case .streamOpened(let opened) = reply else { throw TestFailure("STREAM_OPEN: \(reply)") }
        credits[opened.streamID] = Int(opened.creditBytes)
        return opened.streamID
    }

    /// Sends `bytes` of PCM to a stream, within credit (the caller keeps to it).
    func write(stream: UInt32, bytes: Int, value: UInt8 = 1) throws {
        try send(.streamData(StreamData(streamID: stream, pcm: ArraySlice(repeating: value, count: bytes))))
        credits[stream, default: 0] -= bytes
    }
}

/// An error reply's code, or nil for anything else.
func errorCode(_ message: Message?) -> ErrorCode? {
    if case .error(let reply)? = message { return reply.code }
    return nil
}

/// A head orientation turned `degrees` (positive: left), as the protocol carries it.
func yawQuaternion(_ degrees: Double) -> SceneSoundProtocol.Quaternion {
    let q = SceneSoundDSP.Quaternion(yawDegrees: degrees)
    return SceneSoundProtocol.Quaternion(w: Float(q.w), x: Float(q.x), y: Float(q.y), z: Float(q.z))
}

extension Message {
    /// As a client of `version` sends it: STREAM_OPEN carries its channel map from version 2 on
    /// (empty: the standard layout), as SceneSoundClient does.
    func inVersion(_ version: UInt16) -> Message {
        guard version >= 2, case .streamOpen(var open) = self, open.channelMap == nil else { return self }
        open.channelMap = []
        return .streamOpen(open)
    }
}
