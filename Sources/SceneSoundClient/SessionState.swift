import SceneSoundPlatform
import SceneSoundProtocol
import Synchronization

/// What one connection knows, shared by the reader thread and the callers: requests awaiting
/// replies, stream credit, ended plays, and whether the connection is gone.
///
/// Every method changes state under one lock and runs completions only after unlocking, so a
/// completion may call back into the connection (send another request) without deadlocking.
final class SessionState: Sendable {
    /// What the reader must remember about a request to handle its reply.
    struct PendingRequest {
        let messageName: String
        /// Set for `STREAM_OPEN`: the stream's credit account is created by the reader when the
        /// reply arrives, before any `CREDIT_GRANTED` for it can be handled.
        let openedStreamBytesPerFrame: Int?
        let completion: ReplyCompletion
    }

    private struct State {
        var nextRequestID: UInt32 = 1
        var nextToken: UInt64 = 1
        var pending: [UInt32: PendingRequest] = [:]
        var streams = StreamCreditAccounts()
        var plays = PlaybackLedger()
        /// Once set, the connection is over and every new request fails with it.
        var disconnection: ClientError?
        /// The last `ERROR` with request id 0: usually why the server is about to close.
        var lastConnectionError: ErrorReply?
        var eventHandler: ClientEventHandler?
    }

    private let state = Mutex(State())
    /// Fulfilled once, with the reason, when the connection ends.
    let ended = OneShot<ClientError>()

    init(firstRequestID: UInt32) {
        state.withLock { $0.nextRequestID = firstRequestID }
    }

    var disconnection: ClientError? { state.withLock { $0.disconnection } }

    func setEventHandler(_ handler: ClientEventHandler?) {
        state.withLock { $0.eventHandler = handler }
    }

    // MARK: Requests

    /// Registers a request and picks its id; nil (after failing `completion`) when disconnected.
    func register(_ request: PendingRequest) -> UInt32? {
        let outcome: Result<UInt32, ClientError> = state.withLock { state in
            if let disconnection = state.disconnection { return .failure(disconnection) }
            var id = state.nextRequestID
            while id == 0 || state.pending[id] != nil { id &+= 1 }  // 0 is reserved; skip ids still in use
            state.nextRequestID = id &+ 1
            state.pending[id] = request
            return .success(id)
        }
        switch outcome {
        case .success(let id): return id
        case .failure(let error): request.completion(.failure(error)); return nil
        }
    }

    /// Drops a request (timed out, cancelled, or never sent) and completes it with `error`.
    /// False when its reply already completed it.
    @discardableResult
    func abandon(requestID: UInt32, with error: ClientError) -> Bool {
        guard let request = state.withLock({ $0.pending.removeValue(forKey: requestID) }) else { return false }
        request.completion(.failure(error))
        return true
    }

    // MARK: Credit

    func nextToken() -> UInt64 {
        state.withLock { state in
            defer { state.nextToken += 1 }
            return state.nextToken
        }
    }

    func reserveCredit(streamID: UInt32, maxBytes: Int, token: UInt64,
                       completion: @escaping StreamCreditAccounts.CreditCompletion) {
        let callback = state.withLock { state -> (() -> Void)? in
            if let disconnection = state.disconnection { return { completion(.failure(disconnection)) } }
            return state.streams.reserve(streamID: streamID, maxBytes: maxBytes, token: token, completion: completion)
        }
        callback?()
    }

    func cancelCreditReservation(streamID: UInt32, token: UInt64) -> Bool {
        state.withLock { $0.streams.cancelReservation(streamID: streamID, token: token) }
    }

    func creditBytes(of streamID: UInt32) -> Int {
        state.withLock { $0.streams.creditBytes(of: streamID) }
    }

    /// This client closed (or gave up on) the stream: waiters fail, later events are ignored.
    func forgetStream(_ streamID: UInt32) {
        let callbacks = state.withLock {
            $0.streams.stop(streamID: streamID, reason: .streamClosed(streamID: streamID), forget: true)
        }
        callbacks.forEach { $0() }
    }

    /// No more data will be accepted (a looping stream after its first drain).
    func stopAcceptingData(streamID: UInt32, reason: ClientError) {
        let callbacks = state.withLock { $0.streams.refuseData(streamID: streamID, reason: reason) }
        callbacks.forEach { $0() }
    }

    func whenStreamStops(streamID: UInt32, token: UInt64, completion: @escaping StreamCreditAccounts.StopCompletion) {
        let callback = state.withLock { state -> (() -> Void)? in
            if let disconnection = state.disconnection { return { completion(disconnection) } }
            return state.streams.whenStopped(streamID: streamID, token: token, completion: completion)
        }
        callback?()
    }

    func cancelStopWaiter(streamID: UInt32, token: UInt64) {
        state.withLock { $0.streams.cancelStopWaiter(streamID: streamID, token: token) }
    }

    // MARK: Sample plays

    func whenPlaybackEnds(playID: UInt32, token: UInt64, completion: @escaping PlaybackLedger.EndCompletion) {
        let callback = state.withLock { state -> (() -> Void)? in
            if let disconnection = state.disconnection { return { completion(.failure(disconnection)) } }
            return state.plays.whenEnded(playID: playID, token: token, completion: completion)
        }
        callback?()
    }

    func cancelPlaybackWaiter(playID: UInt32, token: UInt64) -> Bool {
        state.withLock { $0.plays.cancelWaiter(playID: playID, token: token) }
    }

    // MARK: Incoming

    /// Handles one decoded message from the server. Returns an error when the message breaks
    /// the protocol badly enough that the connection must close.
    func dispatch(_ message: Message, requestID: UInt32) -> ClientError? {
        var callbacks: [() -> Void] = []
        var violation: ClientError?
        state.withLock { state in
            let handler = state.eventHandler
            switch message {
            case .error(let reply) where requestID == 0:
                state.lastConnectionError = reply
                if let handler { callbacks.append { handler(.serverError(reply)) } }
            case .error(let reply):
                if let request = state.pending.removeValue(forKey: requestID) {
                    callbacks.append { request.completion(.failure(.server(code: reply.code, message: reply.message))) }
                }
            case .welcome, .ok, .sceneListReply, .streamOpened, .samplePlaying, .statusReply:
                // A reply nobody waits for answers a request abandoned after a timeout or a
                // cancellation; it is dropped. (A stream opened that late stays open on the
                // server until the connection closes.)
                guard let request = state.pending.removeValue(forKey: requestID) else { return }
                if case .streamOpened(let opened) = message {
                    guard let bytesPerFrame = request.openedStreamBytesPerFrame else {
                        violation = .protocolViolation("STREAM_OPENED answers \(request.messageName)")
                        callbacks.append { request.completion(.failure(violation!)) }
                        return
                    }
                    state.streams.open(streamID: opened.streamID, bytesPerFrame: bytesPerFrame,
                                       initialCreditBytes: Int(opened.creditBytes))
                }
                callbacks.append { request.completion(.success(message)) }
            case .creditGranted(let grant):
                callbacks += state.streams.grant(streamID: grant.streamID, bytes: Int(grant.bytes))
            case .streamEnded(let ended):
                guard state.streams.isOpen(ended.streamID) else { return }  // closed by us: ignored
                if ended.reason != .drained {
                    callbacks += state.streams.stop(streamID: ended.streamID,
                                                    reason: .streamEnded(streamID: ended.streamID, reason: ended.reason))
                }
                if let handler { callbacks.append { handler(.streamEnded(ended)) } }
            case .streamError(let failure):
                guard state.streams.isOpen(failure.streamID) else { return }
                callbacks += state.streams.stop(streamID: failure.streamID, reason: .streamFailed(
                    streamID: failure.streamID, code: failure.code, message: failure.message))
                if let handler { callbacks.append { handler(.streamError(failure)) } }
            case .playbackEnded(let ended):
                callbacks += state.plays.ended(ended)
                if let handler { callbacks.append { handler(.playbackEnded(ended)) } }
            case .outputDeviceChanged(let changed):
                if let handler { callbacks.append { handler(.outputDeviceChanged(changed)) } }
            default:
                violation = .protocolViolation("the server sent \(message.type.name), a client-to-server message")
            }
        }
        callbacks.forEach { $0() }
        return violation
    }

    /// The connection is over: every waiter fails with `error` (or with the server's last
    /// `ERROR`, which says why it closed), and the event handler hears of it once.
    func disconnect(_ error: ClientError) {
        var callbacks: [() -> Void] = []
        state.withLock { state in
            guard state.disconnection == nil else { return }
            var reason = error
            if case .disconnected = error, let last = state.lastConnectionError {
                reason = .disconnected(reason: "the server closed the connection: \(last.message.isEmpty ? last.code.name : last.message) (\(last.code.name))")
            }
            state.disconnection = reason
            let pending = state.pending.values
            state.pending = [:]
            callbacks += pending.map { request in { request.completion(.failure(reason)) } }
            callbacks += state.streams.stopAll(reason: reason)
            callbacks += state.plays.failAll(reason)
            if let handler = state.eventHandler { callbacks.append { handler(.disconnected(reason)) } }
            callbacks.append { [ended] in ended.fulfill(reason) }
        }
        callbacks.forEach { $0() }
    }
}
