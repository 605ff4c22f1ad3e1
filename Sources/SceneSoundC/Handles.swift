import SceneSoundClient
import Synchronization

/// An open stream as the C API knows it: its client (for `scenesound_disconnect`) and, for a
/// callback stream, the renderer that feeds it.
final class StreamEntry: Sendable {
    let clientID: UInt
    let stream: ClientStream
    let renderer: PullRenderer?

    init(clientID: UInt, stream: ClientStream, renderer: PullRenderer?) {
        self.clientID = clientID
        self.stream = stream
        self.renderer = renderer
    }
}

/// The handle table. A C handle is a table key disguised as a pointer and never dereferenced,
/// so a stale, closed or foreign handle is an error code rather than a use-after-free. Keys are
/// never reused within a process.
enum Handles {
    private struct Table {
        var nextID: UInt = 1
        var clients: [UInt: ClientConnection] = [:]
        var streams: [UInt: StreamEntry] = [:]

        mutating func newID() -> UInt {
            defer { nextID += 1 }
            return nextID
        }
    }

    private static let table = Mutex(Table())

    static func key(_ handle: OpaquePointer?) throws(CFailure) -> UInt {
        guard let handle else { throw .invalid("the handle is NULL") }
        return UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(handle)))
    }

    private static func handle(_ key: UInt) -> OpaquePointer {
        OpaquePointer(bitPattern: key)!  // keys start at 1, never nil
    }

    private static var closedHandle: CFailure {
        CFailure(StatusCode.closed, "the handle is closed, disconnected, or was never returned by libscenesound")
    }

    static func add(client: ClientConnection) -> OpaquePointer {
        handle(table.withLock { table in
            let id = table.newID()
            table.clients[id] = client
            return id
        })
    }

    static func client(_ handle: OpaquePointer?) throws(CFailure) -> (id: UInt, connection: ClientConnection) {
        let id = try key(handle)
        guard let connection = table.withLock({ $0.clients[id] }) else { throw closedHandle }
        return (id, connection)
    }

    /// Registers a stream of a client that is still in the table; nil when the client was
    /// disconnected meanwhile (the caller then closes the stream).
    static func add(stream: StreamEntry) -> OpaquePointer? {
        table.withLock { table -> UInt? in
            guard table.clients[stream.clientID] != nil else { return nil }
            let id = table.newID()
            table.streams[id] = stream
            return id
        }.map(handle)
    }

    static func stream(_ handle: OpaquePointer?) throws(CFailure) -> StreamEntry {
        let id = try key(handle)
        guard let entry = table.withLock({ $0.streams[id] }) else { throw closedHandle }
        return entry
    }

    /// Takes a stream out of the table: the first `scenesound_stream_close` wins.
    static func removeStream(_ handle: OpaquePointer?) throws(CFailure) -> StreamEntry {
        let id = try key(handle)
        guard let entry = table.withLock({ $0.streams.removeValue(forKey: id) }) else { throw closedHandle }
        return entry
    }

    /// Takes a client and all its streams out of the table.
    static func removeClient(_ handle: OpaquePointer?) -> (ClientConnection, [StreamEntry])? {
        guard let id = try? key(handle) else { return nil }
        return table.withLock { table in
            guard let connection = table.clients.removeValue(forKey: id) else { return nil }
            let streamIDs = table.streams.filter { $0.value.clientID == id }.map(\.key)
            return (connection, streamIDs.compactMap { table.streams.removeValue(forKey: $0) })
        }
    }
}
