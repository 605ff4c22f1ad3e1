import SceneSoundClient
import SceneSoundProtocol

// Streams: open, write (blocking on credit), drain, volume, scene, close.

@_cdecl("scenesound_stream_open")
public func scenesound_stream_open(_ client: OpaquePointer?, _ kind: Int32, _ format: Int32, _ rateHz: UInt32,
                                   _ channels: Int32, _ sceneID: UnsafePointer<CChar>?, _ spatialMode: Int32,
                                   _ volumeDecibels: Float, _ flags: UInt32,
                                   _ outStream: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    scenesound_stream_open_with_channel_map(client, kind, format, rateHz, channels, nil, sceneID, spatialMode,
                                            volumeDecibels, flags, outStream)
}

@_cdecl("scenesound_stream_open_with_channel_map")
public func scenesound_stream_open_with_channel_map(
    _ client: OpaquePointer?, _ kind: Int32, _ format: Int32, _ rateHz: UInt32, _ channels: Int32,
    _ channelMap: UnsafePointer<Int32>?, _ sceneID: UnsafePointer<CChar>?, _ spatialMode: Int32,
    _ volumeDecibels: Float, _ flags: UInt32, _ outStream: UnsafeMutablePointer<OpaquePointer?>?
) -> Int32 {
    outStream?.pointee = nil
    return apiCall { () throws(CFailure) in
        let (clientID, connection) = try Handles.client(client)
        guard let outStream else { throw .invalid("out_stream is NULL") }
        guard flags & ~streamLoopFlag == 0 else { throw .invalid("unknown flags 0x\(String(flags, radix: 16))") }
        var options = try streamOptions(kind, format, rateHz, channels, sceneID, spatialMode, volumeDecibels,
                                        loop: flags & streamLoopFlag != 0)
        options.channelMap = try CArguments.channelMap(channelMap, channels: channels)
        let stream = try clientCall { () throws(ClientError) in try connection.openStream(options) }
        outStream.pointee = try register(StreamEntry(clientID: clientID, stream: stream, renderer: nil))
    }
}

/// `SCENESOUND_STREAM_LOOP`.
let streamLoopFlag: UInt32 = 1

func streamOptions(_ kind: Int32, _ format: Int32, _ rateHz: UInt32, _ channels: Int32,
                   _ sceneID: UnsafePointer<CChar>?, _ spatialMode: Int32, _ volumeDecibels: Float,
                   loop: Bool) throws(CFailure) -> StreamOpen {
    let options = StreamOpen(kind: try CArguments.kind(kind), format: try CArguments.audioFormat(format, rateHz, channels, maximumChannels: 8),
                             spatialMode: try CArguments.spatialMode(spatialMode), loop: loop,
                             volumeDecibels: try CArguments.volume(volumeDecibels), sceneID: try CArguments.sceneID(sceneID))
    guard !loop || options.kind == .playback else { throw .invalid("only playback streams may loop") }
    return options
}

/// Puts a new stream in the handle table, or closes it when its client was disconnected
/// while it was being opened.
func register(_ entry: StreamEntry) throws(CFailure) -> OpaquePointer {
    guard let handle = Handles.add(stream: entry) else {
        closeStream(entry)
        throw CFailure(StatusCode.closed, "the client was disconnected while the stream was opening")
    }
    return handle
}

@_cdecl("scenesound_stream_write")
public func scenesound_stream_write(_ stream: OpaquePointer?, _ pcm: UnsafeRawPointer?, _ pcmBytes: Int) -> Int32 {
    apiCall { () throws(CFailure) in
        let entry = try Handles.stream(stream)
        guard entry.renderer == nil else {
            throw CFailure(StatusCode.notPullStream, "this stream takes its audio from its render callback")
        }
        guard pcmBytes >= 0 else { throw .invalid("pcm_bytes \(UInt(bitPattern: pcmBytes)) is too large") }
        guard pcm != nil || pcmBytes == 0 else { throw .invalid("pcm is NULL") }
        let bytesPerFrame = entry.stream.format.bytesPerFrame
        guard pcmBytes % bytesPerFrame == 0 else {
            throw CFailure(StatusCode.badFormat, "\(pcmBytes) bytes are not whole frames of \(bytesPerFrame) bytes")
        }
        guard let pcm, pcmBytes > 0 else { return }
        try clientCall { () throws(ClientError) in
            try entry.stream.write(UnsafeRawBufferPointer(start: pcm, count: pcmBytes))
        }
    }
}

@_cdecl("scenesound_stream_drain")
public func scenesound_stream_drain(_ stream: OpaquePointer?) -> Int32 {
    apiCall { () throws(CFailure) in
        let entry = try Handles.stream(stream)
        guard let renderer = entry.renderer else {
            return try clientCall { () throws(ClientError) in try entry.stream.drain() }
        }
        guard !renderer.isRenderThread else {
            throw CFailure(StatusCode.wrongThread, "a render callback cannot wait for its own stream to drain")
        }
        try renderer.finished.wait().mapError(CFailure.init).get()
    }
}

@_cdecl("scenesound_stream_set_volume")
public func scenesound_stream_set_volume(_ stream: OpaquePointer?, _ volumeDecibels: Float) -> Int32 {
    apiCall { () throws(CFailure) in
        let entry = try Handles.stream(stream)
        let volume = try CArguments.volume(volumeDecibels)
        try clientCall { () throws(ClientError) in try entry.stream.setVolume(decibels: volume) }
    }
}

@_cdecl("scenesound_stream_set_scene")
public func scenesound_stream_set_scene(_ stream: OpaquePointer?, _ sceneID: UnsafePointer<CChar>?) -> Int32 {
    apiCall { () throws(CFailure) in
        let entry = try Handles.stream(stream)
        let scene = try CArguments.sceneID(sceneID)
        try clientCall { () throws(ClientError) in try entry.stream.setScene(scene) }
    }
}

@_cdecl("scenesound_stream_close")
public func scenesound_stream_close(_ stream: OpaquePointer?) -> Int32 {
    apiCall { () throws(CFailure) in
        let entry = try Handles.removeStream(stream)
        if let failure = closeStream(entry) { throw failure }
    }
}

/// Stops a stream's renderer (if any), closes the stream and joins the render thread. A
/// connection already gone counts as closed. Returns the close request's failure, if any.
@discardableResult
func closeStream(_ entry: StreamEntry) -> CFailure? {
    entry.renderer?.requestStop()
    var failure: CFailure?
    do throws(ClientError) { try entry.stream.close() } catch { failure = CFailure(error) }
    entry.renderer?.join()
    return failure
}
