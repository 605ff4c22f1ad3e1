import ArgumentParser
import Foundation
import SceneSoundClient
import SceneSoundProtocol
import SceneSoundSOFA
import SceneSoundStatusJSON
import SceneSoundView

/// `scenesound view`: the live scene and its controls in the browser. A web server of this
/// process (SceneSoundView), on 127.0.0.1 behind a secret token, that reads the daemon's status
/// over its socket as every verb does, pushes the scene to its pages, and carries out what a
/// page asks by running the very CLI verb for it (`scene place`, `apps exclude`, `hrtf use`, …).
struct ViewCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "view",
        abstract: "Show the scene live in the browser, with controls (served on loopback behind a secret token).",
        discussion: """
            Prints the page's URL, which carries a secret token, and opens it with xdg-open. The page \
            shows the scene seen from above as 'status --plot' draws it, updated as it changes, and \
            places scenes, excludes and includes apps, switches and compares HRTF sets, sets the \
            headphone EQ and recenters the head through the same operations as the verbs. Ends on \
            Ctrl-C, or a minute after its last page was closed.
            """)

    @Option(name: .customLong("port"), help: ArgumentHelp("The TCP port on 127.0.0.1 (default: a free one).", valueName: "N"))
    var port: Int = 0

    @Flag(name: .customLong("no-browser"), help: "Only print the URL; do not open a browser.")
    var noBrowser = false

    @Option(name: .customLong("idle-exit-seconds"), help: .hidden)
    var idleExitSeconds: Double = 60

    @OptionGroup var server: ServerOptions
    @OptionGroup var list: ExclusionListOptions

    /// At most this many status reads (and so pushes) a second.
    static let pushesPerSecond = 30.0

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port \(port) is out of range (accepted: 0 to 65535, 0 = a free one)") }
        guard idleExitSeconds.isFinite, idleExitSeconds > 0 else { throw ValidationError("--idle-exit-seconds must be positive") }
    }

    func run() throws {
        // The daemon first: a view of nothing would only confuse.
        let poller = StatusPoller(server: server)
        try poller.connect()
        let sets = HRTFCatalog().entries().filter { $0.problem == nil }.map(\.name)
        let setup = String(decoding: try JSONEncoder().encode(["type": "setup"]), as: UTF8.self).dropLast()
            + ",\"hrtf_sets\":" + String(decoding: try JSONEncoder().encode(sets), as: UTF8.self) + "}"
        let verbs = VerbRunner(server: server, list: list)
        let web = ViewServer(setupJSON: String(setup)) { action in verbs.perform(action) }
        let bound: Int
        do { bound = try web.start(port: port) } catch {
            throw RuntimeError("cannot listen on 127.0.0.1:\(port): \(error) (choose another --port, or leave it out for a free one)")
        }
        defer { web.stop() }
        guard let access = web.access else { throw RuntimeError("the view server did not start") }
        let url = "http://127.0.0.1:\(bound)/?token=\(access.token)"
        say("SceneSound view: \(url)\n(the URL is the key to the page: keep it to yourself; Ctrl-C ends the view)")
        if !noBrowser { Self.openInBrowser(url) }

        let wake = DispatchSemaphore(value: 0)
        web.onViewerActive { wake.signal() }
        let stop = StopSignals()
        stop.install { wake.signal() }
        let period = 1 / Self.pushesPerSecond
        var lastRead = 0.0
        while !stop.requested {
            if let idle = web.secondsSinceLastPageClosed(), idle >= idleExitSeconds {
                say("the last page was closed \(Int(idle)) s ago: the view ends")
                break
            }
            let visible = web.viewerCounts.visible
            if visible == 0 {
                // No page to draw for: wait for one (or a signal), checking the idle clock.
                _ = wake.wait(timeout: .now() + 1)
                continue
            }
            let now = Self.seconds()
            if now - lastRead < period {
                _ = wake.wait(timeout: .now() + (period - (now - lastRead)))
                continue
            }
            lastRead = now
            web.publish(poller.stateMessage())
        }
    }

    static func seconds() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    /// xdg-open, not waited for; a failure says to open the URL by hand.
    static func openInBrowser(_ url: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["xdg-open", url]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch {
            FileHandle.standardError.write(Data("scenesound: cannot run xdg-open (\(error.localizedDescription)): open the URL above in a browser\n".utf8))
        }
    }
}

/// A line on stdout at once (stdout may be a pipe, which print() would buffer).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// SIGINT and SIGTERM end the view's loop (the web server is then closed before exit).
final class StopSignals: @unchecked Sendable {
    private let lock = NSLock()
    private var stopped = false
    private var sources: [DispatchSourceSignal] = []

    var requested: Bool { lock.withLock { stopped } }

    func install(_ wake: @escaping @Sendable () -> Void) {
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [self] in
                lock.withLock { stopped = true }
                wake()
            }
            source.resume()
            sources.append(source)
        }
    }
}

/// The status over one connection kept open, made again (at most once a second) when lost.
final class StatusPoller {
    private let server: ServerOptions
    private var connection: ClientConnection?
    private var lastAttempt = 0.0

    init(server: ServerOptions) { self.server = server }

    func connect() throws {
        connection = try server.connect()
        lastAttempt = ViewCommand.seconds()
    }

    /// `{"type":"state","scene":{…}}`, or `{"type":"state","error":"…"}` while the daemon is away.
    func stateMessage() -> String {
        do {
            if connection == nil {
                guard ViewCommand.seconds() - lastAttempt >= 1 else { throw RuntimeError("the server is unreachable; retrying") }
                try connect()
            }
            let document = try connection!.statusDocument()
            let model = SceneModel(status: document)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            return #"{"type":"state","scene":"# + String(decoding: try encoder.encode(model), as: UTF8.self) + "}"
        } catch {
            connection?.close()
            connection = nil
            let data = (try? JSONEncoder().encode(["type": "state", "error": "\(error)"])) ?? Data("{}".utf8)
            return String(decoding: data, as: UTF8.self)
        }
    }
}

/// Carries out a page's action by running the CLI's own verb for it, so that the page does
/// exactly what typing the verb does: same validation, same protocol operation, same messages.
struct VerbRunner: Sendable {
    let socketArguments: [String]
    let exclusionArguments: [String]

    init(server: ServerOptions, list: ExclusionListOptions) {
        socketArguments = server.socketPath.map { ["--socket", $0] } ?? []
        exclusionArguments = list.path.map { ["--exclusions", $0] } ?? []
    }

    /// The verb's arguments for an action; nil for an action the page may not ask.
    func arguments(for action: ViewAction) -> [String]? {
        func number(_ value: Double?) -> String? { value.flatMap { $0.isFinite ? String($0) : nil } }
        switch action.action {
        case "place":
            guard let scene = action.scene, let azimuth = number(action.azimuthDegrees), let distance = number(action.distanceMetres)
            else { return nil }
            return ["scene", "place", scene, "--azimuth", azimuth, "--elevation", number(action.elevationDegrees) ?? "0",
                    "--distance", distance] + socketArguments
        case "exclude", "include":
            guard let name = action.name else { return nil }
            return ["apps", action.action, name] + exclusionArguments
        case "app_spatial":
            guard let name = action.name, let mode = action.mode else { return nil }
            return ["apps", "spatial", name, mode]
        case "hrtf_use":
            guard let name = action.name else { return nil }
            return ["hrtf", "use", name] + socketArguments
        case "hrtf_compare":
            guard let name = action.name, let other = action.other else { return nil }
            return ["hrtf", "compare", name, other] + socketArguments
        case "eq_use":
            guard let path = action.path, !path.isEmpty else { return nil }
            return ["eq", "use", path] + socketArguments
        case "recenter":
            return ["head", "recenter"] + socketArguments
        case "device_spatial":
            guard let mode = action.mode else { return nil }
            return ["spatial", mode] + socketArguments
        case "device_render":
            guard let mode = action.mode else { return nil }
            return ["device", "render", mode] + socketArguments
        case "head_tracking":
            guard let mode = action.mode else { return nil }
            let seconds = action.seconds.flatMap { $0 > 0 ? number($0) : nil } ?? "off"
            return ["head", "tracking", mode, "--recenter-after", seconds] + socketArguments
        case "head_tracker":
            guard let tracker = action.mode else { return nil }
            let rate = action.posesPerSecond.flatMap { $0 > 0 && $0.isFinite ? String(Int($0.rounded())) : nil } ?? "default"
            return ["head", "tracker", tracker, "--rate", rate] + socketArguments
        default:
            return nil
        }
    }

    func perform(_ action: ViewAction) -> (ok: Bool, message: String) {
        guard let arguments = arguments(for: action) else { return (false, "unknown or incomplete action '\(action.action)'") }
        // A name or path starting with "-" would be read as an option: refused (no app, set,
        // scene or file the page offers starts so).
        guard ![action.scene, action.name, action.other, action.path, action.mode].contains(where: { $0?.hasPrefix("-") == true }) else {
            return (false, "a name starting with '-' is not accepted here")
        }
        let shown = "scenesound " + arguments.filter { !socketArguments.contains($0) && !exclusionArguments.contains($0) }.joined(separator: " ")
        do {
            var command = try SceneSoundCommand.parseAsRoot(arguments)
            try command.run()
            say("view: \(shown)")
            return (true, "done: \(shown)")
        } catch {
            let message = SceneSoundCommand.exitCode(for: error) == .failure && error is RuntimeError
                ? String(describing: error)
                : SceneSoundCommand.message(for: error).replacingOccurrences(of: "Error: ", with: "")
            return (false, "\(shown): \(message)")
        }
    }
}
