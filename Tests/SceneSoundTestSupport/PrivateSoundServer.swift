import Foundation

/// A private sound server as desktops run it, started by scripts/testenv and stopped by PID:
/// PulseAudio with the restore modules and module-always-sink, or PipeWire with WirePlumber,
/// pipewire-pulse and its own D-Bus session bus. Either has a null sink "out" as the
/// configured default sink, at 48 kHz, and answers libpulse clients on `serverAddress`.
public final class PrivateSoundServer: @unchecked Sendable {
    public enum Kind: String, CaseIterable, Sendable, CustomStringConvertible {
        case pulseAudio, pipeWire
        public var description: String { rawValue }

        /// Both, or PipeWire alone when `SCENESOUND_SOUND_ROOT` names a chroot to start it from
        /// (`scripts/check-newer-desktops check-pipewire`: PipeWire 1.4 and WirePlumber 0.5 of
        /// Debian 13): PulseAudio would be this machine's all the same, already run by `make test`.
        public static var allCases: [Kind] { soundRoot == nil ? [.pulseAudio, .pipeWire] : [.pipeWire] }
    }

    /// The chroot scripts/testenv/pipewire-start starts PipeWire in (`SCENESOUND_SOUND_ROOT`),
    /// nil for this machine's own. The clients (the daemon, the tests, pactl, paplay) stay here.
    public static let soundRoot: String? = {
        guard let root = ProcessInfo.processInfo.environment["SCENESOUND_SOUND_ROOT"], !root.isEmpty, root != "/" else { return nil }
        return root
    }()

    public static let sinkName = "out"
    public let kind: Kind
    public let directory: URL
    private var pids: [pid_t] = []
    private let scripts: URL

    /// Starts the server; returns once it answers and "out" is its default sink.
    public init(_ kind: Kind) throws {
        self.kind = kind
        var template = Array("/tmp/sss-\(kind == .pulseAudio ? "pa" : "pw")-XXXXXX".utf8CString)
        guard let path = mkdtemp(&template) else { throw ToolFailure(command: "mkdtemp", status: errno, output: "") }
        directory = URL(fileURLWithPath: String(cString: path), isDirectory: true)
        scripts = Self.repositoryRoot().appendingPathComponent("scripts/testenv")
        try start()
    }

    deinit { stop() }

    /// libpulse's server string; the same across restarts.
    public var serverAddress: String { "unix:\(directory.path)/pulse/native" }

    /// For clients (paplay, pactl, mpv): this server and nothing of the caller's session.
    public var clientEnvironment: [String: String] {
        ["PULSE_SERVER": serverAddress, "PULSE_COOKIE": directory.path + "/cookie"]
    }

    public var isRunning: Bool { pids.contains(where: Self.isAlive) }
    /// Every process of the server runs (none crashed).
    public var everyProcessRuns: Bool { !pids.isEmpty && pids.allSatisfy(Self.isAlive) }

    /// Whether the process runs: not gone and not a zombie (a server that crashed stays one
    /// until reaped, and `kill(pid, 0)` still succeeds on it).
    static func isAlive(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let afterName = stat.range(of: ") ", options: .backwards) else { return false }
        let state = stat[afterName.upperBound...].prefix(1)
        return state != "Z" && state != "X"
    }

    public func start() throws {
        let output: String
        switch kind {
        case .pulseAudio:
            output = try runTool(scripts.appendingPathComponent("pulse-start").path, ["--desktop", directory.path, "15"], display: nil)
        case .pipeWire:
            output = try runTool(scripts.appendingPathComponent("pipewire-start").path, [directory.path, "20"], display: nil)
        }
        pids = output.split(whereSeparator: \.isWhitespace).compactMap { pid_t($0) }
        guard !pids.isEmpty else { throw ToolFailure(command: "\(kind) start", status: 0, output: "no PID printed: \(output)") }
    }

    /// Stops every process of the server by PID. Idempotent.
    public func stop() {
        guard !pids.isEmpty else { return }
        let script = kind == .pulseAudio ? "pulse-stop" : "pipewire-stop"
        _ = runToolStatus(scripts.appendingPathComponent(script).path, pids.map(String.init), display: nil)
        pids = []
    }

    /// Holds every process of the server still for `seconds` (SIGSTOP, then SIGCONT): a busy
    /// machine's worst case for its clients — requests and recordings late at once — and its
    /// sinks catch up after (a null sink renders the time it missed at once).
    public func freeze(seconds: Double) {
        for pid in pids { kill(pid, SIGSTOP) }
        usleep(useconds_t(seconds * 1_000_000))
        for pid in pids { kill(pid, SIGCONT) }
    }

    /// Kills every process of the server at once (SIGKILL), as a crash would; `start()` brings
    /// it back in the same directory.
    public func kill9() {
        for pid in pids { kill(pid, SIGKILL) }
        pids = []
    }

    /// Stops WirePlumber and starts it again, as a package upgrade or `systemctl --user restart
    /// wireplumber` does (PipeWire only): its objects, the `default` metadata among them, go and
    /// come again. Returns once the new one has made the default sink.
    public func restartWirePlumber() throws {
        let index = try wirePlumberIndex("restart WirePlumber")
        let output = try runTool(scripts.appendingPathComponent("pipewire-start").path,
                                 ["--restart-wireplumber", String(pids[index]), directory.path, "20"], display: nil)
        guard let pid = pid_t(output.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw ToolFailure(command: "restart WirePlumber", status: 0, output: "no PID printed: \(output)")
        }
        pids[index] = pid
    }

    private func wirePlumberIndex(_ purpose: String) throws -> Int {
        guard kind == .pipeWire, let index = pids.firstIndex(where: { pid in
            Self.processName(pid)?.hasPrefix("wireplumber") == true
        }) else { throw ToolFailure(command: purpose, status: 0, output: "no WirePlumber running: \(serversAndLog())") }
        return index
    }

    /// Leaves the `default` metadata as a client that goes while its binding of it awaits
    /// WirePlumber's answer leaves it (PipeWire only): module-metadata never takes that binding
    /// off its count of waiting ones (up to 1.4 and upstream now), so from then on every change
    /// reaches only bindings made after it, and every older reader — pipewire-pulse's copy for
    /// each of its clients, a daemon's node — misses it. Made as it happens: WirePlumber stopped,
    /// `pw-metadata` bound and killed while it waits, WirePlumber resumed.
    public func leaveMetadataBindingsDeaf() throws {
        try Self.leaveMetadataBindingsDeaf(wirePlumber: pids[try wirePlumberIndex("deafen the metadata's bindings")],
                                           pipeWireSocketPath: pipeWireSocketPath)
    }

    /// As `leaveMetadataBindingsDeaf()`, for a PipeWire started otherwise: its WirePlumber's PID
    /// and PipeWire's core socket.
    public static func leaveMetadataBindingsDeaf(wirePlumber: pid_t, pipeWireSocketPath: String) throws {
        kill(wirePlumber, SIGSTOP)
        defer { kill(wirePlumber, SIGCONT) }
        let (status, _, errors) = runToolStatus("/usr/bin/timeout", ["2", "/usr/bin/pw-metadata", "-n", "default"], display: nil,
                                                environment: ["PIPEWIRE_REMOTE": pipeWireSocketPath])
        guard status == 124 else {
            throw ToolFailure(command: "pw-metadata with WirePlumber stopped", status: status, output: "it should have waited: \(errors)")
        }
    }

    /// The kernel's name of process `pid` (its comm), while it runs.
    static func processName(_ pid: pid_t) -> String? {
        (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The server's process named `name` (`pulseaudio`, `pipewire`, `wireplumber`, …): its main
    /// thread's ID too.
    public func processID(named name: String) -> pid_t? { pids.first { Self.processName($0) == name } }

    /// Every thread of the server's process named `name`.
    public func threads(ofProcessNamed name: String) -> [pid_t] {
        guard let pid = processID(named: name) else { return [] }
        return ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []).compactMap { pid_t($0) }
    }

    /// PipeWire's core socket (PipeWire only).
    public var pipeWireSocketPath: String { directory.appendingPathComponent("pipewire-0").path }

    /// Stops and removes its directory.
    public func tearDown() {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Runs pactl against this server; its stdout.
    @discardableResult
    public func pactl(_ arguments: [String]) throws -> String {
        do {
            return try runTool("/usr/bin/pactl", ["--server=\(serverAddress)"] + arguments, display: nil, environment: clientEnvironment)
        } catch let failure as ToolFailure {
            // A refused or dropped connection says little on its own: whether the server's
            // processes still run, and what each last logged, say who ended it.
            throw ToolFailure(command: failure.command, status: failure.status, output: failure.output + "\n" + serversAndLog())
        }
    }

    /// Each of the server's processes, running or gone, and the last lines of each one's log.
    public func serversAndLog(lines: Int = 20) -> String {
        let processes = pids.map { pid -> String in
            let name = Self.processName(pid)
            return "\(name ?? "?") \(pid) \(Self.isAlive(pid) ? "running" : "gone")"
        }
        let logNames = kind == .pulseAudio ? ["pulseaudio.log"] : ["pipewire.log", "wireplumber.log", "pipewire-pulse.log"]
        let logs = logNames.map { name in
            let text = (try? String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)) ?? ""
            return "\(name) ends:\n" + text.split(separator: "\n", omittingEmptySubsequences: false).suffix(lines).joined(separator: "\n")
        }
        return "server processes: \(processes.joined(separator: ", "))\n" + logs.joined(separator: "\n")
    }

    /// Runs pw-link against this server (PipeWire only); its stdout.
    @discardableResult
    public func pwLink(_ arguments: [String]) throws -> String {
        try pipeWireTool("pw-link", arguments)
    }

    /// Runs one of PipeWire's own tools (pw-link, pw-dump, pw-metadata) against this server;
    /// its stdout. With `soundRoot` set, the chroot's, of the server's own version: Debian 12's
    /// pw-dump (0.3.65) writes invalid JSON for the parameters PipeWire 1.x added (an empty key
    /// where 1.4's Tag parameter is). The checks' tools only: the daemon and the apps stay here.
    @discardableResult
    public func pipeWireTool(_ name: String, _ arguments: [String]) throws -> String {
        let environment = ["PIPEWIRE_REMOTE": pipeWireSocketPath]
        guard let root = Self.soundRoot else { return try runTool("/usr/bin/\(name)", arguments, display: nil, environment: environment) }
        return try runTool("/usr/sbin/chroot", [root, "/usr/bin/\(name)"] + arguments, display: nil, environment: environment)
    }

    /// Every link from an output port to an input port, by port name ("node:port"), as
    /// `pw-link --links` lists them (PipeWire only).
    public func pipeWireLinks() throws -> [(output: String, input: String)] {
        var links: [(String, String)] = []
        var port: String?
        for line in try pwLink(["--links"]).split(separator: "\n") {
            if line.hasPrefix("  |-> "), let port { links.append((port, String(line.dropFirst(6)))) }
            else if !line.hasPrefix("  ") { port = String(line) }
        }
        return links
    }

    /// Every object of the graph as `pw-dump` writes it (PipeWire only).
    private func pipeWireObjects() throws -> [[String: Any]] {
        let text = try pipeWireTool("pw-dump", [])
        return (try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]]) ?? []
    }

    /// For a failure's message: every node by name with its state (and volume), and every
    /// link between ports by name with its state, from `pw-dump` (PipeWire only).
    public func pipeWireGraphText() -> String {
        guard let objects = try? pipeWireObjects() else { return "pw-dump failed" }
        func info(_ object: [String: Any]) -> [String: Any] { object["info"] as? [String: Any] ?? [:] }
        func props(_ object: [String: Any]) -> [String: Any] { info(object)["props"] as? [String: Any] ?? [:] }
        var nodeNames: [Int: String] = [:], portNames: [Int: String] = [:]
        var lines: [String] = []
        for object in objects {
            guard let id = object["id"] as? Int else { continue }
            switch object["type"] as? String {
            case "PipeWire:Interface:Node":
                nodeNames[id] = props(object)["node.name"] as? String ?? "#\(id)"
                // A sink's volume too: a sink at volume 0 is as silent as one never linked.
                let volume = ((info(object)["params"] as? [String: Any])?["Props"] as? [[String: Any]])?
                    .first { $0["channelVolumes"] != nil }.map { " volumes \($0["channelVolumes"]!) mute \($0["mute"] ?? "?")" } ?? ""
                lines.append("node \(nodeNames[id]!) (\(id)): \(info(object)["state"] ?? "?")\(volume)")
            case "PipeWire:Interface:Port": portNames[id] = props(object)["port.name"] as? String ?? "#\(id)"
            default: break
            }
        }
        for object in objects where object["type"] as? String == "PipeWire:Interface:Link" {
            let link = info(object)
            func end(_ side: String) -> String {
                let node = (link["\(side)-node-id"] as? Int).flatMap { nodeNames[$0] } ?? "?"
                return node + ":" + ((link["\(side)-port-id"] as? Int).flatMap { portNames[$0] } ?? "?")
            }
            lines.append("link \(end("output")) -> \(end("input")): \(link["state"] ?? "?")\((link["error"] as? String).map { " (\($0))" } ?? "")")
        }
        return lines.joined(separator: "\n")
    }

    /// The properties of the node of that `node.name`, as `pw-dump` shows them (PipeWire only).
    public func pipeWireNodeProperties(named name: String) throws -> [String: Any]? {
        for object in try pipeWireObjects() where object["type"] as? String == "PipeWire:Interface:Node" {
            let properties = (object["info"] as? [String: Any])?["props"] as? [String: Any]
            if properties?["node.name"] as? String == name { return properties }
        }
        return nil
    }

    /// `pactl -f json list WHAT` (sinks, sink-inputs, modules, …), parsed.
    public func list(_ what: String) throws -> [[String: Any]] {
        let text = try pactl(["-f", "json", "list", what])
        return (try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]]) ?? []
    }

    public func defaultSinkName() throws -> String {
        try pactl(["get-default-sink"]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The sink index of a name, nil if there is no such sink.
    public func sinkIndex(named name: String) throws -> Int? {
        try list("sinks").first { $0["name"] as? String == name }?["index"] as? Int
    }

    /// Starts a client program (paplay, mpv, …) against this server.
    public func startClient(_ executable: String, _ arguments: [String], display: String? = nil,
                            errorPath: String = "/dev/null") throws -> ChildProcess {
        try ChildProcess(executable, arguments, display: display, errorPath: errorPath, environment: clientEnvironment)
    }

    /// The contents of the server's remembered stream routes, for "nothing remembered" checks:
    /// WirePlumber's restore-stream state file on PipeWire. (PulseAudio keeps them in a
    /// binary database; ask it through libpulse's stream-restore extension instead.)
    public var wirePlumberStreamState: String {
        (try? String(contentsOf: directory.appendingPathComponent("state/wireplumber/restore-stream"), encoding: .utf8)) ?? ""
    }

    static func repositoryRoot(from file: String = #filePath) -> URL {
        var directory = URL(fileURLWithPath: file).deletingLastPathComponent()
        while directory.path != "/" {
            if FileManager.default.fileExists(atPath: directory.appendingPathComponent("scripts/testenv/pulse-start").path) {
                return directory
            }
            directory = directory.deletingLastPathComponent()
        }
        fatalError("scripts/testenv not found above \(file)")
    }
}
