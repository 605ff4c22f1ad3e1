import SceneSoundPlatform
/// Withdraws an operation that is still waiting: it completes with the given error instead,
/// unless its result has already arrived (then nothing happens). Safe to call more than once.
public typealias OperationCanceller = @Sendable (ClientError) -> Void

/// The result callback of every callback-based operation. Runs on the reader thread, or on the
/// calling thread when the operation fails before anything was sent.
public typealias OperationCompletion<Value> = @Sendable (Result<Value, ClientError>) -> Void

/// Turns a callback-based operation into a blocking call with a timeout. On timeout the
/// operation is withdrawn; if its result raced the timeout, the result wins.
func waitBlocking<Value: Sendable>(
    _ operation: String, timeoutSeconds: Double?,
    start: (@escaping OperationCompletion<Value>) -> OperationCanceller
) throws(ClientError) -> Value {
    let outcome = OneShot<Result<Value, ClientError>>()
    let cancel = start { outcome.fulfill($0) }
    if let result = outcome.wait(timeoutSeconds: timeoutSeconds) { return try result.get() }
    cancel(.timedOut(operation: operation, seconds: timeoutSeconds ?? 0))
    return try outcome.wait(timeoutSeconds: nil)!.get()
}
