import Foundation
import SceneSoundTestSupport
import Glibc
import SceneSoundProtocol

/// A test-only server: a real Unix socket in a temporary directory, one accepted connection,
/// and a script that runs on its own thread and speaks the protocol through `PeerConnection`.
/// Every read has a timeout, so a test whose client misbehaves fails instead of hanging.
final class ScriptedPeer: @unchecked Sendable {
    struct ScriptFailure: Error, CustomStringConvertible { let description: String }

    let directory: String
    let socketPath: String
    private let listener: Int32
    private let done = DispatchSemaphore(value: 0)
    private let failure = NSLock()
    private var scriptError: Error?

    /// Starts listening and runs `script` on the first connection.
    init(_ script: @escaping @Sendable (PeerConnection) throws -> Void) throws {
        var template = Array((NSTemporaryDirectory() + "scenesound-client-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw ScriptFailure(description: "mkdtemp failed") }
        directory = String(cString: made)
        socketPath = directory + "/socket"
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        let bound = withUnixSocketAddress(socketPath) { bind(listener, $0, $1) }
        guard bound == 0, listen(listener, 4) == 0 else { throw ScriptFailure(description: "bind/listen failed: \(errno)") }
        Thread.detachNewThread { [self] in
            defer { done.signal() }
            do {
                var poller = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, 10_000) == 1 else { throw ScriptFailure(description: "no client connected") }
                let descriptor = accept(listener, nil, nil)
                guard descriptor >= 0 else { throw ScriptFailure(description: "accept failed") }
                let connection = PeerConnection(descriptor: descriptor)
                defer { connection.close() }
                try script(connection)
            } catch {
                failure.lock()
                scriptError = error
                failure.unlock()
            }
        }
    }

    /// Waits for the script to end, cleans up, and rethrows what the script threw.
    func finish(timeoutSeconds: Double = 10) throws {
        let finished = done.wait(timeout: .now() + timeoutSeconds) == .success
        Glibc.close(listener)
        unlink(socketPath)
        rmdir(directory)
        guard finished else { throw ScriptFailure(description: "the peer's script did not finish") }
        failure.lock()
        defer { failure.unlock() }
        if let scriptError { throw scriptError }
    }
}

/// The server side of one connection, as a script sees it.
final class PeerConnection: @unchecked Sendable {
    private let descriptor: Int32
    private var decoder = FrameDecoder()
    private var isClosed = false

    init(descriptor: Int32) { self.descriptor = descriptor }

    /// The next frame from the client; throws after `timeoutSeconds` or at end of stream.
    func receiveFrame(timeoutSeconds: Double = 5) throws -> Frame {
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        while true {
            if let frame = try decoder.nextFrame() {
                return Frame(typeCode: frame.typeCode, requestID: frame.requestID, payload: ArraySlice(Array(frame.payload)))
            }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { throw ScriptedPeer.ScriptFailure(description: "timed out waiting for the client") }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(remaining * 1000) + 1) == 1 else { continue }
            var buffer = [UInt8](repeating: 0, count: 65536)
            let count = recv(descriptor, &buffer, buffer.count, 0)
            guard count > 0 else { throw ScriptedPeer.ScriptFailure(description: "the client closed the connection") }
            decoder.append(contentsOf: buffer[..<count])
        }
    }

    /// The next message and its request id.
    func receive(timeoutSeconds: Double = 5) throws -> (message: Message, requestID: UInt32) {
        let frame = try receiveFrame(timeoutSeconds: timeoutSeconds)
        return (try Message.decode(frame: frame), frame.requestID)
    }

    /// True when nothing arrives within `seconds` (the client is holding back).
    func staysQuiet(forSeconds seconds: Double) throws -> Bool {
        do {
            let frame = try receiveFrame(timeoutSeconds: seconds)
            throw ScriptedPeer.ScriptFailure(description: "unexpected \(MessageType(rawValue: frame.typeCode)?.name ?? "frame")")
        } catch let failure as ScriptedPeer.ScriptFailure where failure.description == "timed out waiting for the client" {
            return true
        }
    }

    func send(_ message: Message, requestID: UInt32 = 0) {
        sendRaw(FrameEncoder.frame(message, requestID: requestID))
    }

    func sendRaw(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Reads HELLO and answers WELCOME with these limits; returns the HELLO.
    @discardableResult
    func handshake(maxFrameBytes: UInt32 = UInt32(ProtocolLimits.defaultMaxFrameBytes)) throws -> Hello {
        let (message, requestID) = try receive()
        guard case .hello(let hello) = message else {
            throw ScriptedPeer.ScriptFailure(description: "expected HELLO, got \(message.type.name)")
        }
        send(.welcome(Welcome(version: 1, sampleRateHz: 48000, blockFrames: 256, maxFrameBytes: maxFrameBytes,
                              maxStreams: 16, maxSampleBytes: 1 << 20, serverName: "scripted-peer")),
             requestID: requestID)
        return hello
    }

    /// Expects a request of the given type; returns it with its id.
    func expect(_ type: MessageType, timeoutSeconds: Double = 5) throws -> (message: Message, requestID: UInt32) {
        let received = try receive(timeoutSeconds: timeoutSeconds)
        guard received.message.type == type else {
            throw ScriptedPeer.ScriptFailure(description: "expected \(type.name), got \(received.message.type.name)")
        }
        return received
    }

    func close() {
        guard !isClosed else { return }
        isClosed = true
        Glibc.close(descriptor)
    }
}

func require(_ condition: Bool, _ description: String) throws {
    if !condition { throw ScriptedPeer.ScriptFailure(description: description) }
}
