import Glibc
import SceneSoundClient

// Connecting, disconnecting, and what the server says about itself.

@_cdecl("scenesound_connect")
public func scenesound_connect(_ socketPath: UnsafePointer<CChar>?, _ clientName: UnsafePointer<CChar>?,
                               _ outClient: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    outClient?.pointee = nil
    return apiCall { () throws(CFailure) in
        guard let outClient else { throw .invalid("out_client is NULL") }
        let explicit = try CArguments.string(socketPath, "socket_path", nullValue: "")
        let name = try CArguments.string(clientName, "client_name", nullValue: "")
        guard name.utf8.count <= 255 else { throw .invalid("client_name is longer than 255 bytes") }
        do throws(ClientError) {
            let path = try SocketPath.resolve(explicit: explicit, environment: socketEnvironment())
            let connection = try ClientConnection(socketPath: path, clientName: name)
            outClient.pointee = Handles.add(client: connection)
        } catch {
            throw CFailure(error)
        }
    }
}

/// Only the two variables the default socket lookup reads (SPEC.md section 1).
private func socketEnvironment() -> [String: String] {
    var environment: [String: String] = [:]
    for name in [SocketPath.environmentVariable, "XDG_RUNTIME_DIR"] {
        if let value = getenv(name), let text = String(validatingCString: value) { environment[name] = text }
    }
    return environment
}

@_cdecl("scenesound_disconnect")
public func scenesound_disconnect(_ client: OpaquePointer?) {
    guard let (connection, streams) = Handles.removeClient(client) else { return }
    // Closing the connection first wakes every blocked write and drain at once (the server
    // releases the streams itself), so a hung server cannot hold up the render threads' joins.
    for entry in streams { entry.renderer?.requestStop() }
    connection.close()
    for entry in streams { entry.renderer?.join() }
}

@_cdecl("scenesound_server_sample_rate")
public func scenesound_server_sample_rate(_ client: OpaquePointer?, _ outRateHz: UnsafeMutablePointer<UInt32>?) -> Int32 {
    apiCall { () throws(CFailure) in
        let connection = try Handles.client(client).connection
        guard let outRateHz else { throw .invalid("out_rate_hz is NULL") }
        outRateHz.pointee = connection.server.sampleRateHz
    }
}

@_cdecl("scenesound_status_json")
public func scenesound_status_json(_ client: OpaquePointer?, _ outJSON: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    outJSON?.pointee = nil
    return apiCall { () throws(CFailure) in
        let connection = try Handles.client(client).connection
        guard let outJSON else { throw .invalid("out_json is NULL") }
        let json = try clientCall { () throws(ClientError) in try connection.status() }
        guard let copy = strdup(json) else { throw CFailure(StatusCode.noResources, "out of memory") }
        outJSON.pointee = copy
    }
}

/// Runs a client-module call, translating its error.
func clientCall<Value>(_ body: () throws(ClientError) -> Value) throws(CFailure) -> Value {
    do throws(ClientError) { return try body() } catch { throw CFailure(error) }
}
