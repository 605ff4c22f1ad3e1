import SceneSoundClient
import SceneSoundProtocol

/// `scenesound_render_callback`: (user_data, buffer, frames) -> frames written (size_t as Int).
public typealias RenderFunction = @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, Int) -> Int

/// The C render callback and its user data, carried to the render thread. The user data is the
/// caller's pointer; the library never looks at it.
struct RenderCallback: @unchecked Sendable {
    let function: RenderFunction
    let userData: UnsafeMutableRawPointer?
}

// Pull-mode streams: the library's render thread (the client's PullRenderer) calls the caller's
// render callback.

@_cdecl("scenesound_stream_open_callback")
public func scenesound_stream_open_callback(_ client: OpaquePointer?, _ kind: Int32, _ format: Int32, _ rateHz: UInt32,
                                            _ channels: Int32, _ sceneID: UnsafePointer<CChar>?, _ spatialMode: Int32,
                                            _ volumeDecibels: Float, _ periodFrames: UInt32,
                                            _ render: RenderFunction?, _ userData: UnsafeMutableRawPointer?,
                                            _ outStream: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    scenesound_stream_open_callback_with_channel_map(client, kind, format, rateHz, channels, nil, sceneID, spatialMode,
                                                     volumeDecibels, periodFrames, render, userData, outStream)
}

@_cdecl("scenesound_stream_open_callback_with_channel_map")
public func scenesound_stream_open_callback_with_channel_map(
    _ client: OpaquePointer?, _ kind: Int32, _ format: Int32, _ rateHz: UInt32, _ channels: Int32,
    _ channelMap: UnsafePointer<Int32>?, _ sceneID: UnsafePointer<CChar>?, _ spatialMode: Int32,
    _ volumeDecibels: Float, _ periodFrames: UInt32, _ render: RenderFunction?, _ userData: UnsafeMutableRawPointer?,
    _ outStream: UnsafeMutablePointer<OpaquePointer?>?
) -> Int32 {
    outStream?.pointee = nil
    return apiCall { () throws(CFailure) in
        let (clientID, connection) = try Handles.client(client)
        guard let outStream else { throw .invalid("out_stream is NULL") }
        guard let render else { throw .invalid("render is NULL") }
        var options = try streamOptions(kind, format, rateHz, channels, sceneID, spatialMode, volumeDecibels, loop: false)
        options.channelMap = try CArguments.channelMap(channelMap, channels: channels)
        // 10 ms by default; at most one second, so that one period never exceeds the server's buffer by much.
        let period = periodFrames == 0 ? Int(rateHz / 100) : Int(periodFrames)
        guard period <= Int(rateHz) else { throw .invalid("period_frames \(periodFrames) is longer than one second") }
        let stream = try clientCall { () throws(ClientError) in try connection.openStream(options) }
        let callback = RenderCallback(function: render, userData: userData)
        let renderer: PullRenderer
        do {
            renderer = try PullRenderer(stream: stream, periodFrames: period) { buffer, frames in
                // size_t comes back as Int: a "negative" (huge) count ends the stream.
                callback.function(callback.userData, buffer, frames)
            }
        } catch {
            try? stream.close()
            throw CFailure(StatusCode.noResources, "cannot start the render thread (\(error))")
        }
        outStream.pointee = try register(StreamEntry(clientID: clientID, stream: stream, renderer: renderer))
    }
}
