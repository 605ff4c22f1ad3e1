import SceneSoundProtocol

/// Remembers how sample plays ended, so that a caller can wait for a play whose
/// `PLAYBACK_ENDED` the reader thread may already have handled. Kept under `SessionState`'s lock.
struct PlaybackLedger {
    typealias EndCompletion = @Sendable (Result<PlaybackEndReason, ClientError>) -> Void

    /// Ends nobody asked about are kept this long (in plays), so memory stays bounded.
    static let rememberedEnds = 256

    private var endedReasons: [UInt32: PlaybackEndReason] = [:]
    private var endedOrder: [UInt32] = []
    private var waiters: [UInt32: [UInt64: EndCompletion]] = [:]

    mutating func ended(_ event: PlaybackEnded) -> [() -> Void] {
        if let waiting = waiters.removeValue(forKey: event.playID) {
            return waiting.values.map { completion in { completion(.success(event.reason)) } }
        }
        endedReasons[event.playID] = event.reason
        endedOrder.append(event.playID)
        if endedOrder.count > Self.rememberedEnds {
            endedReasons[endedOrder.removeFirst()] = nil
        }
        return []
    }

    mutating func whenEnded(playID: UInt32, token: UInt64, completion: @escaping EndCompletion) -> (() -> Void)? {
        if let reason = endedReasons.removeValue(forKey: playID) {
            endedOrder.removeAll { $0 == playID }
            return { completion(.success(reason)) }
        }
        waiters[playID, default: [:]][token] = completion
        return nil
    }

    mutating func cancelWaiter(playID: UInt32, token: UInt64) -> Bool {
        waiters[playID]?.removeValue(forKey: token) != nil
    }

    mutating func failAll(_ error: ClientError) -> [() -> Void] {
        defer { waiters = [:] }
        return waiters.values.flatMap { $0.values }.map { completion in { completion(.failure(error)) } }
    }
}
