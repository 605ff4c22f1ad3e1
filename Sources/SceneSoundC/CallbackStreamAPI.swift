import SceneSoundClient
import SceneSoundProtocol

// Pull-mode streams: the library's render thread calls the caller's render callback.

@_cdecl("scenesound_stream_open_callback")
public func scenesound_stream_open_callback(_ client: OpaquePointer?, _ kind: Int32, _ format: Int32, _ rateHz: UInt32,
                                            _ channels: Int32, _ sceneID: UnsafePointer<CChar>?, _ spatialMode: Int32,
                                            _ volumeDecibels: Float, _ periodFrames: UInt32,
                                            _ render: RenderFunction?, _ userData: UnsafeMutableRawPointer?,
                                            _ outStream: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    outStream?.pointee = nil
    return apiCall { () throws(CFailure) in
        let (clientID, connection) = try Handles.client(client)
        guard let outStream else { throw .invalid("out_stream is NULL") }
        guard let render else { throw .invalid("render is NULL") }
        let options = try streamOptions(kind, format, rateHz, channels, sceneID, spatialMode, volumeDecibels, loop: false)
        // 10 ms by default; at most one second, so that one period never exceeds the server's buffer by much.
        let period = periodFrames == 0 ? Int(rateHz / 100) : Int(periodFrames)
        guard period <= Int(rateHz) else { throw .invalid("period_frames \(periodFrames) is longer than one second") }
        let stream = try clientCall { () throws(ClientError) in try connection.openStream(options) }
        let renderer: PullRenderer
        do throws(CFailure) {
            renderer = try PullRenderer(stream: stream, callback: RenderCallback(function: render, userData: userData),
                                        periodFrames: period)
        } catch {
            try? stream.close()
            throw error
        }
        outStream.pointee = try register(StreamEntry(clientID: clientID, stream: stream, renderer: renderer))
    }
}
