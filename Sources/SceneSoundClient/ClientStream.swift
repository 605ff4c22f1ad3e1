import SceneSoundPlatform
import SceneSoundProtocol
import Synchronization

/// An open stream (blocking API). Writing never sends beyond the credit the server granted
/// (SPEC.md section 8): `write` sends what the credit covers, in frames no larger than the
/// server's maximum, whole audio frames only, and blocks until more credit arrives.
///
/// Thread-safe; one `write` runs at a time per stream (concurrent writes are serialised, so
/// each call's bytes stay contiguous). `drain`, `setVolume`, `setScene` and `close` may be
/// called from other threads while a write blocks; `close` wakes it with `streamClosed`.
public final class ClientStream: @unchecked Sendable {
    public let connection: ClientConnection
    public let id: UInt32
    /// How the stream was opened: kind, format, spatial mode, loop, volume, scene.
    public let options: StreamOpen
    /// The most PCM one `STREAM_DATA` frame carries: the server's frame limit, whole frames.
    public let maxPCMBytesPerFrame: Int
    /// The credit `STREAM_OPENED` gave: the room of the server's buffer for this stream.
    private let initialCreditBytes: Int

    private let writeLock = Mutex(())
    private let counters = Mutex(Counters())

    private struct Counters {
        var bytesSent = 0
        var isClosed = false
    }

    init(connection: ClientConnection, options: StreamOpen, opened: StreamOpened) {
        self.connection = connection
        self.id = opened.streamID
        self.options = options
        self.maxPCMBytesPerFrame = StreamData.maxPCMBytes(maxFrameBytes: connection.server.maxFrameBytes,
                                                         bytesPerFrame: options.format.bytesPerFrame)
        self.initialCreditBytes = Int(opened.creditBytes)
    }

    /// A stream dropped without `close()` is closed without waiting for the reply.
    deinit {
        guard !counters.withLock({ $0.isClosed }) else { return }
        connection.session.forgetStream(id)
        connection.send(.streamClose(StreamReference(streamID: id))) { _ in }
    }

    public var format: AudioFormat { options.format }
    /// Credit not yet used, in bytes.
    public var creditBytes: Int { connection.session.creditBytes(of: id) }
    /// PCM bytes sent so far (after a failed `write`: how far it got).
    public var bytesSent: Int { counters.withLock { $0.bytesSent } }
    /// PCM bytes the server has taken from its buffer to play, as its credit grants tell: what
    /// was sent less what it still holds. Grants come as the output renders, so this trails the
    /// sound by up to a render block. Meaningful while the stream is open (not after `close`).
    public var bytesConsumedByServer: Int { max(0, bytesSent + creditBytes - initialCreditBytes) }

    // MARK: Writing

    /// Sends `pcm` (whole audio frames in the stream's format), blocking on credit.
    /// `timeoutSeconds` bounds the whole call; on timeout part of `pcm` may have been sent
    /// (see `bytesSent`). Fails at once if the stream is defunct or closed.
    public func write(_ pcm: UnsafeRawBufferPointer, timeoutSeconds: Double? = nil) throws(ClientError) {
        try checkWholeFrames(pcm.count)
        try connection.checkNotOnReaderThread("STREAM_DATA")
        let deadline = MonotonicClock.deadlineSeconds(after: timeoutSeconds)
        try writeLock.withLock { (_) throws(ClientError) in
            var offset = 0
            while offset < pcm.count {
                let remainingSeconds = deadline.map { max(0, $0 - MonotonicClock.nowSeconds()) }
                let granted = try waitBlocking("writing to stream \(id)", timeoutSeconds: remainingSeconds) {
                    reserveCredit(maxBytes: min(pcm.count - offset, maxPCMBytesPerFrame), completion: $0)
                }
                try send(UnsafeRawBufferPointer(rebasing: pcm[offset..<offset + granted]))
                offset += granted
            }
        }
    }

    public func write(_ pcm: [UInt8], timeoutSeconds: Double? = nil) throws(ClientError) {
        try pcm.withUnsafeBytes { bytes in
            Result { () throws(ClientError) in try write(bytes, timeoutSeconds: timeoutSeconds) }
        }.get()
    }

    /// Takes up to `maxBytes` of credit (whole frames, at least one) as soon as the server has
    /// granted it; the callback half of `write`, shared with the async API.
    func reserveCredit(maxBytes: Int, completion: @escaping OperationCompletion<Int>) -> OperationCanceller {
        let session = connection.session
        let token = session.nextToken()
        let streamID = id
        session.reserveCredit(streamID: streamID, maxBytes: maxBytes, token: token, completion: completion)
        return { error in
            if session.cancelCreditReservation(streamID: streamID, token: token) { completion(.failure(error)) }
        }
    }

    /// Sends one `STREAM_DATA` frame within reserved credit.
    func send(_ chunk: UnsafeRawBufferPointer) throws(ClientError) {
        let data = StreamData(streamID: id, pcm: ArraySlice(chunk))
        try connection.sendOneWay(.streamData(data))
        counters.withLock { $0.bytesSent += chunk.count }
    }

    func checkWholeFrames(_ byteCount: Int) throws(ClientError) {
        guard byteCount % format.bytesPerFrame == 0 else {
            throw .invalidArgument("\(byteCount) bytes are not whole audio frames of \(format.bytesPerFrame) bytes")
        }
    }

    // MARK: Control

    /// Waits until everything sent so far has been rendered to the output (nil timeout: as long
    /// as the audio lasts). A looping stream answers after its first pass and takes no more data.
    public func drain(timeoutSeconds: Double? = nil) throws(ClientError) {
        try connection.perform(drainOperation(), timeoutSeconds: timeoutSeconds)
    }

    /// Stops the stream at once (unplayed data is discarded) and frees its id. A connection
    /// that is already gone counts as closed. Safe to call more than once.
    public func close(timeoutSeconds: Double? = ClientConnection.defaultTimeoutSeconds) throws(ClientError) {
        guard let operation = closeOperation() else { return }
        do {
            try connection.perform(operation, timeoutSeconds: timeoutSeconds)
        } catch .disconnected {
            return
        }
    }

    public func setVolume(decibels: Float, timeoutSeconds: Double? = ClientConnection.defaultTimeoutSeconds) throws(ClientError) {
        try connection.perform(.expectingOK(.streamSetVolume(StreamSetVolume(streamID: id, volumeDecibels: decibels))),
                               timeoutSeconds: timeoutSeconds)
    }

    /// Moves the stream to another scene ("" for none).
    public func setScene(_ sceneID: String, timeoutSeconds: Double? = ClientConnection.defaultTimeoutSeconds) throws(ClientError) {
        try connection.perform(.expectingOK(.streamSetScene(StreamSetScene(streamID: id, sceneID: sceneID))),
                               timeoutSeconds: timeoutSeconds)
    }

    /// Blocks until the stream can take no more data — the server ended or failed it, it was
    /// closed, or the connection ended — and returns why; nil on timeout. For callers that
    /// have nothing left to send (a looping stream plays until this returns).
    public func waitUntilStopped(timeoutSeconds: Double?) -> ClientError? {
        let session = connection.session
        let token = session.nextToken()
        let stopped = OneShot<ClientError>()
        session.whenStreamStops(streamID: id, token: token) { stopped.fulfill($0) }
        defer { session.cancelStopWaiter(streamID: id, token: token) }
        return stopped.wait(timeoutSeconds: timeoutSeconds)
    }

    /// The drain request. For a looping stream it also ends writing on the client side: the
    /// server drops data sent after the first drain and grants no more credit.
    func drainOperation() -> ClientOperation<Void> {
        if options.loop {
            connection.session.stopAcceptingData(streamID: id, reason: .invalidArgument(
                "stream \(id) loops and takes no more data after its first drain"))
        }
        return .expectingOK(.streamDrain(StreamReference(streamID: id)))
    }

    /// The close request, or nil when the stream is already closed. Blocked writers wake with
    /// `streamClosed` and later events for the stream are ignored (SPEC.md 6.3).
    func closeOperation() -> ClientOperation<Void>? {
        let wasClosed = counters.withLock { counters in
            defer { counters.isClosed = true }
            return counters.isClosed
        }
        guard !wasClosed else { return nil }
        connection.session.forgetStream(id)
        return .expectingOK(.streamClose(StreamReference(streamID: id)))
    }
}
