import Foundation
import SceneSoundDSP
import SceneSoundEngine
import SceneSoundProtocol
import SceneSoundStatusJSON

/// Builds the document behind `scenesound status --json` (the shared `StatusDocument`):
/// server, output, HRTF, head, clients, scenes, streams, render load and health counters.
struct StatusReport {
    let core: ServerCore

    var document: StatusDocument {
        let engine = core.engine
        let configuration = engine.configuration
        let output = core.outputStatus()
        let counters = core.counters
        let commands = core.commands
        let ordered = core.sessions.all
        let blockSeconds = Double(configuration.blockFrames) / configuration.sampleRateHz
        let lookAheadSeconds = Double(engine.renderer.latencyFrames) / configuration.sampleRateHz
        var document = StatusDocument(
            server: .init(software: core.configuration.serverName, pid: Int(getpid()),
                          uptimeSeconds: Date().timeIntervalSince(core.startTime), socket: core.configuration.socketPath),
            output: .init(kind: output.kind, target: output.target, rateHz: configuration.sampleRateHz,
                          blockFrames: configuration.blockFrames,
                          latencySeconds: output.latencySeconds.map { $0 + blockSeconds / 2 + lookAheadSeconds },
                          connected: output.connected, underruns: output.underruns,
                          overloadedBlocks: output.overloadedBlocks,
                          slowestBlockCPUSeconds: output.slowestBlock?.cpuSeconds,
                          slowestBlockAtSeconds: output.slowestBlock?.atSeconds, reconnects: output.reconnects,
                          renderThreadScheduling: output.renderThreadScheduling, lastError: output.lastError,
                          renderedSeconds: Double(engine.renderedFrames) / configuration.sampleRateHz),
            hrtf: core.hrtfStatus,
            head: head(outputLatencySeconds: output.latencySeconds, lookAheadSeconds: lookAheadSeconds),
            display: core.scenes.windows?.displayStatus ?? .init(connected: false),
            monitors: core.scenes.windows?.monitorsStatus ?? [],
            clients: ordered.map { session in
                let pid = session.peerPID > 0 ? Int(session.peerPID) : session.clientPID > 0 ? Int(session.clientPID) : nil
                return .init(id: session.sessionNumber, name: session.clientName, pid: pid, streams: session.streams.count)
            },
            scenes: core.scenes.registry.sortedScenes.map(scene),
            streams: ordered.flatMap { session in
                session.streams.streams.values.sorted { $0.id < $1.id }.map { stream(session, $0) }
            },
            render: .init(load: engine.renderLoad, peakLoad: engine.takePeakRenderLoad(),
                          blockDeadlineSeconds: Double(configuration.blockFrames) / configuration.sampleRateHz,
                          hrtfVoices: engine.hrtfVoiceCount, busVoices: engine.busVoiceCount,
                          kernels: RenderKernels.fastest.name),
            health: .init(connections: counters.connections, refusedConnections: counters.refusedConnections,
                          stalledClientsDropped: counters.stalledClients, rateLimitedMessages: counters.rateLimitedMessages,
                          governorMovesToBus: engine.governorMovesToBus, governorMovesToHRTF: engine.governorMovesToHRTF,
                          rejectedFrames: counters.rejectedFrames, droppedEngineEvents: engine.droppedEventCount,
                          engineCommandsDeferred: commands.deferredCount, engineCommandsWaiting: commands.waitingCount,
                          requestsRefusedEngineBehind: commands.refusedRequests),
            apps: core.capturedApps?.status,
            sceneSlots: sceneSlots, headphoneEQ: core.headphoneEQ.status)
        document.output.graphQuantumFrames = output.graphQuantumFrames
        document.output.graphQuantumRaisesAtMonotonicSeconds = output.graphQuantumRaisesAtMonotonicSeconds
        document.output.recentUnderflowsAtMonotonicSeconds = output.recentUnderflowsAtMonotonicSeconds
        document.output.recentUnderruns = output.recentUnderruns?.map {
            StatusDocument.Underrun(atMonotonicSeconds: $0.endedMonotonicSeconds, callSeconds: $0.processSeconds,
                                    callCPUSeconds: $0.processCPUSeconds, sincePreviousCallSeconds: $0.sincePreviousSeconds,
                                    blockSeconds: $0.quantumSeconds, driverStepSeconds: $0.driverStepSeconds,
                                    behindDriverSeconds: $0.behindDriverSeconds,
                                    previousBehindDriverSeconds: $0.previousBehindDriverSeconds,
                                    callWaits: $0.waits, callPreemptions: $0.preemptions,
                                    waitedForCPUSeconds: $0.waitedForCPUSeconds)
        }
        document.plays = core.samples.status
        document.outputDevice = core.outputDevices.deviceStatus
        document.rendering = core.outputDevices.renderingStatus
        document.devices = core.outputDevices.devicesStatus
        return document
    }

    /// Motion to sound: pose arrival → render thread (the wait for the render is in it), plus
    /// the limiter's look-ahead and the output's own delay to the device.
    private func head(outputLatencySeconds: Double?, lookAheadSeconds: Double) -> StatusDocument.Head {
        var head = core.head.status
        if let render = head.motionToRenderSeconds {
            head.motionToSoundSeconds = render + lookAheadSeconds + (outputLatencySeconds ?? 0)
        }
        return head
    }

    private var sceneSlots: StatusDocument.SceneSlots {
        let registry = core.scenes.registry
        return .init(capacity: registry.capacity, inUse: registry.scenes.count, created: registry.createdCount,
                     freed: registry.freedCount, refused: registry.refusedCount)
    }

    private func scene(_ scene: SceneRegistry.Scene) -> StatusDocument.Scene {
        let p = SphericalPosition(cartesian: scene.position)
        var entry = StatusDocument.Scene(
            id: scene.id, kind: "none", azimuthDegrees: p.azimuthDegrees, elevationDegrees: p.elevationDegrees,
            distanceMetres: p.distanceMetres, positionMetres: [scene.position.x, scene.position.y, scene.position.z],
            streams: scene.streams, kept: core.scenes.registry.keepReason(of: scene)?.rawValue)
        switch scene.anchor {
        case .none: entry.kind = "none"
        case .window(let id):
            entry.kind = "window"
            entry.window = "0x" + String(id, radix: 16)
        case .position: entry.kind = "fixed"
        case .process(let pid):
            entry.kind = "program"
            entry.pid = Int(pid)
        }
        if let window = scene.window {
            entry.window = "0x" + String(window.windowID, radix: 16)
            entry.title = window.title
            entry.application = window.application
            entry.state = window.state
            let r = window.rectPixels
            entry.rectPixels = [r.xPixels, r.yPixels, r.widthPixels, r.heightPixels]
            entry.widthMetres = window.widthMetres
        }
        return entry
    }

    private func stream(_ session: ClientSession, _ stream: ServerStream) -> StatusDocument.Stream {
        let rate = core.engine.configuration.sampleRateHz
        let state: String
        if stream.defunctCode != nil { state = "failed" }
        else if !stream.pendingDrains.isEmpty { state = "draining" }
        else if stream.ring.availableFrames > 0 { state = "playing" }
        else { state = "idle" }
        let input = stream.engineStream.input
        return .init(
            id: Int(stream.id), clientID: session.sessionNumber, kind: "\(stream.kind)", scene: stream.sceneID,
            state: state, spatial: EngineStreams.engineMode(stream.spatialMode).rawValue,
            volumeDecibels: Double(stream.volumeDecibels),
            levelDecibels: max(Self.silenceDecibels, input.recentLevelDecibels + Double(stream.volumeDecibels)),
            format: "\(stream.format.sampleFormat) \(stream.format.channels)ch \(stream.format.rateHz)Hz",
            bufferedSeconds: Double(stream.ring.availableFrames) / rate,
            starvedSeconds: Double(input.starvedFrameCount) / rate, loop: stream.loops)
    }

    /// The floor of `level_db`: what silence reads as.
    static let silenceDecibels = -120.0
}

extension StatusDocument {
    /// One line of JSON, keys in a fixed order (sorted), as STATUS_REPLY carries it.
    var serialized: String { Self.jsonLine(self) }
}
