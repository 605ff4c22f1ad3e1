import Foundation
import Testing
import SceneSoundDSP
import SceneSoundProtocol
import SceneSoundTestSupport

/// A private sound server with a null sink "out" — PulseAudio, or PipeWire with WirePlumber
/// and pipewire-pulse — started through scripts/testenv and stopped by PID, with `parec`
/// recording what reaches the sink.
final class PrivatePulse: @unchecked Sendable {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    let kind: PrivateSoundServer.Kind
    let directory: String
    private(set) var pids: [Int32] = []

    init(_ kind: PrivateSoundServer.Kind = .pulseAudio) throws {
        self.kind = kind
        // Short path: the socket must fit in sun_path.
        directory = "/tmp/ssp-\(UUID().uuidString.prefix(8))"
        try start()
    }

    private var script: (start: String, stop: String) {
        kind == .pulseAudio ? ("pulse-start", "pulse-stop") : ("pipewire-start", "pipewire-stop")
    }

    func start() throws {
        // posix_spawn through the test support, not Foundation's Process: pipewire-start leaves
        // four servers running behind it, and Process's wait for the script then never returned.
        let result = try runTool(Self.repository.appendingPathComponent("scripts/testenv/\(script.start)").path,
                                 [directory, "15"], display: nil)
        pids = result.split(whereSeparator: \.isWhitespace).compactMap { Int32($0) }
        guard !pids.isEmpty else { throw TestFailure("\(script.start) printed no PID: \(result)") }
    }

    /// Kills the server (all of its processes) as a crash would.
    func kill9() {
        for pid in pids { kill(pid, SIGKILL) }
        // Started by a script that has exited, so nobody may reap them: a zombie is dead.
        try? waitUntil(timeoutSeconds: 5, "the sound server to die") { !pids.contains(where: Self.isAlive) }
    }

    static func isAlive(_ pid: Int32) -> Bool {
        guard kill(pid, 0) == 0 else { return false }
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        return !stat[close...].hasPrefix(") Z")
    }

    func stop() {
        _ = runToolStatus(Self.repository.appendingPathComponent("scripts/testenv/\(script.stop)").path, pids.map(String.init),
                          display: nil)
    }

    /// `PrivateSoundServer.leaveMetadataBindingsDeaf()` (PipeWire only).
    func leaveMetadataBindingsDeaf() throws {
        guard let wirePlumber = pids.first(where: { pid in
            (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?.hasPrefix("wireplumber") == true
        }) else { throw TestFailure("no WirePlumber running") }
        try PrivateSoundServer.leaveMetadataBindingsDeaf(wirePlumber: wirePlumber, pipeWireSocketPath: directory + "/pipewire-0")
    }

    var environment: [String: String] {
        ["PULSE_SERVER": "unix:\(directory)/pulse/native", "PULSE_COOKIE": "\(directory)/cookie"]
    }

    /// Sets `process` up as `parec` on the null sink's monitor: raw float32le stereo at 48 kHz
    /// into `pipe`, in fragments of `latencyMilliseconds`; on PipeWire kept on that sink
    /// (`node.dont-reconnect`) when the default changes, as the app capture makes it do.
    static func configureMonitorCapture(_ process: Process, environment: [String: String], latencyMilliseconds: Int,
                                        into pipe: Pipe) {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/parec")
        process.arguments = ["-d", "out.monitor", "--property=node.dont-reconnect=true", "--format=float32le", "--channels=2", "--rate=48000", "--raw",
                             "--latency-msec=\(latencyMilliseconds)"]
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
    }

    /// Starts `parec` on the null sink's monitor; `finish` stops it and returns the samples.
    func record() throws -> Recorder { try Recorder(environment: environment) }

    final class Recorder: @unchecked Sendable {
        let process = Process()
        let pipe = Pipe()
        private var data = Data()
        private let lock = NSLock()

        init(environment: [String: String]) throws {
            PrivatePulse.configureMonitorCapture(process, environment: environment, latencyMilliseconds: 20, into: pipe)
            pipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
                let chunk = handle.availableData
                self?.lock.withLock { self?.data.append(chunk) }
            }
            try process.run()
        }

        var frameCount: Int { lock.withLock { data.count / 8 } }

        func finish() -> (left: [Float], right: [Float]) {
            // SIGKILL: children of the test runner inherit a blocked SIGTERM. parec writes raw
            // samples straight to the pipe, so nothing is lost.
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            pipe.fileHandleForReading.readabilityHandler = nil
            let bytes = lock.withLock { data }
            var left: [Float] = [], right: [Float] = []
            bytes.withUnsafeBytes { raw in
                for i in 0..<(raw.count / 8) {
                    left.append(raw.loadUnaligned(fromByteOffset: i * 8, as: Float.self))
                    right.append(raw.loadUnaligned(fromByteOffset: i * 8 + 4, as: Float.self))
                }
            }
            return (left, right)
        }
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

func run(_ executable: String, _ arguments: [String]) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let out = Pipe()
    process.standardOutput = out
    try process.run()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw TestFailure("\(executable) failed (\(process.terminationStatus))") }
    return String(decoding: data, as: UTF8.self)
}

/// The audible part of a recording (from the first to the last sample above -60 dBFS).
func audible(_ recording: (left: [Float], right: [Float])) -> (left: [Float], right: [Float]) {
    let threshold: Float = 0.001
    guard let first = recording.left.indices.first(where: { abs(recording.left[$0]) > threshold || abs(recording.right[$0]) > threshold }),
          let last = recording.left.indices.last(where: { abs(recording.left[$0]) > threshold || abs(recording.right[$0]) > threshold })
    else { return ([], []) }
    return (Array(recording.left[first...last]), Array(recording.right[first...last]))
}

/// Level of one frequency in a signal, in dB re full-scale amplitude.
func levelDecibels(_ x: [Float], frequencyHz: Double, sampleRateHz: Double = 48000) -> Double {
    20 * log10(max(ToneAnalysis.amplitude(of: x, frequencyHz: frequencyHz, sampleRateHz: sampleRateHz), 1e-12))
}

@Suite(.serialized) struct PulseEndToEndTests {
    static func noise(seconds: Double, seed: UInt64) -> [Int16] {
        var generator = WhiteNoise(seed: seed)
        return (0..<Int(48000 * seconds)).map { _ in Int16(generator.next(amplitude: 12000)) }
    }

    static func sine(_ frequency: Double, seconds: Double) -> [Int16] {
        (0..<Int(48000 * seconds)).map { Int16(sin(2 * Double.pi * frequency * Double($0) / 48000) * 12000) }
    }

    @Test(arguments: PrivateSoundServer.Kind.allCases)
    func noiseAtPlusNinetyArrivesFromTheLeftWithTheRenderersCues(kind: PrivateSoundServer.Kind) throws {
        let pulse = try PrivatePulse(kind)
        // The set as measured, at its own distance (no equalization, no near field): what
        // arrives is compared with KEMAR's own cues, so the transport alone is judged.
        let daemon = try Daemon(output: "pulse", extraArguments: ["--hrtf-eq", "none"], environment: pulse.environment)
        let client = try RawClient(socketPath: daemon.socketPath)
        #expect(try client.request(.scenePlace(ScenePlace(sceneID: "left", position: ScenePosition(azimuthDegrees: 90, elevationDegrees: 0, distanceMetres: 1.4)))) == .ok)
        let recorder = try pulse.record()
        try waitUntil(timeoutSeconds: 5, "parec to start") { recorder.frameCount > 0 }
        let stream = try client.openStream(format: AudioFormat(sampleFormat: .s16le, rateHz: 48000, channels: 1), scene: "left")
        try client.write(stream: stream, pcm: LosslessStreamTests.bytes(Self.noise(seconds: 1.5, seed: 1)), bytesPerFrame: 2)
        #expect(try client.request(.streamDrain(StreamReference(streamID: stream))) == .ok)
        let heard = audible(recorder.finish())
        #expect(heard.left.count > 48000)
        let cues = CueAnalysis.cues(left: heard.left, right: heard.right, sampleRateHz: 48000)
        print("through \(kind), scene at +90°: ITD \(cues.itdMicroseconds) µs, ILD \(cues.interauralLevelDifferenceDecibels) dB")
        // KEMAR at +90°: 706 µs, 11.8 dB (docs/ARCHITECTURE.md), within the renderer's tolerances.
        #expect(abs(cues.itdMicroseconds - 706) <= 30)
        #expect(abs(cues.interauralLevelDifferenceDecibels - 11.8) <= 1.5)
        let output = try HeadTrackingTests.statusDocument(client).output
        #expect(output.kind == "pulse")
        #expect(output.connected)
        // libpulse's mainloop thread renders, and asked for real-time scheduling on its first
        // block: as root (CI) it runs SCHED_FIFO, and status says so.
        let scheduling = output.renderThreadScheduling
        print("PulseAudio output render thread: \(scheduling ?? "unknown")")
        if geteuid() == 0 { #expect(scheduling == "SCHED_FIFO 20") } else { #expect(scheduling != nil) }
    }

    @Test(arguments: PrivateSoundServer.Kind.allCases)
    func twoClientsAtPlusAndMinusSixtyAreBothHeardOnTheirSides(kind: PrivateSoundServer.Kind) throws {
        let pulse = try PrivatePulse(kind)
        let daemon = try Daemon(output: "pulse", environment: pulse.environment)
        let a = try RawClient(socketPath: daemon.socketPath, name: "a")
        let b = try RawClient(socketPath: daemon.socketPath, name: "b")
        _ = try a.request(.scenePlace(ScenePlace(sceneID: "west", position: ScenePosition(azimuthDegrees: 60, elevationDegrees: 0, distanceMetres: 1))))
        _ = try b.request(.scenePlace(ScenePlace(sceneID: "east", position: ScenePosition(azimuthDegrees: -60, elevationDegrees: 0, distanceMetres: 1))))
        let recorder = try pulse.record()
        try waitUntil(timeoutSeconds: 5, "parec to start") { recorder.frameCount > 0 }
        let format = AudioFormat(sampleFormat: .s16le, rateHz: 48000, channels: 1)
        let sa = try a.openStream(format: format, scene: "west"), sb = try b.openStream(format: format, scene: "east")
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            try? b.write(stream: sb, pcm: LosslessStreamTests.bytes(Self.sine(1500, seconds: 1.5)), bytesPerFrame: 2)
            _ = try? b.request(.streamDrain(StreamReference(streamID: sb)))
            done.signal()
        }
        try a.write(stream: sa, pcm: LosslessStreamTests.bytes(Self.sine(500, seconds: 1.5)), bytesPerFrame: 2)
        #expect(try a.request(.streamDrain(StreamReference(streamID: sa))) == .ok)
        #expect(done.wait(timeout: .now() + 10) == .success)
        let heard = audible(recorder.finish())
        let westILD = levelDecibels(heard.left, frequencyHz: 500) - levelDecibels(heard.right, frequencyHz: 500)
        let eastILD = levelDecibels(heard.left, frequencyHz: 1500) - levelDecibels(heard.right, frequencyHz: 1500)
        print("two clients: 500 Hz (scene at +60°) left−right \(westILD) dB, 1500 Hz (scene at −60°) \(eastILD) dB")
        #expect(westILD > 3)
        #expect(eastILD < -3)
    }

    @Test(arguments: PrivateSoundServer.Kind.allCases)
    func aSoundServerRestartDoesNotStopTheStream(kind: PrivateSoundServer.Kind) throws {
        let pulse = try PrivatePulse(kind)
        let daemon = try Daemon(output: "pulse", environment: pulse.environment)
        let client = try RawClient(socketPath: daemon.socketPath)
        let stream = try client.openStream(format: AudioFormat(sampleFormat: .s16le, rateHz: 48000, channels: 1), mode: .off)
        let tone = Self.sine(1000, seconds: 6)
        let writer = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var outcome: Result<Message, Error> = .failure(TestFailure("not run"))
        Thread.detachNewThread {
            outcome = Result {
                try client.write(stream: stream, pcm: LosslessStreamTests.bytes(tone), bytesPerFrame: 2)
                return try client.request(.streamDrain(StreamReference(streamID: stream)), timeoutSeconds: 30)
            }
            writer.signal()
        }
        // Let it play a moment (0.7 s rendered into PulseAudio), then kill PulseAudio and bring up
        // a new one in its place.
        try waitForRenderedAudio(try RawClient(socketPath: daemon.socketPath), seconds: 0.7)
        pulse.kill9()
        try pulse.start()
        let recorder = try pulse.record()
        // The server reconnects by itself and the tone goes on into the new server.
        try waitUntil(timeoutSeconds: 10, "the tone on the restarted PulseAudio") {
            recorder.frameCount > 9600
        }
        // Half a second more recorded from the new server.
        let recorded = recorder.frameCount
        try waitUntil(timeoutSeconds: 10, "0.5 s more recorded") { recorder.frameCount >= recorded + 24000 }
        let heard = recorder.finish()
        let tail = Array(heard.left.suffix(9600))
        let level = levelDecibels(tail, frequencyHz: 1000)
        print("after the \(kind) restart: 1 kHz at \(level) dB in the last 0.2 s recorded")
        #expect(level > -40)
        #expect(writer.wait(timeout: .now() + 30) == .success)
        #expect((try? outcome.get()) == .ok, "the client saw an error: \(outcome)")
        #expect(daemon.log.contains("reconnect") || daemon.log.contains("disconnected"))
    }
}
