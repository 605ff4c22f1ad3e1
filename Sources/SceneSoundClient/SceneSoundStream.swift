import SceneSoundProtocol

/// An open stream (async API): the same stream as `ClientStream`, with writes that suspend
/// on credit instead of blocking a thread. Let one write finish before starting the next.
public final class SceneSoundStream: Sendable {
    /// The blocking stream underneath (shares the id, credit and state).
    public let stream: ClientStream

    init(_ stream: ClientStream) { self.stream = stream }

    public var id: UInt32 { stream.id }
    public var format: AudioFormat { stream.format }

    /// Sends `pcm` (whole audio frames), suspending whenever the credit is used up.
    public func write(_ pcm: [UInt8]) async throws(ClientError) {
        try stream.checkWholeFrames(pcm.count)
        var offset = 0
        while offset < pcm.count {
            let maxBytes = min(pcm.count - offset, stream.maxPCMBytesPerFrame)
            let stream = self.stream
            let granted = try await awaitOperation("writing to stream \(id)") {
                stream.reserveCredit(maxBytes: maxBytes, completion: $0)
            }
            let chunk = offset..<offset + granted
            try pcm.withUnsafeBytes { bytes in
                Result { () throws(ClientError) in try stream.send(UnsafeRawBufferPointer(rebasing: bytes[chunk])) }
            }.get()
            offset += granted
        }
    }

    /// Suspends until everything sent so far has been rendered to the output.
    public func drain() async throws(ClientError) {
        try await perform(stream.drainOperation())
    }

    /// Stops the stream at once and frees its id; a lost connection counts as closed.
    public func close() async throws(ClientError) {
        guard let operation = stream.closeOperation() else { return }
        do { try await perform(operation) } catch .disconnected { return }
    }

    public func setVolume(decibels: Float) async throws(ClientError) {
        try await perform(.expectingOK(.streamSetVolume(StreamSetVolume(streamID: id, volumeDecibels: decibels))))
    }

    public func setScene(_ sceneID: String) async throws(ClientError) {
        try await perform(.expectingOK(.streamSetScene(StreamSetScene(streamID: id, sceneID: sceneID))))
    }

    private func perform(_ operation: ClientOperation<Void>) async throws(ClientError) {
        let connection = stream.connection
        try await awaitOperation(operation.name) { connection.perform(operation, completion: $0) }
    }
}
