import Glibc

/// The calling thread's last failure message (`scenesound_last_error_message`), in a pthread
/// key so that threads never see each other's messages. Each value is a malloc'd C string,
/// freed when replaced or when its thread ends.
enum LastError {
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { free($0) }
        return key
    }()

    static func set(_ message: String) {
        let previous = pthread_getspecific(key)
        pthread_setspecific(key, strdup(message))  // strdup of "" is fine; nil only when out of memory
        free(previous)
    }

    /// Nil until this thread's first call; "" after a success.
    static var current: UnsafePointer<CChar>? {
        pthread_getspecific(key).map { UnsafePointer($0.assumingMemoryBound(to: CChar.self)) }
    }
}

/// Runs one API call: records its failure (or clears the message) and turns it into a status.
func apiCall(_ body: () throws(CFailure) -> Void) -> Int32 {
    do {
        try body()
        LastError.set("")
        return StatusCode.ok
    } catch {
        LastError.set(error.message)
        return error.code
    }
}
