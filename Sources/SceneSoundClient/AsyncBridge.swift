import SceneSoundPlatform
import Synchronization

/// Runs a callback-based operation as `async`: its completion (on the reader thread) resumes
/// the continuation; cancelling the task withdraws the operation (`ClientError.cancelled`).
func awaitOperation<Value: Sendable>(
    _ operation: String,
    start: @Sendable (@escaping OperationCompletion<Value>) -> OperationCanceller
) async throws(ClientError) -> Value {
    let cancellation = CancellationSlot()
    let result: Result<Value, ClientError> = await withTaskCancellationHandler {
        await withCheckedContinuation { continuation in
            cancellation.install(start { continuation.resume(returning: $0) })
        }
    } onCancel: {
        cancellation.cancel(.cancelled(operation: operation))
    }
    return try result.get()
}

/// Holds an operation's canceller, which may arrive after cancellation was requested.
private final class CancellationSlot: Sendable {
    private enum State {
        case waiting
        case installed(OperationCanceller)
        case cancelled(ClientError)
    }
    private let state = Mutex(State.waiting)

    func install(_ canceller: @escaping OperationCanceller) {
        let cancelledWith: ClientError? = state.withLock { state in
            if case .cancelled(let error) = state { return error }
            state = .installed(canceller)
            return nil
        }
        if let cancelledWith { canceller(cancelledWith) }
    }

    func cancel(_ error: ClientError) {
        let canceller: OperationCanceller? = state.withLock { state in
            if case .installed(let canceller) = state { return canceller }
            state = .cancelled(error)
            return nil
        }
        canceller?(error)
    }
}

/// Runs blocking work (connecting: `connect(2)` and the handshake) on a thread of its own, so
/// that it never blocks a thread of Swift's cooperative pool.
func runOnOwnThread<Value: Sendable>(_ work: @escaping @Sendable () -> Result<Value, ClientError>) async throws(ClientError) -> Value {
    let result: Result<Value, ClientError> = await withCheckedContinuation { continuation in
        do throws(ClientError) {
            _ = try startClientThread(detached: true) { continuation.resume(returning: work()) }
        } catch {
            continuation.resume(returning: .failure(error))
        }
    }
    return try result.get()
}

/// A thread of the client's own (the connection's reader, a connect that must not block the
/// cooperative pool); failing to start one is reported as the connection failing.
func startClientThread(detached: Bool = false, _ body: @escaping @Sendable () -> Void) throws(ClientError) -> PlatformThread {
    do {
        return try PlatformThread(detached: detached, body)
    } catch {
        throw .disconnected(reason: error.description)
    }
}
