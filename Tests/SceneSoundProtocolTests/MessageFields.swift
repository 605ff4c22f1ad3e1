import SceneSoundProtocol

/// Each message's fields as the manifest lists them: SPEC.md's field names, enums by their
/// SPEC.md names, PCM as lowercase hex.
func manifestFields(_ message: Message) -> [(String, JSONText)] {
    switch message {
    case .ok, .sceneList, .headRecenter, .statusRequest, .outputDeviceWatch:
        return []
    case .hello(let m):
        return [("min_version", .uint(m.minimumVersion)), ("max_version", .uint(m.maximumVersion)),
                ("client_pid", .uint(m.clientPID)), ("client_name", .string(m.clientName))]
    case .welcome(let m):
        return [("version", .uint(m.version)), ("sample_rate_hz", .uint(m.sampleRateHz)),
                ("block_frames", .uint(m.blockFrames)), ("max_frame_bytes", .uint(m.maxFrameBytes)),
                ("max_streams", .uint(m.maxStreams)), ("max_sample_bytes", .uint(m.maxSampleBytes)),
                ("server_name", .string(m.serverName))]
    case .error(let m):
        return [("code", .uint(m.code.rawValue)), ("code_name", .string(m.code.name)), ("message", .string(m.message))]
    case .sceneBindWindow(let m):
        return [("scene_id", .string(m.sceneID)), ("window_id", .uint(m.windowID))]
    case .scenePlace(let m):
        return [("scene_id", .string(m.sceneID))] + positionFields(m.position)
    case .sceneUnbind(let m):
        return [("scene_id", .string(m.sceneID))]
    case .sceneListReply(let m):
        let entries = m.entries.map { entry -> JSONText in
            .object([("scene_id", .string(entry.sceneID)), ("anchor", .string(anchorName(entry.anchor))),
                     ("window_id", .uint(entry.windowID))] + positionFields(entry.position))
        }
        return [("count", .uint(m.entries.count)), ("entries", .array(entries))]
    case .streamOpen(let m):
        return [("kind", .string(kindName(m.kind)))] + formatFields(m.format) + [
            ("spatial_mode", .string(spatialName(m.spatialMode))), ("loop", .bool(m.loop)),
            ("volume_db", .float(m.volumeDecibels)), ("scene_id", .string(m.sceneID))]
            + (m.channelMap.map { [("channel_map", .array($0.map { .string(channelPositionName($0)) }))] } ?? [])
    case .streamOpened(let m):
        return [("stream_id", .uint(m.streamID)), ("credit_bytes", .uint(m.creditBytes))]
    case .streamData(let m):
        return [("stream_id", .uint(m.streamID)), ("pcm_hex", .string(hexString(m.pcm)))]
    case .streamDrain(let m), .streamClose(let m):
        return [("stream_id", .uint(m.streamID))]
    case .streamSetVolume(let m):
        return [("stream_id", .uint(m.streamID)), ("volume_db", .float(m.volumeDecibels))]
    case .streamSetScene(let m):
        return [("stream_id", .uint(m.streamID)), ("scene_id", .string(m.sceneID))]
    case .sampleUpload(let m):
        return [("name", .string(m.name))] + formatFields(m.format) + [
            ("total_bytes", .uint(m.totalBytes)), ("offset_bytes", .uint(m.offsetBytes)),
            ("pcm_hex", .string(hexString(m.pcm)))]
    case .samplePlay(let m):
        return [("name", .string(m.name)), ("kind", .string(kindName(m.kind))),
                ("spatial_mode", .string(spatialName(m.spatialMode))), ("volume_db", .float(m.volumeDecibels)),
                ("scene_id", .string(m.sceneID)), ("demand_attention", .bool(m.demandAttention))]
    case .samplePlaying(let m):
        return [("play_id", .uint(m.playID))]
    case .headPose(let m):
        let q = m.orientation
        var fields: [(String, JSONText)] = [
            ("timestamp_ns", .integer(Int64(m.timestampNanoseconds))),
            ("w", .float(q.w)), ("x", .float(q.x)), ("y", .float(q.y)), ("z", .float(q.z)),
            ("has_position", .bool(m.position != nil)),
        ]
        let position = m.position ?? PositionMetres(x: 0, y: 0, z: 0)
        fields += [("x_metres", .float(position.x)), ("y_metres", .float(position.y)), ("z_metres", .float(position.z))]
        return fields
    case .statusReply(let m):
        return [("json", .string(m.json))]
    case .outputDeviceChanged(let m):
        return [("json", .string(m.json))]
    case .headphoneEQUse(let m):
        return [("path", .string(m.path))]
    case .hrtfUse(let m):
        return [("path", .string(m.path))]
    case .headTrackingSet(let m):
        return [("mode", .string(["full", "yaw_only", "off"][Int(m.mode.rawValue) - 1])),
                ("recenter_after_seconds", .float(m.recenterAfterSeconds))]
    case .headTrackerUse(let m):
        return [("tracker", .string(m.tracker.name)), ("poses_per_second", .uint(m.posesPerSecond))]
    case .spatialUse(let m):
        return [("spatial", .string(m.spatial.name))]
    case .renderUse(let m):
        return [("render", .string(m.render.name))]
    case .creditGranted(let m):
        return [("stream_id", .uint(m.streamID)), ("bytes", .uint(m.bytes))]
    case .streamEnded(let m):
        return [("stream_id", .uint(m.streamID)), ("reason", .string(streamEndName(m.reason)))]
    case .streamError(let m):
        return [("stream_id", .uint(m.streamID)), ("code", .uint(m.code.rawValue)),
                ("code_name", .string(m.code.name)), ("message", .string(m.message))]
    case .playbackEnded(let m):
        return [("play_id", .uint(m.playID)), ("reason", .string(playbackEndName(m.reason)))]
    }
}

private func positionFields(_ p: ScenePosition) -> [(String, JSONText)] {
    [("azimuth_degrees", .float(p.azimuthDegrees)), ("elevation_degrees", .float(p.elevationDegrees)),
     ("distance_metres", .float(p.distanceMetres))]
}

private func formatFields(_ f: AudioFormat) -> [(String, JSONText)] {
    [("sample_format", .string(formatName(f.sampleFormat))), ("channels", .uint(f.channels)), ("rate_hz", .uint(f.rateHz))]
}

func formatName(_ f: SampleFormat) -> String {
    switch f { case .s16le: "s16le"; case .s32le: "s32le"; case .f32le: "f32le" }
}

func kindName(_ k: StreamKind) -> String {
    switch k { case .playback: "playback"; case .system: "system"; case .alert: "alert" }
}

func spatialName(_ s: SpatialMode) -> String {
    switch s { case .anchored: "anchored"; case .headLocked: "head_locked"; case .off: "off" }
}

func anchorName(_ a: SceneAnchor) -> String {
    switch a { case .none: "none"; case .window: "window"; case .position: "position" }
}

func streamEndName(_ r: StreamEndReason) -> String {
    switch r { case .drained: "drained"; case .serverShutdown: "server_shutdown"; case .removedByServer: "removed_by_server" }
}

func playbackEndName(_ r: PlaybackEndReason) -> String {
    switch r { case .completed: "completed"; case .coalesced: "coalesced"; case .interrupted: "interrupted" }
}

/// SPEC.md's short names of STREAM_OPEN's channel_map positions.
func channelPositionName(_ p: ChannelPosition) -> String {
    ["FL", "FR", "FC", "LFE", "BL", "BR", "SL", "SR"][Int(p.rawValue)]
}
