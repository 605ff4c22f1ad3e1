import SceneSoundClient
import SceneSoundProtocol

// System and alert sounds: samples in the server's cache, uploaded as raw PCM and played by
// name. No decoding here: the library links no audio-file library (see scenesound.h).

@_cdecl("scenesound_sample_upload")
public func scenesound_sample_upload(_ client: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ format: Int32,
                                     _ rateHz: UInt32, _ channels: Int32,
                                     _ pcm: UnsafeRawPointer?, _ pcmBytes: Int) -> Int32 {
    apiCall { () throws(CFailure) in
        let connection = try Handles.client(client).connection
        let sampleName = try sampleName(name)
        let audioFormat = try CArguments.audioFormat(format, rateHz, channels)
        guard let pcm, pcmBytes > 0 else { throw .invalid("a sample needs PCM (pcm is NULL or pcm_bytes is 0)") }
        guard pcmBytes % audioFormat.bytesPerFrame == 0 else {
            throw CFailure(StatusCode.badFormat, "\(pcmBytes) bytes are not whole frames of \(audioFormat.bytesPerFrame) bytes")
        }
        let bytes = [UInt8](UnsafeRawBufferPointer(start: pcm, count: pcmBytes))
        try clientCall { () throws(ClientError) in try connection.uploadSample(name: sampleName, format: audioFormat, pcm: bytes) }
    }
}

@_cdecl("scenesound_play_sample")
public func scenesound_play_sample(_ client: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ kind: Int32,
                                   _ spatialMode: Int32, _ volumeDecibels: Float, _ sceneID: UnsafePointer<CChar>?,
                                   _ outPlayID: UnsafeMutablePointer<UInt32>?) -> Int32 {
    scenesound_play_sample_with_flags(client, name, kind, spatialMode, volumeDecibels, sceneID, 0, outPlayID)
}

/// `SCENESOUND_PLAY_DEMAND_ATTENTION`.
private let demandAttentionFlag: UInt32 = 1

@_cdecl("scenesound_play_sample_with_flags")
public func scenesound_play_sample_with_flags(_ client: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ kind: Int32,
                                              _ spatialMode: Int32, _ volumeDecibels: Float,
                                              _ sceneID: UnsafePointer<CChar>?, _ flags: UInt32,
                                              _ outPlayID: UnsafeMutablePointer<UInt32>?) -> Int32 {
    outPlayID?.pointee = 0
    return apiCall { () throws(CFailure) in
        let connection = try Handles.client(client).connection
        guard flags & ~demandAttentionFlag == 0 else {
            throw .invalid("unknown play flags 0x\(String(flags, radix: 16)) (accepted: 0, SCENESOUND_PLAY_DEMAND_ATTENTION)")
        }
        let play = SamplePlay(name: try sampleName(name), kind: try CArguments.kind(kind),
                              spatialMode: try CArguments.spatialMode(spatialMode),
                              volumeDecibels: try CArguments.volume(volumeDecibels), sceneID: try CArguments.sceneID(sceneID),
                              demandAttention: flags & demandAttentionFlag != 0)
        guard play.kind != .playback else { throw .invalid("samples play as SCENESOUND_KIND_SYSTEM or _ALERT") }
        guard !play.demandAttention || play.kind == .alert else {
            throw .invalid("SCENESOUND_PLAY_DEMAND_ATTENTION is for alerts (kind SCENESOUND_KIND_ALERT)")
        }
        let playID = try clientCall { () throws(ClientError) in try connection.playSample(play) }
        outPlayID?.pointee = playID
    }
}

@_cdecl("scenesound_play_system_sound")
public func scenesound_play_system_sound(_ client: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ sceneID: UnsafePointer<CChar>?,
                                         _ volumeDecibels: Float, _ outPlayID: UnsafeMutablePointer<UInt32>?) -> Int32 {
    scenesound_play_sample(client, name, Int32(StreamKind.system.rawValue), Int32(SpatialMode.anchored.rawValue),
                           volumeDecibels, sceneID, outPlayID)
}

@_cdecl("scenesound_play_alert_sound")
public func scenesound_play_alert_sound(_ client: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ sceneID: UnsafePointer<CChar>?,
                                        _ volumeDecibels: Float, _ outPlayID: UnsafeMutablePointer<UInt32>?) -> Int32 {
    scenesound_play_sample(client, name, Int32(StreamKind.alert.rawValue), Int32(SpatialMode.anchored.rawValue),
                           volumeDecibels, sceneID, outPlayID)
}

@_cdecl("scenesound_playback_wait")
public func scenesound_playback_wait(_ client: OpaquePointer?, _ playID: UInt32, _ timeoutMilliseconds: Int32,
                                     _ outReason: UnsafeMutablePointer<Int32>?) -> Int32 {
    apiCall { () throws(CFailure) in
        let connection = try Handles.client(client).connection
        guard playID != 0 else { throw .invalid("play_id is 0") }
        let reason = try clientCall { () throws(ClientError) in
            try connection.waitForPlaybackEnd(playID: playID, timeoutSeconds: CArguments.timeout(milliseconds: timeoutMilliseconds))
        }
        outReason?.pointee = Int32(reason.rawValue)
    }
}

private func sampleName(_ name: UnsafePointer<CChar>?) throws(CFailure) -> String {
    let text = try CArguments.string(name, "name")
    guard (1...255).contains(text.utf8.count) else { throw .invalid("a sample name has 1 to 255 bytes") }
    return text
}
