import Foundation
import Testing
import SceneSoundDSP
import SceneSoundProtocol
import SceneSoundTestSupport

/// Silent when silent: with nothing sounding, the daemon (and, with `--capture-apps`, its
/// capture guard) costs nothing and lets the sink suspend by the server's own suspend-on-idle,
/// on PulseAudio (module-suspend-on-idle) and PipeWire (WirePlumber suspends idle nodes), with
/// and without the capture, and wakes for the next sound.
///
/// One idle half minute for every setup at once, each on its own private server, so that the
/// suite takes under a minute rather than three. The CPU time is read to the nanosecond (the
/// process's CPU clock), so half a minute resolves far below the 0.1 % bar (30 ms).
@Suite(.serialized) struct IdleTests {
    static let windowSeconds = 30.0

    /// Context switches of every thread (voluntary + nonvoluntary) and the CPU time of a
    /// process (all its threads, ended ones included: its CPU-time clock).
    static func costs(_ pid: Int32) -> (switches: Int, cpuSeconds: Double) {
        var switches = 0
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        for task in tasks {
            let status = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8)) ?? ""
            for line in status.split(separator: "\n") where line.contains("ctxt_switches:") {
                switches += Int(line.split(separator: "\t").last?.trimmingCharacters(in: .whitespaces) ?? "") ?? 0
            }
        }
        var clock = clockid_t()
        var now = timespec()
        guard clock_getcpuclockid(pid, &clock) == 0, clock_gettime(clock, &now) == 0 else { return (switches, .nan) }
        return (switches, Double(now.tv_sec) + Double(now.tv_nsec) * 1e-9)
    }

    /// /proc/PID/stat's fields from the state (field 3) on.
    static func statFields(_ pid: Int32) -> [Substring] {
        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        return stat[(stat.lastIndex(of: ")").map { stat.index($0, offsetBy: 2) } ?? stat.startIndex)...].split(separator: " ")
    }

    /// The daemon's capture guard: its child named scenesound-capture-guard.
    static func guardProcess(of daemon: Int32) -> Int32? {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { Int32($0) }.first { pid in
            let comm = (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)) ?? ""
            let fields = statFields(pid)
            return comm.hasPrefix("scenesound-capt") && fields.count > 1 && Int32(fields[1]) == daemon
        }
    }

    /// Each sink's state by name (`pactl list sinks short`).
    static func sinkStates(_ server: PrivatePulse) -> [String: String] {
        guard let text = try? run("/usr/bin/env", server.environment.map { "\($0.key)=\($0.value)" } + ["pactl", "list", "sinks", "short"])
        else { return [:] }
        var states: [String: String] = [:]
        for line in text.split(separator: "\n") {
            let columns: [Substring] = line.split(separator: "\t")
            if columns.count > 1, let state = columns.last { states[String(columns[1])] = String(state) }
        }
        return states
    }

    static func sinkState(_ server: PrivatePulse) -> String? { sinkStates(server)["out"] }

    /// How many sink inputs of the pausing app (mpv's `--audio-client-name`) the server has.
    static func pausedAppStreamCount(_ server: PrivatePulse) -> Int {
        let text = (try? run("/usr/bin/env", server.environment.map { "\($0.key)=\($0.value)" } + ["pactl", "list", "sink-inputs"])) ?? ""
        return text.components(separatedBy: "application.name = \"pausing-app\"").count - 1
    }

    struct Setup: CustomStringConvertible, Sendable {
        let kind: PrivateSoundServer.Kind
        let output: String
        let captureApps: Bool
        var description: String { "\(kind) --output \(output)\(captureApps ? " --capture-apps" : "")" }
    }

    /// Each server's default output, each with and without the capture, and the pulse output
    /// through pipewire-pulse (the fallback there).
    static let setups: [Setup] = [
        Setup(kind: .pulseAudio, output: "pulse", captureApps: false),
        Setup(kind: .pipeWire, output: "pipewire", captureApps: false),
        Setup(kind: .pulseAudio, output: "pulse", captureApps: true),
        Setup(kind: .pipeWire, output: "pipewire", captureApps: true),
        Setup(kind: .pipeWire, output: "pulse", captureApps: false),
    ]

    struct Figures: Sendable {
        var cpuPercent = 0.0, wakeUpsPerSecond = 0.0
        var guardCPUPercent: Double?, guardWakeUpsPerSecond: Double?
        var sinkStates: [String: String] = [:]
        /// The paused app's streams at the window's end: with the capture, still there (one).
        var pausedAppStreams = 0
        var seconds = 0.0
        /// From starting the server to the idle window.
        var settleSeconds = 0.0
    }

    /// One setup: started, a sound (and with the capture, an app that plays and then pauses,
    /// its stream kept), rest, the idle window, then a sound that must wake it.
    final class Rig: @unchecked Sendable {
        let setup: Setup
        let server: PrivatePulse
        let configHome: String
        let daemon: Daemon
        let client: RawClient
        let stream: UInt32
        var app: Process?
        let tone = LosslessStreamTests.bytes((0..<9600).map { Int16(8000 * sin(Double($0) * 2 * .pi * 440 / 48000)) })

        init(_ setup: Setup) throws {
            self.setup = setup
            server = try PrivatePulse(setup.kind)
            if setup.kind == .pulseAudio {
                _ = try run("/usr/bin/env", server.environment.map { "\($0.key)=\($0.value)" }
                            + ["pactl", "load-module", "module-suspend-on-idle", "timeout=2"])
            }
            configHome = server.directory + "-config"
            daemon = try Daemon(output: setup.output, extraArguments: setup.captureApps ? ["--capture-apps"] : [],
                                environment: server.environment.merging(["XDG_CONFIG_HOME": configHome]) { $1 })
            client = try RawClient(socketPath: daemon.socketPath)
            stream = try client.openStream(format: AudioFormat(sampleFormat: .s16le, rateHz: 48000, channels: 1))
        }

        deinit {
            if let app { kill(app.processIdentifier, SIGKILL) }
            daemon.stop()
            server.stop()
            try? FileManager.default.removeItem(atPath: configHome)
        }

        func count(_ line: String) -> Int { daemon.log.components(separatedBy: line).count - 1 }
        func rests() -> Int { count("nothing sounding: the output and the tick rest") }
        func captureRests() -> Int { count("app capture: nothing plays on the capture sink: resting") }

        /// mpv playing `file` into the default sink (ours while capturing), pausable over its IPC socket.
        func startApp(_ file: String) throws {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/mpv")
            process.arguments = ["--no-config", "--no-video", "--ao=pulse", "--input-ipc-server=\(configHome)/mpv.sock",
                                 "--audio-client-name=pausing-app", file]
            process.environment = ProcessInfo.processInfo.environment.merging(server.environment) { $1 }
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            app = process
        }


        /// Up to the start of the idle window.
        func settle(noise: String) throws {
            let capturesBefore = count("capturing ")
            if setup.captureApps {
                try FileManager.default.createDirectory(atPath: configHome, withIntermediateDirectories: true)
                try waitUntil(timeoutSeconds: 20, "the capture to start") { count("app capture: taking other apps' streams") >= 1 }
                try startApp(noise)
                try waitUntil(timeoutSeconds: 10, "the app to be captured") { count("capturing ") > capturesBefore }
                try waitUntil(timeoutSeconds: 10, "the app to be heard") { Self.sinkState(server) == "RUNNING" }
                // Paused, its stream kept, on both servers: nothing of ours may keep recording it.
                try setMPVPaused(true, ipcSocketPath: "\(configHome)/mpv.sock")
            }
            try client.write(stream: stream, pcm: tone, bytesPerFrame: 2)
            do {
                try waitUntil(timeoutSeconds: 15, "the daemon to rest") { rests() >= 1 }
            } catch {
                // What kept it awake: the reasons it gave for waking, the last first.
                let wakes = daemon.log.split(separator: "\n").filter { $0.contains("the output wakes") }.suffix(5)
                // And what sounds: the streams and captured apps as status shows them.
                let status = try? HeadTrackingTests.statusDocument(client)
                let encoder = JSONEncoder()
                let streams = (try? encoder.encode(status?.streams)).map { String(decoding: $0, as: UTF8.self) } ?? "?"
                let apps = (try? encoder.encode(status?.apps)).map { String(decoding: $0, as: UTF8.self) } ?? "?"
                throw TestFailure("\(error); its last wake-ups: \(Array(wakes.reversed())); streams \(streams); apps \(apps); "
                                  + "the log's end: \(daemon.log.suffix(1500))")
            }
            // Not required here: a capture that does not rest shows in the window's figures.
            if setup.captureApps { try? waitUntil(timeoutSeconds: 15, "the capture to rest") { captureRests() >= 1 } }
            try? waitUntil(timeoutSeconds: 20, "the sink to suspend") { Self.sinkState(server) == "SUSPENDED" }
            settledAt = Date()
        }

        /// When the idle window could start, for the suite's timing.
        var settledAt: Date?
        let createdAt = Date()

        static func sinkState(_ server: PrivatePulse) -> String? { IdleTests.sinkState(server) }

        /// The idle window: the daemon's (and guard's) costs over it, the sinks at its end.
        func measure() throws -> Figures {
            let pid = daemon.process.processIdentifier
            let guardPID = setup.captureApps ? IdleTests.guardProcess(of: pid) : nil
            if setup.captureApps, guardPID == nil { throw TestFailure("\(setup): no capture guard found") }
            let before = IdleTests.costs(pid), guardBefore = guardPID.map(IdleTests.costs)
            let started = Date()
            Thread.sleep(forTimeInterval: IdleTests.windowSeconds)
            let after = IdleTests.costs(pid), guardAfter = guardPID.map(IdleTests.costs)
            var figures = Figures()
            figures.seconds = Date().timeIntervalSince(started)
            figures.settleSeconds = (settledAt ?? started).timeIntervalSince(createdAt)
            func percent(_ a: (switches: Int, cpuSeconds: Double), _ b: (switches: Int, cpuSeconds: Double)) -> Double {
                (b.cpuSeconds - a.cpuSeconds) / figures.seconds * 100
            }
            func rate(_ a: (switches: Int, cpuSeconds: Double), _ b: (switches: Int, cpuSeconds: Double)) -> Double {
                Double(b.switches - a.switches) / figures.seconds
            }
            figures.cpuPercent = percent(before, after)
            figures.wakeUpsPerSecond = rate(before, after)
            if let guardBefore, let guardAfter {
                figures.guardCPUPercent = percent(guardBefore, guardAfter)
                figures.guardWakeUpsPerSecond = rate(guardBefore, guardAfter)
            }
            figures.sinkStates = IdleTests.sinkStates(server)
            figures.pausedAppStreams = IdleTests.pausedAppStreamCount(server)
            return figures
        }

        /// The next sound wakes it: heard (the sink runs again), and it rests again after it.
        func wake() throws {
            let restsBefore = rests()
            try client.write(stream: stream, pcm: tone, bytesPerFrame: 2)
            try waitUntil(timeoutSeconds: 5, "the sink to run again") { Self.sinkState(server) == "RUNNING" }
            try waitUntil(timeoutSeconds: 10, "the daemon to rest again") { rests() > restsBefore }
        }
    }

    /// Stereo 16-bit white noise at 48 kHz, a quarter of full scale, as a WAV file.
    static func writeNoise(seconds: Double, to path: String) throws {
        var generator = WhiteNoise(seed: 3)
        let samples = (0..<Int(seconds * 48000) * 2).map { _ in Int16(generator.next(amplitude: 8000)) }
        try TestSignal.writeWAV(samples, to: URL(fileURLWithPath: path))
    }

    @Test func nothingSoundingCostsNothingAndTheSinkSuspends() throws {
        let noise = NSTemporaryDirectory() + "idle-noise-\(UUID().uuidString.prefix(8)).wav"
        defer { try? FileManager.default.removeItem(atPath: noise) }
        try Self.writeNoise(seconds: 30, to: noise)

        // Every setup on a thread of its own, at the same time.
        final class Outcomes: @unchecked Sendable {
            let lock = NSLock()
            var byIndex: [Int: Result<Figures, Error>] = [:]
        }
        let outcomes = Outcomes()
        // Threads of their own: concurrentPerform runs only as many at once as there are cores.
        let done = DispatchGroup()
        for index in Self.setups.indices {
            done.enter()
            Thread.detachNewThread {
                let outcome = Result<Figures, Error> {
                    let rig = try Rig(Self.setups[index])
                    try rig.settle(noise: noise)
                    let figures = try rig.measure()
                    try rig.wake()
                    return figures
                }
                outcomes.lock.withLock { outcomes.byIndex[index] = outcome }
                done.leave()
            }
        }
        done.wait()

        for (index, setup) in Self.setups.enumerated() {
            switch outcomes.byIndex[index]! {
            case .failure(let error):
                Issue.record("\(setup): \(error)")
            case .success(let figures):
                var line = "idle on \(setup) (set up and at rest in \(Int(figures.settleSeconds)) s), \(Int(figures.seconds)) s after resting: CPU \(String(format: "%.4f", figures.cpuPercent)) % of a core, \(String(format: "%.2f", figures.wakeUpsPerSecond)) wake-ups a second (all threads)"
                if let cpu = figures.guardCPUPercent, let wakeUps = figures.guardWakeUpsPerSecond {
                    line += "; capture guard \(String(format: "%.4f", cpu)) %, \(String(format: "%.2f", wakeUps)) wake-ups a second"
                }
                if setup.captureApps { line += "; the paused app's streams: \(figures.pausedAppStreams)" }
                line += "; sinks " + figures.sinkStates.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
                print(line)
                #expect(figures.cpuPercent <= 0.1, "\(setup): CPU \(figures.cpuPercent) % of a core")
                #expect(figures.wakeUpsPerSecond <= 2, "\(setup): \(figures.wakeUpsPerSecond) wake-ups a second")
                #expect(figures.sinkStates["out"] == "SUSPENDED", "\(setup): \(figures.sinkStates)")
                if setup.captureApps {
                    #expect((figures.guardCPUPercent ?? 1) <= 0.1, "\(setup): the guard's CPU \(figures.guardCPUPercent ?? -1) %")
                    #expect((figures.guardWakeUpsPerSecond ?? 99) <= 2, "\(setup): the guard's \(figures.guardWakeUpsPerSecond ?? -1) wake-ups a second")
                    #expect(figures.sinkStates["scenesound_capture"] == "SUSPENDED", "\(setup): \(figures.sinkStates)")
                    #expect(figures.pausedAppStreams == 1, "\(setup): the paused app has \(figures.pausedAppStreams) streams, not one")
                }
            }
        }
    }
}
