import Foundation
import SceneSoundDSP
import SceneSoundProtocol
import SceneSoundTestSupport
import Testing

/// Issue 29 end to end: the real daemon following the default sink on the real servers, and
/// what each sink records (parec of its monitor, with the sink's own channel map). The sinks are
/// OutputDeviceDaemonTests' null sinks carrying real devices' properties: hp (headphones), spk
/// (two speakers), s51 (5.1 speakers).
@Suite(.serialized) struct DeviceRenderingDaemonTests {
    /// What parec records from a sink's monitor: float32 at 48 kHz, `channels` interleaved in
    /// the order of `channelMap` (the sink's own: no remixing).
    final class Monitor: @unchecked Sendable {
        let process = Process()
        let pipe = Pipe()
        let channels: Int
        private var data = Data()
        private let lock = NSLock()

        init(_ server: PrivatePulse, sink: String, channelMap: [String] = ["front-left", "front-right"]) throws {
            channels = channelMap.count
            process.executableURL = URL(fileURLWithPath: "/usr/bin/parec")
            process.arguments = ["-d", "\(sink).monitor", "--format=float32le", "--channels=\(channels)",
                                 "--channel-map=\(channelMap.joined(separator: ","))", "--rate=48000", "--raw", "--latency-msec=20"]
            process.environment = ProcessInfo.processInfo.environment.merging(server.environment) { $1 }
            process.standardOutput = pipe
            process.standardError = FileHandle.nullDevice
            pipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
                let chunk = handle.availableData
                self?.lock.withLock { self?.data.append(chunk) }
            }
            try process.run()
            try waitUntil(timeoutSeconds: 5, "parec on \(sink) to record") { self.frameCount > 0 }
        }

        var frameCount: Int { lock.withLock { data.count / (4 * channels) } }

        /// Channel `c` of frames `range` (clamped to what is recorded).
        func channel(_ c: Int, _ range: Range<Int>? = nil) -> [Float] {
            let bytes = lock.withLock { data }
            let total = bytes.count / (4 * channels)
            let r = (range ?? 0..<total).clamped(to: 0..<total)
            return bytes.withUnsafeBytes { raw in
                r.map { raw.loadUnaligned(fromByteOffset: ($0 * channels + c) * 4, as: Float.self) }
            }
        }

        /// Waits until `frames` more frames have come.
        func waitFor(frames: Int, _ what: String) throws {
            let start = frameCount
            try waitUntil(timeoutSeconds: 10, "\(frames) frames of \(what)") { self.frameCount >= start + frames }
        }

        func stop() {
            // SIGKILL: children of the test runner inherit a blocked SIGTERM.
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            pipe.fileHandleForReading.readabilityHandler = nil
        }

        deinit { if process.isRunning { stop() } }
    }

    static func rms(_ x: [Float]) -> Double {
        x.isEmpty ? 0 : (x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(x.count)).squareRoot()
    }

    static func decibels(_ x: Double) -> Double { 20 * log10(max(x, 1e-12)) }

    /// The tangent law on speakers at ±30°, constant power: tan φ / tan 30° = (gL − gR) / (gL + gR)
    /// and gL² + gR² = 1; gL / gR in dB.
    static func tangentLawDifferenceDecibels(azimuthDegrees: Double) -> Double {
        let k = tan(azimuthDegrees * .pi / 180) / tan(30 * Double.pi / 180)
        return 20 * log10((1 + k) / (1 - k))
    }

    /// Plays `samples` (mono s16le, 48 kHz) on `client`'s stream in scene `scene` on a thread
    /// of its own; `wait()` returns when they are all written and drained.
    final class Player: @unchecked Sendable {
        private let done = DispatchSemaphore(value: 0)
        init(_ client: RawClient, scene: String, samples: [Int16]) throws {
            let stream = try client.openStream(format: AudioFormat(sampleFormat: .s16le, rateHz: 48000, channels: 1), scene: scene)
            let bytes = LosslessStreamTests.bytes(samples)
            Thread.detachNewThread { [done] in
                try? client.write(stream: stream, pcm: bytes, bytesPerFrame: 2)
                _ = try? client.request(.streamDrain(StreamReference(streamID: stream)), timeoutSeconds: 30)
                done.signal()
            }
        }
        func wait() { _ = done.wait(timeout: .now() + 60) }
    }

    static func cli(_ arguments: [String], _ daemon: Daemon) throws {
        let run = try CommandLineTests.runCLI(arguments + ["--socket", daemon.socketPath])
        guard run.status == 0 else { throw TestFailure("scenesound \(arguments.joined(separator: " ")): \(run.error)") }
    }

    /// On two speakers a source at 20° is panned by the tangent law with no time difference and
    /// turning the head changes nothing; on the headphones the same source has KEMAR's cues; on
    /// 5.1 speakers a source at 110° plays from the rear-left speaker alone.
    @Test(arguments: PrivateSoundServer.Kind.allCases)
    func eachSinkRecordsItsRendering(kind: PrivateSoundServer.Kind) throws {
        let server = try PrivatePulse(kind)
        defer { server.stop() }
        try OutputDeviceDaemonTests.loadSinks(server)
        try OutputDeviceDaemonTests.switchTo("spk", server)
        let daemon = try Daemon(output: "", environment: server.environment)
        defer { daemon.stop() }
        let seen = try OutputDeviceDaemonTests.waitForDevice(daemon, sink: "spk", reason: "form factor speaker")
        #expect(seen.status.rendering?.method == "speakers" && seen.status.rendering?.speakerLayout == "2.0")
        let client = try RawClient(socketPath: daemon.socketPath)
        #expect(try client.request(.scenePlace(ScenePlace(sceneID: "left", position: ScenePosition(azimuthDegrees: 20, elevationDegrees: 0, distanceMetres: 1)))) == .ok)

        // Noise at 20° for long enough to measure on the speakers, turn the head, measure
        // again, and move to the headphones.
        let speakers = try Monitor(server, sink: "spk")
        let player = try Player(client, scene: "left", samples: PulseEndToEndTests.noise(seconds: 9, seed: 29))
        try waitUntil(timeoutSeconds: 10, "the noise on the speakers") { Self.rms(speakers.channel(0, (speakers.frameCount - 4800)..<speakers.frameCount)) > 0.01 }
        try speakers.waitFor(frames: 48000, "noise on spk")
        let before = speakers.frameCount
        let straight = (speakers.channel(0, (before - 38400)..<before), speakers.channel(1, (before - 38400)..<before))

        try Self.cli(["head", "set", "--yaw", "45"], daemon)
        try waitUntil(timeoutSeconds: 5, "the status to show yaw 45") {
            abs((try OutputDeviceDaemonTests.status(daemon).head.yawDegrees) - 45) < 0.5
        }
        // What is recorded from now was rendered with the head turned (the output's latency is
        // well under the 0.2 s skipped).
        try speakers.waitFor(frames: 9600 + 38400, "noise on spk with the head turned")
        let turnedStart = speakers.frameCount - 38400
        let turned = (speakers.channel(0, turnedStart..<(turnedStart + 38400)), speakers.channel(1, turnedStart..<(turnedStart + 38400)))

        let law = Self.tangentLawDifferenceDecibels(azimuthDegrees: 20)
        let difference = CueAnalysis.ildDecibels(left: straight.0, right: straight.1)
        let lagSamples = CueAnalysis.itdSeconds(left: straight.0, right: straight.1, sampleRateHz: 48000) * 48000
        let levels = [Self.decibels(Self.rms(straight.0)), Self.decibels(Self.rms(straight.1))]
        let turnedLevels = [Self.decibels(Self.rms(turned.0)), Self.decibels(Self.rms(turned.1))]
        print("\(kind) spk, noise at 20°: L−R \(difference) dB (tangent law \(law) dB), lag \(lagSamples) samples; L/R \(levels) dB, head at yaw 45 \(turnedLevels) dB")
        #expect(abs(difference - law) <= 0.5, "the tangent law on ±30° at constant power")
        #expect(abs(lagSamples) <= 1, "no ITD on speakers")
        for c in 0..<2 { #expect(abs(turnedLevels[c] - levels[c]) <= 0.2, "the head turned changes nothing on speakers (channel \(c))") }
        speakers.stop()

        // The same source on the headphones: KEMAR's cues.
        try Self.cli(["head", "set", "--yaw", "0"], daemon)
        try waitUntil(timeoutSeconds: 5, "the status to show yaw 0") {
            abs(try OutputDeviceDaemonTests.status(daemon).head.yawDegrees) < 0.5
        }
        let phones = try Monitor(server, sink: "hp")
        try OutputDeviceDaemonTests.switchTo("hp", server)
        try OutputDeviceDaemonTests.waitForDevice(daemon, sink: "hp", reason: "form factor headphone")
        try phones.waitFor(frames: 9600 + 38400, "noise on hp")
        let end = phones.frameCount
        let heard = (phones.channel(0, (end - 38400)..<end), phones.channel(1, (end - 38400)..<end))
        let cues = CueAnalysis.cues(left: heard.0, right: heard.1, sampleRateHz: 48000)
        print("\(kind) hp, noise at 20°: ITD \(cues.itdMicroseconds) µs, ILD \(cues.interauralLevelDifferenceDecibels) dB")
        #expect(Self.rms(heard.0) > 0.01, "the noise plays on the headphones")
        #expect(cues.itdMicroseconds > 100 && cues.itdMicroseconds < 300, "KEMAR's ITD at 20° (about 180 µs)")
        phones.stop()
        player.wait()

        // 5.1 speakers: a source at 110° is the rear-left speaker's.
        try OutputDeviceDaemonTests.switchTo("s51", server)
        let surround = try OutputDeviceDaemonTests.waitForDevice(daemon, sink: "s51", reason: "form factor speaker").status
        #expect(surround.rendering?.method == "speakers" && surround.rendering?.speakerLayout == "5.1" && surround.rendering?.channels == 6,
                "\(String(describing: surround.rendering))")
        let text = try CommandLineTests.runCLI(["status", "--socket", daemon.socketPath]).output
        #expect(text.contains("speakers 5.1"), "\(text)")
        #expect(try client.request(.scenePlace(ScenePlace(sceneID: "rear", position: ScenePosition(azimuthDegrees: 110, elevationDegrees: 0, distanceMetres: 1)))) == .ok)
        let map = SurroundSink.channelNames
        let six = try Monitor(server, sink: "s51", channelMap: map)
        let rearPlayer = try Player(client, scene: "rear", samples: PulseEndToEndTests.noise(seconds: 3, seed: 30))
        try waitUntil(timeoutSeconds: 10, "the noise on s51") { Self.rms(six.channel(4, (six.frameCount - 4800)..<six.frameCount)) > 0.01 }
        try six.waitFor(frames: 38400, "noise on s51")
        let last = six.frameCount
        let channelLevels = (0..<6).map { Self.decibels(Self.rms(six.channel($0, (last - 38400)..<last))) }
        print("\(kind) s51, noise at 110°: \(zip(map, channelLevels).map { "\($0) \(($1 * 10).rounded() / 10) dB" }.joined(separator: ", "))")
        for c in 0..<6 where c != 4 {
            #expect(channelLevels[4] - channelLevels[c] >= 20, "rear-left 20 dB above \(map[c])")
        }
        six.stop()
        rearPlayer.wait()
    }

    /// The discontinuity measure of MotionTests: the largest third difference in `range`
    /// relative to the peak there. A sine of angular frequency ω has |Δ³y| ≤ ω³·|y|; a step of
    /// s has |Δ³y| ≈ s.
    static func discontinuity(_ y: [Float], _ range: Range<Int>) -> Double {
        var worst = 0.0, peak = 0.0
        for i in max(range.lowerBound, 3)..<min(range.upperBound, y.count) {
            let d3 = Double(y[i]) - 3 * Double(y[i - 1]) + 3 * Double(y[i - 2]) - Double(y[i - 3])
            worst = max(worst, abs(d3))
            peak = max(peak, abs(Double(y[i])))
        }
        return peak > 0 ? worst / peak : .infinity
    }

    /// Per 10 ms window from `start`, the left channel's level over the right's (dB).
    static func balance(_ left: [Float], _ right: [Float], from start: Int, windows: Int) -> [Double] {
        (0..<windows).map { w in
            let r = (start + 480 * w)..<min(start + 480 * (w + 1), left.count)
            return r.isEmpty ? .nan : decibels(rms(Array(left[r])) / max(rms(Array(right[r])), 1e-12))
        }
    }

    /// A switch between the headphones and the speakers while a 500 Hz tone plays at 20°: the
    /// status shows the new rendering within 200 ms of the default sink's change, and the change
    /// is crossfaded, nothing dropped, no click.
    ///
    /// What is judged: the daemon's output follows the default sink, so the server moves our
    /// stream to the new sink, and that move is a discontinuity of its own (the tone starts
    /// abruptly in the new sink's monitor and stops abruptly in the old one's), which SceneSound
    /// does not control. The engine's crossfade comes after the move: the server moves the
    /// stream when it switches, the daemon hears of it some 10 ms later and crossfades over the
    /// next 30 ms of what it renders, which reaches the sink after the output's buffer. So the
    /// new sink's monitor is recorded, and judged from 1 ms after the tone's first sample there
    /// (the move's step left out) to 0.5 s later: the third difference there against the same
    /// recording's steady part 1 s later (the unchanged new rendering's), within 6 dB; every 2 ms
    /// of it at no less than half the steady level (nothing dropped); and the L/R balance of its
    /// 10 ms windows shows the crossfade inside the judged span (the first window still the old
    /// rendering's balance, the last the new's) — else the crossfade was not what was judged.
    @Test(arguments: PrivateSoundServer.Kind.allCases)
    func aSwitchWhileAStreamPlaysIsFollowedAndCrossfaded(kind: PrivateSoundServer.Kind) throws {
        let server = try PrivatePulse(kind)
        defer { server.stop() }
        try OutputDeviceDaemonTests.loadSinks(server)
        try OutputDeviceDaemonTests.switchTo("hp", server)
        let daemon = try Daemon(output: "", environment: server.environment)
        defer { daemon.stop() }
        try OutputDeviceDaemonTests.waitForDevice(daemon, sink: "hp", reason: "form factor headphone")
        let client = try RawClient(socketPath: daemon.socketPath)
        #expect(try client.request(.scenePlace(ScenePlace(sceneID: "left", position: ScenePosition(azimuthDegrees: 20, elevationDegrees: 0, distanceMetres: 1)))) == .ok)
        let phones = try Monitor(server, sink: "hp")
        let speakers = try Monitor(server, sink: "spk")
        defer { phones.stop(); speakers.stop() }
        let player = try Player(client, scene: "left", samples: PulseEndToEndTests.sine(500, seconds: 8))
        try waitUntil(timeoutSeconds: 10, "the tone on the headphones") { Self.rms(phones.channel(0, (phones.frameCount - 4800)..<phones.frameCount)) > 0.01 }
        try phones.waitFor(frames: 48000, "the tone on hp")

        func switchTo(_ sink: String, method: String) throws -> Double {
            let start = Date()
            try OutputDeviceDaemonTests.switchTo(sink, server)
            try waitUntil(timeoutSeconds: 5, "the status to show \(method) on \(sink)") {
                let status = try OutputDeviceDaemonTests.status(daemon)
                return status.outputDevice?.sink == sink && status.rendering?.method == method
            }
            return Date().timeIntervalSince(start)
        }
        func judge(_ monitor: Monitor, after mark: Int, from old: String, to new: String) {
            let left = monitor.channel(0), right = monitor.channel(1)
            guard let onset = left.indices.dropFirst(mark).first(where: { abs(left[$0]) > 0.001 || abs(right[$0]) > 0.001 }),
                  onset + 96_000 <= left.count else {
                Issue.record("\(kind) \(old)→\(new): no tone on the new sink (\(left.count) frames)")
                return
            }
            let judged = (onset + 48)..<(onset + 24_000)
            let steady = (onset + 72_000)..<(onset + 96_000)
            let click = max(Self.discontinuity(left, judged), Self.discontinuity(right, judged))
            let reference = max(Self.discontinuity(left, steady), Self.discontinuity(right, steady))
            let steadyLevel = Self.rms(Array(left[steady])) + Self.rms(Array(right[steady]))
            let weakest = stride(from: judged.lowerBound, to: judged.upperBound - 96, by: 48).map { i in
                (Self.rms(Array(left[i..<(i + 96)])) + Self.rms(Array(right[i..<(i + 96)]))) / steadyLevel
            }.min() ?? 0
            let balance = Self.balance(left, right, from: judged.lowerBound, windows: 50)
            let steadyBalance = Self.decibels(Self.rms(Array(left[steady])) / Self.rms(Array(right[steady])))
            print("\(kind) \(old)→\(new), recorded on \(new): discontinuity \(click) across the change (steady \(new) \(reference)), weakest 2 ms at \(weakest) of the steady level; L−R per 10 ms from the tone's start \(balance.prefix(12).map { ($0 * 10).rounded() / 10 }) … steady \(steadyBalance) dB")
            #expect(click < 2 * reference, "\(old)→\(new): a click")
            #expect(weakest > 0.5, "\(old)→\(new): something dropped")
            #expect(abs(balance.first! - steadyBalance) > 3, "\(old)→\(new): the crossfade came before the judged span")
            #expect(abs(balance.last! - steadyBalance) < 0.5, "\(old)→\(new): the crossfade not over in the judged span")
        }

        let toSpeakers = try switchTo("spk", method: "speakers")
        try speakers.waitFor(frames: 120_000, "the tone on spk")
        // The headphones' monitor is silent from the first switch on: judged from here.
        let mark = phones.frameCount
        let toPhones = try switchTo("hp", method: "binaural")
        try phones.waitFor(frames: 120_000, "the tone on hp again")
        print("\(kind): the status showed the speakers \(Int(toSpeakers * 1000)) ms, the headphones \(Int(toPhones * 1000)) ms after set-default-sink began")
        #expect(toSpeakers < 0.2 && toPhones < 0.2, "the rendering follows within 200 ms")
        phones.stop(); speakers.stop()
        judge(speakers, after: 0, from: "hp", to: "spk")
        judge(phones, after: mark, from: "spk", to: "hp")
        player.wait()
    }

    /// `scenesound device render speakers` on the headphones: the status shows it with its
    /// reason, the headphones' sink then records the speakers' panning (no ITD), and the choice
    /// is the device's: another device is left alone, and it is there again after a restart;
    /// `device render auto` gives the sink's own rendering back.
    @Test(arguments: PrivateSoundServer.Kind.allCases)
    func aDeviceRenderChoiceIsHeardAndRememberedForTheDevice(kind: PrivateSoundServer.Kind) throws {
        let server = try PrivatePulse(kind)
        defer { server.stop() }
        try OutputDeviceDaemonTests.loadSinks(server)
        try OutputDeviceDaemonTests.switchTo("hp", server)
        let state = NSTemporaryDirectory() + "scenesound-render-state-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: state) }
        let environment = server.environment.merging(["XDG_STATE_HOME": state]) { $1 }
        var daemon = try Daemon(output: "", environment: environment)
        try OutputDeviceDaemonTests.waitForDevice(daemon, sink: "hp", reason: "form factor headphone")
        try Self.cli(["device", "render", "speakers"], daemon)
        var seen = try OutputDeviceDaemonTests.waitForDevice(daemon, sink: "hp", reason: "chosen for the device: speakers")
        #expect(seen.status.rendering == .init(method: "speakers", speakerLayout: "2.0", channels: 2, spatial: "head-tracked",
                                               reason: "chosen for the device: speakers", preference: "speakers"))

        // What the headphones' sink records: a source at 20° panned, no ITD.
        let client = try RawClient(socketPath: daemon.socketPath)
        #expect(try client.request(.scenePlace(ScenePlace(sceneID: "left", position: ScenePosition(azimuthDegrees: 20, elevationDegrees: 0, distanceMetres: 1)))) == .ok)
        let phones = try Monitor(server, sink: "hp")
        let player = try Player(client, scene: "left", samples: PulseEndToEndTests.noise(seconds: 2, seed: 31))
        try waitUntil(timeoutSeconds: 10, "the noise on hp") { Self.rms(phones.channel(0, (phones.frameCount - 4800)..<phones.frameCount)) > 0.01 }
        try phones.waitFor(frames: 38400, "noise on hp")
        let end = phones.frameCount
        let heard = (phones.channel(0, (end - 38400)..<end), phones.channel(1, (end - 38400)..<end))
        let lag = CueAnalysis.itdSeconds(left: heard.0, right: heard.1, sampleRateHz: 48000) * 48000
        let difference = CueAnalysis.ildDecibels(left: heard.0, right: heard.1)
        print("\(kind) hp with device render speakers, noise at 20°: L−R \(difference) dB (tangent law \(Self.tangentLawDifferenceDecibels(azimuthDegrees: 20)) dB), lag \(lag) samples")
        #expect(abs(lag) <= 1 && abs(difference - Self.tangentLawDifferenceDecibels(azimuthDegrees: 20)) <= 0.5)
        phones.stop()
        player.wait()

        // Another device keeps its own; the headphones' choice comes back with them.
        try OutputDeviceDaemonTests.switchTo("bt", server)
        seen = try OutputDeviceDaemonTests.waitForDevice(daemon, sink: "bt", reason: "form factor headset")
        #expect(seen.status.rendering?.method == "binaural" && seen.status.rendering?.preference == "auto")
        try OutputDeviceDaemonTests.switchTo("hp", server)
        try OutputDeviceDaemonTests.waitForDevice(daemon, sink: "hp", reason: "chosen for the device: speakers")
        #expect(daemon.stop() == 0)
        daemon = try Daemon(output: "", environment: environment)
        seen = try OutputDeviceDaemonTests.waitForDevice(daemon, sink: "hp", reason: "chosen for the device: speakers")
        #expect(seen.status.devices?.first { $0.key == "hp" }?.render == "speakers", "\(String(describing: seen.status.devices))")
        let listed = try CommandLineTests.runCLI(["device", "--socket", daemon.socketPath]).output
        #expect(listed.contains("* hp (Phones): render speakers\n"), "\(listed)")
        try Self.cli(["device", "render", "auto"], daemon)
        seen = try OutputDeviceDaemonTests.waitForDevice(daemon, sink: "hp", reason: "form factor headphone")
        #expect(seen.status.rendering?.method == "binaural" && seen.status.rendering?.preference == "auto")
        let refused = try CommandLineTests.runCLI(["device", "render", "loud", "--socket", daemon.socketPath])
        #expect(refused.status == 2 && refused.error.contains("auto"), "\(refused.error)")
        #expect(daemon.stop() == 0)
    }
}
