import ArgumentParser
import Foundation
import Logging
import SceneSoundCapture
import SceneSoundCaptureGraph
import SceneSoundCLI
import SceneSoundCaptureSettings
import SceneSoundDBus
import SceneSoundDSP
import SceneSoundEngine
import SceneSoundOutputs
import SceneSoundPipeWire
import SceneSoundPulse
import SceneSoundServer
import SceneSoundSOFA
import SceneSoundWayland
import SceneSoundWindows
import SceneSoundX11

// scenesoundd: loads the HRTF set, starts the engine on the chosen output and serves the
// socket until SIGINT or SIGTERM, then shuts down cleanly (the wav file finalised).

switch ProgramName(invokedAs: CommandLine.arguments.first ?? "") {
case .commandLine: SceneSoundCLI.run(arguments: Array(CommandLine.arguments.dropFirst()))
case .captureGuard: exit(CaptureGuard.run(arguments: Array(CommandLine.arguments.dropFirst()), disconnectHungDaemon: HungDaemonDisconnect.run))
case .daemon: break
}

func die(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("scenesoundd: \(message)\n".utf8))
    exit(status)
}

// Two malloc arenas: the event loop does nearly all allocation, and per-thread arenas only
// fragment a long-running server's memory (its resident size creeps up with every new peak).
GlibcMalloc.setArenaMaximum(2)

// The config file's settings come first, so that flags on the command line override them.
var arguments = Array(CommandLine.arguments.dropFirst())
if let config = ConfigFile.path(arguments: arguments, environment: ProcessInfo.processInfo.environment) {
    guard config.explicit ? FileManager.default.fileExists(atPath: config.path) : true else {
        die("--config \(config.path): no such file", status: 2)
    }
    do {
        arguments = try ConfigFile.arguments(fromFile: config.path) + arguments
    } catch let failure as ConfigFile.Failure {
        die(failure.description, status: 2)
    }
}

let options: DaemonOptions
do {
    options = try DaemonOptions.parse(arguments)
} catch {
    if DaemonOptions.exitCode(for: error) == .success {
        print(DaemonOptions.fullMessage(for: error))
        exit(0)
    }
    let message = DaemonOptions.message(for: error).split(separator: "\n").first.map(String.init) ?? "invalid usage"
    die(message.replacingOccurrences(of: "Error: ", with: "") + " (see 'scenesoundd --help')", status: 2)
}

let level = Logger.Level(rawValue: options.logLevel) ?? .info
LoggingSystem.bootstrap { label in
    var handler = StreamLogHandler.standardError(label: label)
    handler.logLevel = level
    return handler
}
let logger = Logger(label: "scenesoundd")

let socketPath: String
do { socketPath = try options.socketPath() } catch let error as ValidationError { die(error.message, status: 2) }

/// A set as the engine takes it: equalized (`--hrtf-eq`), cached, its ITD scaled to the head.
@Sendable func loadHRTF(path: String) throws -> (set: HRTFSet, origin: HRTFLoader.Origin) {
    let loaded = try HRTFLoader().load(path: path, sampleRateHz: Double(options.rateHz),
                                        equalization: options.hrtfEqualization)
    guard let width = options.headWidthCentimetres else { return (loaded.set, loaded.origin) }
    return (loaded.set.scalingInterauralDelays(by: HRTFSet.interauralDelayScale(headWidthCentimetres: width)), loaded.origin)
}

// The set: --hrtf (or the config's hrtf) wins; else the one last chosen with `hrtf use`, if it
// still loads; else Debian's KEMAR.
let hrtfChoice = HRTFChoice()
var hrtfPath = options.explicitHRTFPath ?? SOFAFile.defaultPath
var hrtf: HRTFSet
do {
    let started = Date()
    var loaded: (set: HRTFSet, origin: HRTFLoader.Origin)?
    if options.explicitHRTFPath == nil, let chosen = hrtfChoice?.read() {
        do {
            loaded = try loadHRTF(path: chosen)
            hrtfPath = chosen
        } catch {
            logger.warning("the HRTF set chosen last (\(chosen), in \(hrtfChoice!.filePath)) did not load: \(error); using \(hrtfPath)")
        }
    }
    let set = try loaded ?? loadHRTF(path: hrtfPath)
    hrtf = set.set
    if let width = options.headWidthCentimetres {
        logger.info("head width \(width) cm: the set's ITD scaled by \(HRTFSet.interauralDelayScale(headWidthCentimetres: width))")
    }
    logger.info("HRTF \(hrtfPath): \(hrtf.measurementCount) measurements, \(hrtf.filterTaps) taps, \(set.origin == .cache ? "from cache" : "prepared") in \(Int(Date().timeIntervalSince(started) * 1000)) ms")
} catch {
    die("\(error); pass --hrtf with an AES69 SOFA file", status: 1)
}

let busFilters: AmbisonicDecodeFilters
do {
    let started = Date()
    let loaded = AmbisonicDecoderCache().filters(for: hrtf)
    busFilters = loaded.filters
    logger.info("bus decoder: \(loaded.origin == .cache ? "from cache" : "designed") in \(Int(Date().timeIntervalSince(started) * 1000)) ms")
}

var engineConfiguration = EngineConfiguration(
    sampleRateHz: Double(options.rateHz), blockFrames: options.blockFrames, room: options.room,
    maximumHRTFVoices: options.maximumHRTFVoices)
engineConfiguration.restAfterSeconds = options.restAfterSeconds
let engine = Engine(hrtf: hrtf, configuration: engineConfiguration, busFilters: busFilters)

// PipeWire's core socket when the session's server is PipeWire: the default output, and where
// --output pipewire connects.
let pipeWireSocket = PipeWireSession.socketPath(environment: ProcessInfo.processInfo.environment)
let outputSpecification = options.output.flatMap(OutputSpecification.init) ?? .sessionDefault(pipeWireSocket: pipeWireSocket)
let output: OutputBackend
// --capture-apps on PipeWire: apps are linked into a node of the graph and handed on in the
// cycle they play (GraphCapture) — the output's node, or with another output a node of the
// capture's own (CaptureNode).
let outputIsGraphNode: Bool = { if case .pipewire = outputSpecification { true } else { false } }()
let graphCapture: GraphCapture? = options.captureApps && (outputIsGraphNode || pipeWireSocket != nil) ? GraphCapture() : nil
let captureNode: CaptureNode? = {
    guard let graphCapture, !outputIsGraphNode else { return nil }
    let node = CaptureNode(remote: pipeWireSocket, rateHz: options.rateHz, quantumFrames: options.blockFrames) {
        logger.warning("app capture node: \($0)")
    }
    graphCapture.nodeSource = { node.node }
    return node
}()
switch outputSpecification {
case .null: output = NullOutput()
case .wav(let path): output = WavOutput(path: path)
case .pipewire(let target):
    let pipeWireOutput = PipeWireAudioOutput(
        target: target, remote: pipeWireSocket, inputSetCount: graphCapture == nil ? 1 : GraphCapture.inputSets,
        beforeRender: graphCapture.map { capture in { capture.deliver($0) } }) { event in
        switch event {
        case .connected(let sink): logger.info("PipeWire: playing\(sink.isEmpty ? "" : " to \(sink)")")
        case .disconnected(let reason): logger.warning("PipeWire: disconnected (\(reason)); reconnecting")
        case .reconnecting(let attempt): logger.debug("PipeWire: reconnect attempt \(attempt)")
        case .failed(let reason): logger.error("PipeWire: \(reason)")
        case .defaultSinkChanged: break
        case .quantumChanged(let frames, let reason):
            logger.notice("PipeWire: asking the graph for \(frames) frames (\(String(format: "%.1f", Double(frames) / Double(options.rateHz) * 1000)) ms): \(reason)")
        }
    }
    graphCapture?.nodeSource = { [weak pipeWireOutput] in pipeWireOutput?.graph }
    output = pipeWireOutput
case .pulse(let sink):
    output = PulseAudioOutput(sinkName: sink) { event in
        switch event {
        case .connected(let sink): logger.info("PulseAudio: playing to \(sink)")
        case .disconnected(let reason): logger.warning("PulseAudio: disconnected (\(reason)); reconnecting")
        case .reconnecting(let attempt): logger.debug("PulseAudio: reconnect attempt \(attempt)")
        case .underrun: logger.debug("PulseAudio: underrun")
        case .failed(let reason): logger.error("PulseAudio: \(reason)")
        }
    }
}

var configuration = ServerConfiguration(socketPath: socketPath)
configuration.maximumClients = options.maximumClients
configuration.maximumStreamsPerClient = options.maximumStreamsPerClient
configuration.maximumFrameBytes = options.maximumFrameBytes
configuration.streamBufferSeconds = options.streamBufferSeconds
configuration.allowRoot = options.allowRoot
configuration.maximumMessagesPerSecond = options.maximumMessagesPerSecond
configuration.maximumOpenTrackPacketsPerSecond = options.maximumOpenTrackPacketsPerSecond
configuration.maximumOSCPacketsPerSecond = options.maximumOSCPacketsPerSecond
configuration.headTracking = options.headTrackingSettings
configuration.samples.cacheBytes = options.sampleCacheBytes
configuration.samples.ducking = DuckingParameters(decibels: options.duckDecibels)
configuration.samples.coalesceWindowSeconds = options.coalesceSeconds
configuration.samples.alertsDemandAttention = options.flashAlertWindows
if let path = options.headphoneEQPath {
    do {
        configuration.headphoneEQ = try HeadphoneEQFile.load(path: path, sampleRateHz: Double(options.rateHz))
    } catch {
        die("--headphone-eq \(error.detail)", status: 2)
    }
    logger.info("headphone EQ: \(path)")
}

// `scenesound hrtf use`: loaded and prepared off the event loop, the choice kept.
struct HRTFLoadFailure: Error, CustomStringConvertible { let description: String }
configuration.hrtfLoader = { path in
    let started = Date()
    let loaded: (set: HRTFSet, origin: HRTFLoader.Origin)
    do {
        loaded = try loadHRTF(path: path)
    } catch {
        throw HRTFLoadFailure(description: "\(path): \(error) (accepted: an AES69 SOFA file)")
    }
    let decoder = AmbisonicDecoderCache().filters(for: loaded.set)
    logger.info("HRTF \(path): \(loaded.set.measurementCount) measurements, \(loaded.set.filterTaps) taps, \(loaded.origin == .cache ? "from cache" : "prepared") in \(Int(Date().timeIntervalSince(started) * 1000)) ms; switching")
    return PreparedHRTF(set: loaded.set, busFilters: decoder.filters)
}
configuration.hrtfChosen = { path in
    guard let hrtfChoice else { return }
    do { try hrtfChoice.write(path) } catch { logger.warning("could not keep the HRTF choice in \(hrtfChoice.filePath): \(error)") }
}

configuration.renderPreference = RenderPreference(rawValue: options.render)!
if let defaults = options.deviceDefaults { configuration.deviceDefaults = try! DeviceSettings(parsingDefaults: defaults) }  // validated
configuration.deviceSettingsPath = DeviceSettingsStore.defaultPath()

let server = SoundServer(configuration: configuration, engine: engine, output: output,
                         hrtfPath: hrtfPath, logger: logger)
var appCapture: AppCapture?
var capturedApps: CapturedAppStreams?
// The output device, followed from before the output starts (nothing it does waits for it).
let sinkWatch = startSinkWatch()
// On PipeWire the device is the sink the node follows: the node reads the `default` metadata
// anew after every client, while pipewire-pulse's copy for the watch's own connection can miss
// the listener's choice for good (a client gone while its binding awaited WirePlumber). With
// --capture-apps the capture tells the real sink (startAppCapture).
if case .pipewire(nil) = outputSpecification, !options.captureApps, let pipeWireOutput = output as? PipeWireAudioOutput {
    pipeWireOutput.watchDefaultSink { sink in sinkWatch?.follow(sinkName: sink) }
}
do {
    try output.start(engine: engine)
    try server.start()
    startWindowTracking()
    if let captureNode, let graphCapture { try captureNode.start(capture: graphCapture) }
    if options.captureApps { (appCapture, capturedApps) = startAppCapture() }
    if let port = options.openTrackPort {
        // Head tracking is optional: a port in use costs head tracking, not the server.
        do { try server.startOpenTrack(port: port) } catch { logger.warning("\(error); head tracking by opentrack is off") }
    }
    if let osc = options.oscEndpoint {
        do { try server.startOSC(host: osc.host, port: osc.port, extra: options.oscFormat) } catch { logger.warning("\(error); head tracking by OSC is off") }
    }
} catch {
    try? output.stop()
    die("\(error)", status: 1)
}
logger.info("ready: output \(outputSpecification), \(options.rateHz) Hz, block \(options.blockFrames) frames, room \(options.room.rawValue)")
/// Windows: `--windows` (auto: the session's compositor, else X11); X11 on `--display`, else
/// $DISPLAY. "none", or X11 with no display at all, keeps scenes at fixed positions.
func startWindowTracking() {
    var anchoring = WindowAnchoringSettings()
    anchoring.hiddenGainDecibels = options.hiddenWindowDecibels
    anchoring.hiddenCutoffHz = options.hiddenWindowCutoffHz
    let environment = ProcessInfo.processInfo.environment
    var choice = WindowBackendChoice(rawValue: options.windows)!
    if choice == .auto {
        var detectionEnvironment = environment
        if let display = options.display { detectionEnvironment["DISPLAY"] = display }
        // One short-lived session-bus connection, for KWin's and GNOME Shell's names.
        let bus = try? DBusConnection.sessionBus(environment: environment)
        let detected = WindowBackendChoice.detect(environment: detectionEnvironment) { name in
            ((try? bus?.nameOwner(name)) ?? nil) != nil
        }
        bus?.close()
        logger.info("--windows auto: \(detected.choice.rawValue), since \(detected.reason)")
        choice = detected.choice
    }
    /// Every compositor's outputs are also read over the session's Wayland display, for their millimetres.
    func compositorConfiguration(_ base: CompositorWindowSource.Configuration) -> CompositorWindowSource.Configuration {
        var configuration = base
        configuration.waylandDisplay = environment["WAYLAND_DISPLAY"].flatMap { $0.isEmpty ? nil : $0 }
        return configuration
    }
    switch choice {
    case .kwin:
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        guard let script = KWinWindowSource.scriptTemplatePath(executablePath: executable) else {
            logger.error("--windows kwin: SceneSound's KWin script (\(KWinWindowSource.installedScriptPath)) is not installed for \(executable); scenes stay at fixed positions")
            return
        }
        server.startWindowTracking(settings: anchoring) { onSnapshot in
            KWinWindowSource.make(environment: environment, scriptTemplate: script,
                                  scriptDirectory: (socketPath as NSString).deletingLastPathComponent,
                                  configuration: compositorConfiguration(KWinWindowSource.defaultConfiguration), log: { logger.warning("\($0)") }, onSnapshot: onSnapshot)
        }
    case .gnome:
        server.startWindowTracking(settings: anchoring) { onSnapshot in
            GnomeShellWindowSource.make(environment: environment,
                                        configuration: compositorConfiguration(.init(pollWhilePlayingSeconds: nil)),
                                        log: { logger.warning("\($0)") }, onSnapshot: onSnapshot)
        }
    case .x11, .auto:
        let display = options.display ?? environment["DISPLAY"]
        guard let display, display != "none", !display.isEmpty else {
            logger.info("no X display: scenes stay at fixed positions")
            return
        }
        server.startWindowTracking(settings: anchoring) { onSnapshot in
            WindowTracker(configuration: .init(displayName: display), onSnapshot: onSnapshot)
        }
    case .sway:
        guard let socket = environment["SWAYSOCK"], !socket.isEmpty else {
            logger.warning("--windows sway: SWAYSOCK is not set; scenes stay at fixed positions")
            return
        }
        server.startWindowTracking(settings: anchoring) { onSnapshot in
            SwayWindowSource.make(socketPath: socket, configuration: compositorConfiguration(.init()), log: { logger.warning("\($0)") },
                                  onSnapshot: onSnapshot)
        }
    case .hyprland:
        guard let directory = HyprlandWindowSource.socketDirectory(environment: environment) else {
            logger.warning("--windows hyprland: HYPRLAND_INSTANCE_SIGNATURE is not set; scenes stay at fixed positions")
            return
        }
        server.startWindowTracking(settings: anchoring) { onSnapshot in
            HyprlandWindowSource.make(socketDirectory: directory, configuration: compositorConfiguration(.init()),
                                      log: { logger.warning("\($0)") }, onSnapshot: onSnapshot)
        }
    case .none:
        logger.info("--windows none: scenes stay at fixed positions")
    }
}


// --capture-apps: other programs' streams, taken over through the sound server and played from
// their windows. Its guard (next to this executable) undoes it if this process dies or hangs.
func startAppCapture() -> (AppCapture?, CapturedAppStreams?) {
    let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
    guard let guardExecutable = AppCapture.Configuration.guardExecutable(forDaemonAt: executable) else {
        logger.error("--capture-apps: scenesound-capture-guard is not installed next to \(executable) nor in ../libexec/scenesound/; not capturing (without it a crash would leave apps silent)")
        return (nil, nil)
    }
    let streams = CapturedAppStreams(server: server)
    let settings = CaptureSettingsFollower(configured: options.captureExclude, logger: logger)
    var captureConfiguration = AppCapture.Configuration(
        excludedBinaries: settings.current.excluded, guardExecutable: guardExecutable)
    captureConfiguration.rateHz = options.rateHz
    captureConfiguration.restAfterSeconds = options.restAfterSeconds
    captureConfiguration.graph = graphCapture
    let configuredSink: String?
    switch outputSpecification {
    case .pulse(let sink): configuredSink = sink
    case .pipewire(let target): configuredSink = target
    case .wav, .null:
        configuredSink = nil
        logger.notice("--capture-apps with --output \(outputSpecification): captured apps are heard only there")
    }
    // With the capture sink the default, the mix must not follow the default: it plays on the
    // real sink (or the one --output names), and stays there.
    let bridge = AppCaptureBridge(streams: streams, logger: logger, graph: graphCapture) { realSink in
        let sink = realSink.map { configuredSink ?? $0 }
        (output as? PulseAudioOutput)?.pin(toSink: sink)
        (output as? PipeWireAudioOutput)?.pin(toSink: sink)
        // The device is the real sink's, not our capture sink's (the default while capturing).
        sinkWatch?.follow(sinkName: sink)
    }
    let capture = AppCapture(configuration: captureConfiguration, consumer: bridge)
    streams.setExcluded(settings.current.excluded.sorted())
    streams.setSpatialModes(settings.current.spatial.modeByName)
    do {
        try capture.start()
        settings.follow { now in
            capture.setExcludedBinaries(now.excluded)
            streams.setExcluded(now.excluded.sorted())
            streams.setSpatialModes(now.spatial.modeByName)
        }
        return (capture, streams)
    } catch {
        logger.error("--capture-apps: \(error)")
        return (nil, streams)
    }
}

/// The output device: the sink the mix plays on (the one `--output` names, else the default;
/// with --capture-apps the real sink, followed from the capture), watched over libpulse on
/// PulseAudio and pipewire-pulse alike. A wav or null output has none: headphones, as before.
func startSinkWatch() -> SinkWatch? {
    let pinned: String?
    switch outputSpecification {
    case .pulse(let sink): pinned = sink
    case .pipewire(let target): pinned = target
    case .wav, .null: return nil
    }
    do {
        // With --capture-apps our capture sink is the default: not a device (the capture tells
        // the real sink, which the watch then follows).
        let ignored = options.captureApps ? CaptureSinkProperties.sessionKey : nil
        return try SinkWatch(serverAddress: nil, pinnedSink: pinned, ignoredSinkProperty: ignored) { device in
            if let device {
                logger.info("output device: \(device.key) (\(device.description ?? device.sinkName)), form factor \(device.formFactor ?? "-"), bus \(device.bus ?? "-"), port \(device.port.map { "\($0.name) (\($0.type ?? "-"))" } ?? "-"), channels \(device.channels.joined(separator: ","))")
            } else {
                logger.info("output device: none known (\(pinned.map { "no sink \($0)" } ?? "no default sink"))")
            }
            server.outputDeviceChanged(device)
        }
    } catch {
        logger.warning("the output device cannot be watched (\(error)): rendering for headphones")
        return nil
    }
}

// Signals are taken synchronously on a dispatch source, then the shutdown runs in order.
signal(SIGINT, SIG_IGN)
signal(SIGTERM, SIG_IGN)
signal(SIGPIPE, SIG_IGN)
// A file-size limit on the wav output must fail the write (reported), not kill the server.
signal(SIGXFSZ, SIG_IGN)
let shutdown = DispatchSemaphore(value: 0)
let sources = [SIGINT, SIGTERM].map { signalNumber in
    let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
    source.setEventHandler {
        logger.info("signal \(signalNumber): shutting down")
        shutdown.signal()
    }
    source.resume()
    return source
}
shutdown.wait()
// Apps first: back on their sinks before the output that played them goes away.
if let appCapture, !appCapture.stop() { logger.warning("app capture: the sound server did not confirm the undo; the guard finishes it") }
capturedApps?.stop()
captureNode?.stop()
sinkWatch?.stop()
server.stop()
do {
    try output.stop()
} catch {
    die("shutting down the output: \(error)", status: 1)
}
logger.info("stopped")
exit(0)

