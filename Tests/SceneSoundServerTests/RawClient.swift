import Foundation
import SceneSoundTestSupport
import SceneSoundProtocol

/// A deliberately simple protocol client for tests: blocking socket, explicit frames. It can
/// also send raw bytes, which is how the malformed-input tests speak.
final class RawClient: @unchecked Sendable {
    let fd: Int32
    private var decoder = FrameDecoder(maxFrameBytes: 16 << 20)
    private var nextRequestID: UInt32 = 1
    /// Frames that arrived while waiting for something else (events, other replies).
    private(set) var backlog: [(Message, UInt32)] = []
    var welcome: Welcome?
    var credits: [UInt32: Int] = [:]

    init(socketPath: String, handshake: Bool = true, name: String = "test") throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        let result = withUnixSocketAddress(socketPath) { connect(fd, $0, $1) }
        // Not closed here: every stored property is set, so a throw from here on runs deinit,
        // which closes it. (Closing it here too closed it twice; the second close hit whatever
        // another thread had opened with that number meanwhile, e.g. IdleTests' concurrent
        // setups, one waiting for its daemon's socket, another's client: "send: Bad file descriptor".)
        guard result == 0 else { throw TestFailure("connect: \(String(cString: strerror(errno)))") }
        if handshake {
            let reply = try request(.hello(Hello(clientPID: UInt32(getpid()), clientName: name)))
            guard case .welcome(let w) = reply else { throw TestFailure("expected WELCOME, got \(reply)") }
            welcome = w
        }
    }

    deinit { close(fd) }

    func sendRaw(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw TestFailure("send: \(String(cString: strerror(errno)))") }
            offset += n
        }
    }

    func send(_ message: Message, requestID: UInt32 = 0) throws {
        try sendRaw(FrameEncoder.frame(message.inVersion(welcome?.version ?? 1), requestID: requestID))
    }

    /// Sends a request and waits for its reply; events seen meanwhile go to the backlog.
    func request(_ message: Message, timeoutSeconds: Double = 10) throws -> Message {
        let id = nextRequestID
        nextRequestID += 1
        try send(message, requestID: id)
        return try waitFor(timeoutSeconds: timeoutSeconds) { m, rid in rid == id && m.isReply }
    }

    /// Waits for a frame matching `predicate` (checking the backlog first).
    func waitFor(timeoutSeconds: Double = 10, _ predicate: (Message, UInt32) -> Bool) throws -> Message {
        if let index = backlog.firstIndex(where: { predicate($0.0, $0.1) }) {
            return backlog.remove(at: index).0
        }
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        while Date() < deadline {
            guard let (message, id) = try readFrame(timeoutSeconds: deadline.timeIntervalSinceNow) else { continue }
            if case .creditGranted(let grant) = message { credits[grant.streamID, default: 0] += Int(grant.bytes) }
            if predicate(message, id) { return message }
            backlog.append((message, id))
        }
        throw TestFailure("timed out waiting for a frame")
    }

    /// The next frame, nil on timeout; throws when the server closed the connection.
    func readFrame(timeoutSeconds: Double) throws -> (Message, UInt32)? {
        while true {
            if let frame = try decoder.nextFrame() { return (try Message.decode(frame: frame), frame.requestID) }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(max(0, timeoutSeconds) * 1000)) > 0 else { return nil }
            var buffer = [UInt8](repeating: 0, count: 65536)
            let n = recv(fd, &buffer, buffer.count, 0)
            guard n > 0 else { throw TestFailure("connection closed by the server") }
            decoder.append(contentsOf: buffer[0..<n])
        }
    }

    /// True once the server has closed the connection (reads until EOF, within the timeout).
    func isClosedByServer(timeoutSeconds: Double = 5) -> Bool {
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        while Date() < deadline {
            do { if let frame = try readFrame(timeoutSeconds: 0.2) { backlog.append(frame) } } catch { return true }
        }
        return false
    }

    // MARK: Streams

    func openStream(format: AudioFormat, scene: String = "", mode: SpatialMode = .anchored,
                    kind: StreamKind = .playback) throws -> UInt32 {
        let reply = try request(.streamOpen(StreamOpen(kind: kind, format: format, spatialMode: mode, sceneID: scene)))
        guard case .streamOpened(let opened) = reply else { throw TestFailure("STREAM_OPEN failed: \(reply)") }
        credits[opened.streamID] = Int(opened.creditBytes)
        return opened.streamID
    }

    /// Writes all of `pcm`, never beyond credit, waiting for grants.
    func write(stream: UInt32, pcm: [UInt8], bytesPerFrame: Int, timeoutSeconds: Double = 60) throws {
        let maxChunk = ((welcome.map { Int($0.maxFrameBytes) } ?? 65536) - 16) / bytesPerFrame * bytesPerFrame
        var offset = 0
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        while offset < pcm.count {
            let credit = credits[stream, default: 0]
            if credit < bytesPerFrame {
                guard Date() < deadline else { throw TestFailure("no credit for \(timeoutSeconds) s") }
                if let (message, id) = try readFrame(timeoutSeconds: 1) {
                    if case .creditGranted(let grant) = message { credits[grant.streamID, default: 0] += Int(grant.bytes) }
                    else { backlog.append((message, id)) }
                }
                continue
            }
            let n = min(credit, maxChunk, pcm.count - offset)
            try send(.streamData(StreamData(streamID: stream, pcm: pcm[offset..<(offset + n)])))
            credits[stream, default: 0] -= n
            offset += n
        }
    }
}

extension Message {
    var isReply: Bool {
        switch self {
        case .welcome, .ok, .error, .sceneListReply, .streamOpened, .samplePlaying, .statusReply: return true
        default: return false
        }
    }
}
