import Foundation
import SceneSoundDSP
import SceneSoundEngine

/// The document behind `scenesound status --json`: server, output, HRTF, head, scenes,
/// streams, render load and health counters.
struct StatusReport {
    let core: ServerCore

    var document: JSONValue {
        let sessions = core.sessions.all
        let startTime = core.startTime
        let engine = core.engine
        let configuration = engine.configuration
        let output = core.outputStatus()
        let blockSeconds = Double(configuration.blockFrames) / configuration.sampleRateHz
        let slowestBlockCPU: JSONValue = output.slowestBlock.map { .number($0.cpuSeconds) } ?? .null
        let slowestBlockAt: JSONValue = output.slowestBlock.map { .number($0.atSeconds) } ?? .null
        let renderThreadScheduling: JSONValue = output.renderThreadScheduling.map(JSONValue.string) ?? .null

        return .object([
            ("server", .object([
                ("version", .string(core.configuration.serverName)),
                ("pid", .integer(Int(getpid()))),
                ("uptime_seconds", .number(Date().timeIntervalSince(startTime))),
                ("socket", .string(core.configuration.socketPath)),
                ("clients", .integer(sessions.count)),
            ])),
            ("output", .object([
                ("kind", .string(output.kind)),
                ("target", output.target.map(JSONValue.string) ?? .null),
                ("rate_hz", .number(configuration.sampleRateHz)),
                ("block_frames", .integer(configuration.blockFrames)),
                ("latency_seconds", output.latencySeconds.map(JSONValue.number) ?? .null),
                ("connected", .bool(output.connected)),
                ("underruns", .integer(output.underruns)),
                ("overloaded_blocks", output.overloadedBlocks.map(JSONValue.integer) ?? .null),
                ("slowest_block_cpu_seconds", slowestBlockCPU),
                ("slowest_block_at_seconds", slowestBlockAt),
                ("reconnects", .integer(output.reconnects)),
                ("render_thread_scheduling", renderThreadScheduling),
                ("last_error", output.lastError.map(JSONValue.string) ?? .null),
                ("rendered_seconds", .number(Double(engine.renderedFrames) / configuration.sampleRateHz)),
            ])),
            ("hrtf", core.hrtfDescription),
            ("head", .object(core.head.statusFields + [
                ("motion_to_sound_seconds", motionToSound(output.latencySeconds)),
            ])),
            ("display", .object(core.scenes.windows?.displayFields ?? [("connected", .bool(false)), ("tracking", .bool(false))])),
            ("monitors", core.scenes.windows?.monitorsDocument ?? .array([])),
            ("scenes", .array(core.scenes.registry.sortedScenes.map(scene))),
            ("streams", .array(sessions.flatMap { session in
                session.streams.streams.values.sorted { $0.id < $1.id }.map { stream(session, $0) }
            })),
            ("render", .object([
                ("load", .number(engine.renderLoad)),
                ("peak_load", .number(engine.takePeakRenderLoad())),
                ("block_deadline_seconds", .number(blockSeconds)),
                ("hrtf_voices", .integer(engine.hrtfVoiceCount)),
                ("bus_voices", .integer(engine.busVoiceCount)),
                ("kernels", .string(RenderKernels.fastest.name)),
            ])),
            ("health", .object([
                ("connections", .integer(core.counters.connections)),
                ("refused_connections", .integer(core.counters.refusedConnections)),
                ("stalled_clients_dropped", .integer(core.counters.stalledClients)),
                ("rate_limited_messages", .integer(core.counters.rateLimitedMessages)),
                ("governor_moves_to_bus", .integer(engine.governorMovesToBus)),
                ("governor_moves_to_hrtf", .integer(engine.governorMovesToHRTF)),
                ("rejected_frames", .integer(core.counters.rejectedFrames)),
                ("dropped_engine_events", .integer(engine.droppedEventCount)),
                ("engine_commands_deferred", .integer(core.commands.deferredCount)),
                ("engine_commands_waiting", .integer(core.commands.waitingCount)),
                ("requests_refused_engine_behind", .integer(core.commands.refusedRequests)),
                ("underruns", .integer(output.underruns)),
                ("reconnects", .integer(output.reconnects)),
            ])),
        ])
    }

    /// Pose arrival → render thread, plus the limiter's look-ahead and the output's own latency.
    private func motionToSound(_ outputLatency: Double?) -> JSONValue {
        guard case .number(let render)? = core.head.statusFields.first(where: { $0.0 == "motion_to_render_seconds" })?.1
        else { return .null }
        let lookAhead = Double(core.engine.renderer.latencyFrames) / core.engine.configuration.sampleRateHz
        return .number(render + lookAhead + (outputLatency ?? 0))
    }

    private func scene(_ scene: SceneRegistry.Scene) -> JSONValue {
        let p = SphericalPosition(cartesian: scene.position)
        var fields: [(String, JSONValue)] = [("id", .string(scene.id))]
        switch scene.anchor {
        case .none: fields.append(("kind", .string("none")))
        case .window(let id):
            fields.append(("kind", .string("window")))
            fields.append(("window", .string("0x" + String(id, radix: 16))))
        case .position: fields.append(("kind", .string("fixed")))
        case .process(let pid):
            fields.append(("kind", .string("program")))
            fields.append(("pid", .integer(Int(pid))))
        }
        if let window = scene.window {
            if case .process = scene.anchor { fields.append(("window", .string("0x" + String(window.windowID, radix: 16)))) }
            let r = window.rectPixels
            fields += [("state", .string(window.state)),
                       ("rect_pixels", .array([r.xPixels, r.yPixels, r.widthPixels, r.heightPixels].map(JSONValue.integer))),
                       ("width_metres", .number(window.widthMetres))]
        }
        fields += [("azimuth_degrees", .number(p.azimuthDegrees)), ("elevation_degrees", .number(p.elevationDegrees)),
                   ("distance_metres", .number(p.distanceMetres)),
                   ("position_metres", .array([scene.position.x, scene.position.y, scene.position.z].map(JSONValue.number)))]
        return .object(fields)
    }

    private func stream(_ session: ClientSession, _ stream: ServerStream) -> JSONValue {
        let rate = core.engine.configuration.sampleRateHz
        let state: String
        if stream.defunctCode != nil { state = "failed" }
        else if !stream.pendingDrains.isEmpty { state = "draining" }
        else if stream.ring.availableFrames > 0 { state = "playing" }
        else { state = "idle" }
        return .object([
            ("id", .integer(Int(stream.id))),
            ("client", .string(session.displayName)),
            ("kind", .string("\(stream.kind)")),
            ("scene", .string(stream.sceneID)),
            ("state", .string(state)),
            ("spatial", .string(EngineStreams.engineMode(stream.spatialMode).rawValue)),
            ("volume_db", .number(Double(stream.volumeDecibels))),
            ("format", .string("\(stream.format.sampleFormat) \(stream.format.channels)ch \(stream.format.rateHz)Hz")),
            ("buffered_seconds", .number(Double(stream.ring.availableFrames) / rate)),
            ("starved_seconds", .number(Double(stream.engineStream.input.starvedFrameCount) / rate)),
            ("loop", .bool(stream.loops)),
        ])
    }
}
