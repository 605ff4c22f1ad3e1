import SceneSoundProtocol
import Testing

/// A golden frame: one well-formed message with the request id it travels with.
struct ValidVector: Sendable, CustomTestStringConvertible {
    let file: String
    let requestID: UInt32
    let message: Message
    /// The protocol version the vector is decoded in.
    var version: UInt16 = 1

    var frameBytes: [UInt8] { FrameEncoder.frame(message, requestID: requestID) }
    var testDescription: String { file }
}

let stereoS16At48k = AudioFormat(sampleFormat: .s16le, rateHz: 48_000, channels: 2)
let editorWindowScene = "x11:0x3a00007"

/// One vector per message type, plus variants for optional and edge-case fields. Values are
/// exactly representable in Float32 so that the manifest's decimals are exact.
let validVectors: [ValidVector] = [
    ValidVector(file: "hello.bin", requestID: 1, message: .hello(Hello(
        minimumVersion: 1, maximumVersion: 1, clientPID: 4242, clientName: "scenesound-cli"))),
    ValidVector(file: "welcome.bin", requestID: 1, message: .welcome(Welcome(
        version: 1, sampleRateHz: 48_000, blockFrames: 256, maxFrameBytes: 262_144, maxStreams: 64,
        maxSampleBytes: 11_520_000, serverName: "scenesoundd 0.1"))),
    ValidVector(file: "ok.bin", requestID: 7, message: .ok),
    ValidVector(file: "error.bin", requestID: 8, message: .error(ErrorReply(
        code: .unknownStream, message: "stream 9 is not open"))),
    ValidVector(file: "error-connection.bin", requestID: 0, message: .error(ErrorReply(
        code: .creditExceeded, message: "stream 1: 4 bytes beyond credit; closing"))),
    ValidVector(file: "scene-bind-window.bin", requestID: 2, message: .sceneBindWindow(SceneBindWindow(
        sceneID: "editor-main", windowID: 0x3a00007))),
    ValidVector(file: "scene-place.bin", requestID: 3, message: .scenePlace(ScenePlace(
        sceneID: "chat", position: ScenePosition(azimuthDegrees: 30, elevationDegrees: -7.5, distanceMetres: 1.5)))),
    ValidVector(file: "scene-unbind.bin", requestID: 4, message: .sceneUnbind(SceneUnbind(sceneID: "Küche ♪"))),
    ValidVector(file: "scene-list.bin", requestID: 5, message: .sceneList),
    ValidVector(file: "scene-list-reply.bin", requestID: 5, message: .sceneListReply(SceneListReply(entries: [
        SceneListEntry(sceneID: editorWindowScene, anchor: .window, windowID: 0x3a00007,
                       position: ScenePosition(azimuthDegrees: -12.5, elevationDegrees: 2.25, distanceMetres: 0.75)),
        SceneListEntry(sceneID: "chat", anchor: .position, windowID: 0,
                       position: ScenePosition(azimuthDegrees: 30, elevationDegrees: -7.5, distanceMetres: 1.5)),
        SceneListEntry(sceneID: "forgotten", anchor: .none, windowID: 0,
                       position: ScenePosition(azimuthDegrees: 0, elevationDegrees: 0, distanceMetres: 0.625)),
    ]))),
    ValidVector(file: "scene-list-reply-empty.bin", requestID: 6, message: .sceneListReply(SceneListReply(entries: []))),
    ValidVector(file: "stream-open.bin", requestID: 10, message: .streamOpen(StreamOpen(
        kind: .playback, format: stereoS16At48k, spatialMode: .anchored, loop: false,
        volumeDecibels: -6, sceneID: editorWindowScene))),
    ValidVector(file: "stream-open-loop.bin", requestID: 11, message: .streamOpen(StreamOpen(
        kind: .playback, format: AudioFormat(sampleFormat: .f32le, rateHz: 44_100, channels: 1),
        spatialMode: .headLocked, loop: true, volumeDecibels: 0, sceneID: ""))),
    ValidVector(file: "stream-open-alert.bin", requestID: 12, message: .streamOpen(StreamOpen(
        kind: .alert, format: AudioFormat(sampleFormat: .s32le, rateHz: 192_000, channels: 2),
        spatialMode: .off, loop: false, volumeDecibels: 3.5, sceneID: "mail"))),
    // Version 2: the channel map (empty: the standard layout for the count).
    ValidVector(file: "stream-open-v2-stereo.bin", requestID: 30, message: .streamOpen(StreamOpen(
        kind: .playback, format: stereoS16At48k, sceneID: "", channelMap: [])), version: 2),
    ValidVector(file: "stream-open-v2-surround.bin", requestID: 31, message: .streamOpen(StreamOpen(
        kind: .playback, format: AudioFormat(sampleFormat: .f32le, rateHz: 48_000, channels: 6),
        spatialMode: .anchored, loop: false, volumeDecibels: 0, sceneID: "x11:0x3a00007",
        channelMap: [.frontLeft, .frontRight, .frontCenter, .lowFrequency, .sideLeft, .sideRight])), version: 2),
    ValidVector(file: "stream-opened.bin", requestID: 10, message: .streamOpened(StreamOpened(
        streamID: 1, creditBytes: 19_200))),
    ValidVector(file: "stream-data.bin", requestID: 0, message: .streamData(StreamData(
        streamID: 1, pcm: [0x00, 0x00, 0xff, 0x7f, 0x00, 0x80, 0x01, 0x00]))),
    ValidVector(file: "stream-drain.bin", requestID: 13, message: .streamDrain(StreamReference(streamID: 1))),
    ValidVector(file: "stream-close.bin", requestID: 14, message: .streamClose(StreamReference(streamID: 1))),
    ValidVector(file: "stream-set-volume.bin", requestID: 15, message: .streamSetVolume(StreamSetVolume(
        streamID: 1, volumeDecibels: -12.5))),
    ValidVector(file: "stream-set-scene.bin", requestID: 16, message: .streamSetScene(StreamSetScene(
        streamID: 1, sceneID: "musique-été"))),
    ValidVector(file: "sample-upload.bin", requestID: 17, message: .sampleUpload(SampleUpload(
        name: "bell", format: AudioFormat(sampleFormat: .s16le, rateHz: 48_000, channels: 1),
        totalBytes: 8, offsetBytes: 4, pcm: [0x10, 0x00, 0xf0, 0xff]))),
    ValidVector(file: "sample-play.bin", requestID: 18, message: .samplePlay(SamplePlay(
        name: "dialog-warning", kind: .alert, spatialMode: .anchored, volumeDecibels: 0, sceneID: editorWindowScene,
        demandAttention: true))),
    ValidVector(file: "sample-playing.bin", requestID: 18, message: .samplePlaying(SamplePlaying(playID: 5))),
    ValidVector(file: "head-pose.bin", requestID: 0, message: .headPose(HeadPose(
        timestampNanoseconds: 1_000_000_000, orientation: .identity, position: nil))),
    ValidVector(file: "head-pose-position.bin", requestID: 0, message: .headPose(HeadPose(
        timestampNanoseconds: 123_456_789_012_345, orientation: Quaternion(w: 0.5, x: 0.5, y: 0.5, z: 0.5),
        position: PositionMetres(x: 0.25, y: -0.125, z: 0.5)))),
    ValidVector(file: "head-recenter.bin", requestID: 19, message: .headRecenter),
    ValidVector(file: "head-tracking-set.bin", requestID: 24, message: .headTrackingSet(HeadTrackingSet(
        mode: .yawOnly, recenterAfterSeconds: 30))),
    ValidVector(file: "head-tracker-use.bin", requestID: 25, message: .headTrackerUse(HeadTrackerUse(
        tracker: .opentrack, posesPerSecond: 60))),
    ValidVector(file: "status-request.bin", requestID: 20, message: .statusRequest),
    ValidVector(file: "status-reply.bin", requestID: 20, message: .statusReply(StatusReply(
        json: #"{"server":"scenesoundd","hrtf":"Café KEMAR","streams":[]}"#))),
    ValidVector(file: "headphone-eq-use.bin", requestID: 21, message: .headphoneEQUse(HeadphoneEQUse(
        path: "/home/ana/.config/scenesound/HD 600 ParametricEQ.txt"))),
    ValidVector(file: "headphone-eq-use-none.bin", requestID: 22, message: .headphoneEQUse(HeadphoneEQUse(path: ""))),
    ValidVector(file: "hrtf-use.bin", requestID: 23, message: .hrtfUse(HRTFUse(
        path: "/home/ana/.local/share/scenesound/hrtf/FABIAN.sofa"))),
    ValidVector(file: "spatial-use.bin", requestID: 24, message: .spatialUse(SpatialUse(spatial: .fixed))),
    ValidVector(file: "output-device-watch.bin", requestID: 26, message: .outputDeviceWatch),
    ValidVector(file: "render-use.bin", requestID: 27, message: .renderUse(RenderUse(render: .speakers))),
    ValidVector(file: "output-device-changed.bin", requestID: 0, message: .outputDeviceChanged(OutputDeviceChanged(
        json: #"{"output_device":{"channels":["front-left","front-right"],"form_factor":"headphone","key":"hp","sink":"hp"},"rendering":{"channels":2,"method":"binaural","preference":"auto","reason":"form factor headphone","spatial":"head-tracked"}}"#))),
    ValidVector(file: "credit-granted.bin", requestID: 0, message: .creditGranted(CreditGranted(streamID: 1, bytes: 9_600))),
    ValidVector(file: "stream-ended.bin", requestID: 0, message: .streamEnded(StreamEnded(streamID: 1, reason: .drained))),
    ValidVector(file: "stream-error.bin", requestID: 0, message: .streamError(StreamError(
        streamID: 1, code: .badFormat, message: "7 bytes of data is not whole 4-byte frames"))),
    ValidVector(file: "playback-ended.bin", requestID: 0, message: .playbackEnded(PlaybackEnded(playID: 5, reason: .completed))),
]
