import SceneSoundPlatform
import Glibc
import SceneSoundProtocol
import Synchronization

/// One connection to `scenesoundd`: blocking, thread-safe, callback-based at its core.
///
/// Threading: a reader thread (a plain pthread) decodes every frame the server sends and
/// dispatches it — a reply to the completion of the request with its id (replies may come in any
/// order), `CREDIT_GRANTED` to the stream's credit, stream and play events to their waiters and
/// to the event handler. Completions and the event handler therefore run on the reader thread;
/// they must not make blocking calls on the same connection (those throw `invalidArgument`
/// there instead of deadlocking). Any thread may send; whole frames are written under a lock,
/// so frames from different threads never interleave.
///
/// When the server goes away or `close()` is called, every waiter fails with the reason
/// (`ClientError.disconnected`, including the server's last `ERROR` if it sent one); nothing
/// waits forever. The connection closes when `close()` is called or the object is released.
public final class ClientConnection: @unchecked Sendable {
    /// The timeout of ordinary requests when the caller does not pass one.
    public static let defaultTimeoutSeconds: Double = 10

    public let socketPath: String
    /// What the server announced in `WELCOME`.
    public let server: ServerParameters

    let session: SessionState
    private let socket: UnixSocket
    /// Serialises frames on the socket.
    private let writeLock = Mutex(())
    /// Taken (set to nil) by the first `close()`, which joins the thread.
    private let reader: Mutex<PlatformThread?>
    private let readerIdentity: PlatformThread

    /// Connects, performs the handshake within `timeoutSeconds`, and starts the reader thread.
    /// Throws `cannotConnect` when nothing listens at `socketPath`, `server` when the server
    /// refuses (e.g. `unsupported_version`), `timedOut` when it does not answer.
    public init(socketPath: String, clientName: String, clientPID: UInt32 = UInt32(truncatingIfNeeded: getpid()),
                timeoutSeconds: Double? = ClientConnection.defaultTimeoutSeconds) throws(ClientError) {
        let socket = try UnixSocket(connectingTo: socketPath)
        let server = try Handshake.perform(on: socket, clientPID: clientPID, clientName: clientName,
                                           timeoutSeconds: timeoutSeconds)
        let session = SessionState(firstRequestID: Handshake.requestID + 1)
        let thread = try startClientThread {
            ConnectionReader(socket: socket, session: session, maxFrameBytes: server.maxFrameBytes).run()
        }
        self.socketPath = socketPath
        self.server = server
        self.socket = socket
        self.session = session
        self.reader = Mutex(thread)
        self.readerIdentity = thread
    }

    deinit { close() }

    /// Ends the connection: the server releases this client's streams and plays, every waiter
    /// fails with `disconnected`. Returns once the reader thread has stopped (unless called on
    /// it). Safe to call more than once.
    public func close() {
        session.disconnect(.disconnected(reason: "the connection was closed by this client"))
        socket.shutdownBothDirections()
        reader.withLock { $0.take() }?.joinOrDetach()
    }

    /// Nil while connected; afterwards why the connection ended.
    public var disconnection: ClientError? { session.disconnection }

    /// Blocks until the connection ends (server gone or `close()`), at most `timeoutSeconds`.
    /// Returns why it ended, or nil on timeout.
    public func waitUntilDisconnected(timeoutSeconds: Double?) -> ClientError? {
        session.ended.wait(timeoutSeconds: timeoutSeconds)
    }

    /// Receives server events; see `ClientEvent`. Replaces any previous handler.
    public func setEventHandler(_ handler: ClientEventHandler?) {
        session.setEventHandler(handler)
    }

    // MARK: The callback core

    /// Sends a request and calls `completion` with its reply. `ERROR` replies arrive as
    /// `ClientError.server`. Values are validated first (`invalidArgument` without sending).
    @discardableResult
    public func send(_ request: Message, completion: @escaping ReplyCompletion) -> OperationCanceller {
        var request = request
        if case .streamOpen(let open) = request {
            do throws(ClientError) { request = .streamOpen(try adapted(open)) } catch {
                completion(.failure(error))
                return { _ in }
            }
        }
        let type = request.type
        guard type.direction == .clientToServer, type.requestIDRule == .nonZero, type != .hello else {
            completion(.failure(.invalidArgument("\(type.name) is not a request a client can send")))
            return { _ in }
        }
        do throws(ProtocolError) { try request.validate() } catch {
            completion(.failure(ClientError(error)))
            return { _ in }
        }
        var bytesPerFrame: Int?
        if case .streamOpen(let open) = request { bytesPerFrame = open.format.bytesPerFrame }
        let pending = SessionState.PendingRequest(messageName: type.name, openedStreamBytesPerFrame: bytesPerFrame,
                                                  completion: completion)
        guard let requestID = session.register(pending) else { return { _ in } }
        let session = self.session
        let cancel: OperationCanceller = { error in session.abandon(requestID: requestID, with: error) }
        let frame = FrameEncoder.frame(request, requestID: requestID)
        guard frame.count <= server.maxFrameBytes else {
            cancel(.invalidArgument("\(type.name) of \(frame.count) bytes exceeds the server's maximum frame of \(server.maxFrameBytes) bytes"))
            return cancel
        }
        do { try write(frame: frame) } catch { cancel(error) }
        return cancel
    }

    /// STREAM_OPEN in the agreed version's layout: from version 2 on it always carries its
    /// channel map (empty: the standard layout); version 1 has none and one or two channels.
    private func adapted(_ open: StreamOpen) throws(ClientError) -> StreamOpen {
        var open = open
        if server.protocolVersion >= 2 {
            if open.channelMap == nil { open.channelMap = [] }
            return open
        }
        let standard: [[ChannelPosition]] = [[], [.frontCenter], [.frontLeft, .frontRight]]
        guard open.format.channels <= 2, standard.contains(open.channelMap ?? []) else {
            throw .invalidArgument("the server speaks protocol version 1: streams of 1 or 2 channels without a channel map")
        }
        open.channelMap = nil
        return open
    }

    /// Performs `operation` and calls `completion` with its value.
    @discardableResult
    public func perform<Value>(_ operation: ClientOperation<Value>,
                               completion: @escaping OperationCompletion<Value>) -> OperationCanceller {
        send(operation.request) { result in
            completion(result.flatMap { reply in
                do throws(ClientError) { return .success(try operation.interpretReply(reply)) } catch { return .failure(error) }
            })
        }
    }

    // MARK: The blocking API

    /// Sends a request and waits for its reply (nil timeout: as long as it takes).
    public func request(_ request: Message,
                        timeoutSeconds: Double? = ClientConnection.defaultTimeoutSeconds) throws(ClientError) -> Message {
        try checkNotOnReaderThread(request.type.name)
        return try waitBlocking(request.type.name, timeoutSeconds: timeoutSeconds) { send(request, completion: $0) }
    }

    /// Performs `operation` and waits for its value.
    public func perform<Value>(_ operation: ClientOperation<Value>,
                               timeoutSeconds: Double? = ClientConnection.defaultTimeoutSeconds) throws(ClientError) -> Value {
        try checkNotOnReaderThread(operation.name)
        return try waitBlocking(operation.name, timeoutSeconds: timeoutSeconds) { perform(operation, completion: $0) }
    }

    /// Blocking on a reply on the thread that delivers replies would wait forever.
    func checkNotOnReaderThread(_ operation: String) throws(ClientError) {
        if readerIdentity.isCurrent {
            throw .invalidArgument("\(operation): blocking call inside a completion or event handler (the reader thread); use the callback API there")
        }
    }

    // MARK: Sending

    /// Sends a one-way message (`STREAM_DATA`, `HEAD_POSE`).
    func sendOneWay(_ message: Message) throws(ClientError) {
        var frame: [UInt8] = []
        FrameEncoder.append(message, requestID: 0, to: &frame)
        try write(frame: frame)
    }

    /// Writes one whole frame. When the socket fails, the reason reported is the one the
    /// reader finds (it reads what the server sent before closing, e.g. `credit_exceeded`).
    func write(frame: [UInt8]) throws(ClientError) {
        if let disconnection = session.disconnection { throw disconnection }
        do {
            try writeLock.withLock { (_) throws(ClientError) in try socket.sendAll(frame) }
        } catch {
            // The server closed its end; give the reader a moment to read its last words.
            throw session.ended.wait(timeoutSeconds: 1) ?? error
        }
    }
}
