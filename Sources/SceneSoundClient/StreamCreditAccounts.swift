import SceneSoundProtocol

/// Per-stream credit (SPEC.md section 8) and the writers waiting for it. Not thread-safe by
/// itself: `SessionState` keeps it under its lock and runs the returned callbacks after
/// unlocking.
struct StreamCreditAccounts {
    typealias CreditCompletion = @Sendable (Result<Int, ClientError>) -> Void
    typealias StopCompletion = @Sendable (ClientError) -> Void

    private struct CreditWaiter {
        let token: UInt64
        let maxBytes: Int
        let completion: CreditCompletion
    }

    private struct Account {
        let bytesPerFrame: Int
        var creditBytes: Int
        /// FIFO, so that concurrent writers are served in the order they asked.
        var creditWaiters: [CreditWaiter] = []
        /// Set once the stream can no longer take data (defunct or closed).
        var stopReason: ClientError?
        /// Set when the stream still plays but takes no more data (a loop after its drain).
        var dataRefusal: ClientError?
        var stopWaiters: [UInt64: StopCompletion] = [:]
    }

    private var accounts: [UInt32: Account] = [:]

    mutating func open(streamID: UInt32, bytesPerFrame: Int, initialCreditBytes: Int) {
        accounts[streamID] = Account(bytesPerFrame: bytesPerFrame, creditBytes: initialCreditBytes)
    }

    func isOpen(_ streamID: UInt32) -> Bool { accounts[streamID] != nil }

    func creditBytes(of streamID: UInt32) -> Int { accounts[streamID]?.creditBytes ?? 0 }

    /// Takes up to `maxBytes` of credit (whole audio frames) now, or queues the request until a
    /// grant covers at least one frame. Returns the callback to run after unlocking, if any.
    mutating func reserve(streamID: UInt32, maxBytes: Int, token: UInt64,
                          completion: @escaping CreditCompletion) -> (() -> Void)? {
        guard var account = accounts[streamID] else {
            return { completion(.failure(.streamClosed(streamID: streamID))) }
        }
        if let refusal = account.stopReason ?? account.dataRefusal {
            return { completion(.failure(refusal)) }
        }
        defer { accounts[streamID] = account }
        if account.creditWaiters.isEmpty, let granted = Self.take(maxBytes, from: &account) {
            return { completion(.success(granted)) }
        }
        account.creditWaiters.append(CreditWaiter(token: token, maxBytes: maxBytes, completion: completion))
        return nil
    }

    /// Withdraws a queued reservation; false when it was already granted or failed.
    mutating func cancelReservation(streamID: UInt32, token: UInt64) -> Bool {
        guard let index = accounts[streamID]?.creditWaiters.firstIndex(where: { $0.token == token }) else { return false }
        accounts[streamID]!.creditWaiters.remove(at: index)
        return true
    }

    /// `CREDIT_GRANTED`: adds the credit and serves the waiting writers in order.
    mutating func grant(streamID: UInt32, bytes: Int) -> [() -> Void] {
        guard var account = accounts[streamID], account.stopReason == nil else { return [] }  // closed: ignored (section 8.6)
        account.creditBytes += bytes
        var callbacks: [() -> Void] = []
        while let waiter = account.creditWaiters.first, let granted = Self.take(waiter.maxBytes, from: &account) {
            account.creditWaiters.removeFirst()
            callbacks.append { waiter.completion(.success(granted)) }
        }
        accounts[streamID] = account
        return callbacks
    }

    /// The stream can take no more data: fails its waiters now and any later reservation.
    /// Keeps the account (so that `close` still knows the stream) unless `forget` is set.
    mutating func stop(streamID: UInt32, reason: ClientError, forget: Bool = false) -> [() -> Void] {
        guard var account = accounts[streamID] else { return [] }
        var callbacks: [() -> Void] = []
        if account.stopReason == nil {
            account.stopReason = reason
            callbacks += account.creditWaiters.map { waiter in { waiter.completion(.failure(reason)) } }
            callbacks += account.stopWaiters.values.map { waiter in { waiter(reason) } }
            account.creditWaiters = []
            account.stopWaiters = [:]
        }
        accounts[streamID] = forget ? nil : account
        return callbacks
    }

    /// The stream plays on but takes no more data: writers waiting for credit fail now.
    mutating func refuseData(streamID: UInt32, reason: ClientError) -> [() -> Void] {
        guard var account = accounts[streamID], account.dataRefusal == nil else { return [] }
        account.dataRefusal = reason
        let waiters = account.creditWaiters
        account.creditWaiters = []
        accounts[streamID] = account
        return waiters.map { waiter in { waiter.completion(.failure(reason)) } }
    }

    /// Every stream stops (the connection ended).
    mutating func stopAll(reason: ClientError) -> [() -> Void] {
        accounts.keys.flatMap { stop(streamID: $0, reason: reason) }
    }

    /// Calls `completion` once the stream stops (at once if it already has).
    mutating func whenStopped(streamID: UInt32, token: UInt64, completion: @escaping StopCompletion) -> (() -> Void)? {
        guard accounts[streamID] != nil else { return { completion(.streamClosed(streamID: streamID)) } }
        if let reason = accounts[streamID]!.stopReason { return { completion(reason) } }
        accounts[streamID]!.stopWaiters[token] = completion
        return nil
    }

    mutating func cancelStopWaiter(streamID: UInt32, token: UInt64) {
        accounts[streamID]?.stopWaiters[token] = nil
    }

    /// Takes the largest whole number of frames up to `maxBytes` that the credit covers.
    private static func take(_ maxBytes: Int, from account: inout Account) -> Int? {
        let available = min(maxBytes, account.creditBytes)
        let granted = available - available % account.bytesPerFrame
        guard granted > 0 else { return nil }
        account.creditBytes -= granted
        return granted
    }
}
