import Foundation
import Testing
import SceneSoundDSP
import SceneSoundProtocol
import SceneSoundTestSupport

/// The soak: 64 clients × 4 streams connecting and disconnecting at random, with system and
/// alert sounds and head poses, for `SCENESOUND_SOAK_SECONDS` (60 s in `make test`, 300 in
/// `make soak`), played through PipeWire's graph into a private PipeWire's null sink, as most
/// desktops would play it. No crash, resident memory flat after warm-up, nothing the listener
/// misses — no cycle the sink played without us — but what the machine itself stalled for,
/// every drain answered only once its stream was complete.
@Suite(.serialized) struct SoakTests {
    static var seconds: Double {
        ProcessInfo.processInfo.environment["SCENESOUND_SOAK_SECONDS"].flatMap(Double.init) ?? 60
    }

    final class Tally: @unchecked Sendable {
        private let lock = NSLock()
        var connections = 0, streams = 0, drains = 0, abandoned = 0, sounds = 0, poses = 0, failures: [String] = []
        func add(_ body: (Tally) -> Void) { lock.withLock { body(self) } }
    }

    @Test func sixtyFourClientsFourStreamsEach() throws {
        let server = try PrivatePulse(.pipeWire)
        defer { server.stop() }
        // Wakes 2 ms late: a render of ~1.5 ms misses its 5.3 ms cycle when the host takes 4 ms.
        let stallWatch = MachineStallWatch(thresholdSeconds: 0.002)
        defer { stallWatch.stop() }
        let daemon = try Daemon(output: "pipewire", extraArguments: ["--max-clients", "80"], environment: server.environment)
        defer { daemon.stop() }
        let pid = daemon.process.processIdentifier
        let deadline = Date().addingTimeInterval(Self.seconds)
        let tally = Tally()
        var noise = WhiteNoise(seed: 77)
        let pcm: [UInt8] = (0..<(48000 * 2 * 2)).flatMap { _ -> [UInt8] in
            let v = Int16(noise.next(amplitude: 3000))
            return [UInt8(truncatingIfNeeded: v), UInt8(truncatingIfNeeded: v >> 8)]
        }
        // A short sound for the sample cache (system and alert plays).
        let sound = Array(pcm.prefix(9600))
        let formats = [AudioFormat(sampleFormat: .s16le, rateHz: 48000, channels: 1),
                       AudioFormat(sampleFormat: .s16le, rateHz: 48000, channels: 2),
                       AudioFormat(sampleFormat: .s16le, rateHz: 44100, channels: 1)]
        let pcmSeconds = 2.0
        precondition(pcm.count >= Int(pcmSeconds * 48000) * 2)

        // A head tracker: poses at 20 Hz for the whole run, swinging the head.
        let tracker = try RawClient(socketPath: daemon.socketPath, name: "tracker")
        Thread.detachNewThread {
            var t = 0.0
            while Date() < deadline {
                let q = SceneSoundDSP.Quaternion(yawDegrees: 60 * sin(t))
                try? tracker.send(.headPose(SceneSoundProtocol.HeadPose(timestampNanoseconds: 0,
                    orientation: .init(w: Float(q.w), x: Float(q.x), y: Float(q.y), z: Float(q.z)))))
                tally.add { $0.poses += 1 }
                t += 0.05
                usleep(50_000)
            }
        }

        let group = DispatchGroup()
        for clientIndex in 0..<64 {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                var random = SystemRandomNumberGenerator()
                while Date() < deadline {
                    do {
                        let client = try RawClient(socketPath: daemon.socketPath, name: "soak-\(clientIndex)")
                        tally.add { $0.connections += 1 }
                        var samplesWork = true
                        if clientIndex % 8 == 0 {
                            let upload = try client.request(.sampleUpload(SampleUpload(
                                name: "soak", format: formats[0], totalBytes: UInt32(sound.count), offsetBytes: 0, pcm: sound[...])))
                            samplesWork = upload == .ok
                        }
                        for _ in 0..<Int.random(in: 1...6, using: &random) where Date() < deadline {
                            // Up to four streams at once, each played, then drained or dropped.
                            let count = Int.random(in: 1...4, using: &random)
                            var open: [(UInt32, AudioFormat)] = []
                            for i in 0..<count {
                                let format = formats[(clientIndex + i) % formats.count]
                                let id = try client.openStream(format: format, scene: "soak-\(clientIndex % 16)")
                                open.append((id, format))
                            }
                            tally.add { $0.streams += count }
                            for (id, format) in open {
                                let seconds = Double.random(in: 0.25...1.0, using: &random)
                                let bytes = Int(seconds * Double(format.rateHz)) * format.bytesPerFrame
                                try client.write(stream: id, pcm: Array(pcm.prefix(bytes)), bytesPerFrame: format.bytesPerFrame)
                            }
                            if samplesWork && clientIndex % 8 == 0 {
                                let play = try client.request(.samplePlay(SamplePlay(
                                    name: "soak", kind: Bool.random(using: &random) ? .alert : .system,
                                    spatialMode: .anchored, volumeDecibels: -6, sceneID: "soak-\(clientIndex % 16)")))
                                if case .samplePlaying = play { tally.add { $0.sounds += 1 } }
                            }
                            for (id, _) in open {
                                if Int.random(in: 0..<4, using: &random) > 0 {
                                    let reply = try client.request(.streamDrain(StreamReference(streamID: id)), timeoutSeconds: 20)
                                    if reply == .ok { tally.add { $0.drains += 1 } }
                                    else { tally.add { $0.failures.append("drain: \(reply)") } }
                                    _ = try client.request(.streamClose(StreamReference(streamID: id)))
                                } else {
                                    tally.add { $0.abandoned += 1 }  // left to the disconnect
                                }
                            }
                            // A desktop's programs pause between sounds.
                            usleep(UInt32.random(in: 200_000...1_000_000, using: &random))
                        }
                    } catch {
                        tally.add { $0.failures.append("client \(clientIndex): \(error)") }
                    }
                }
            }
        }

        // Resident memory, sampled every half second: the level at the end of the warm-up (pools,
        // caches and the allocator's arenas fill to what this load needs) against the level at
        // the end, each the median of its last five seconds so that a momentary peak of
        // concurrent streams does not count as growth. A leak keeps growing. The warm-up is the
        // first third of a long soak, the first half of the 60 s one: its RSS reaches 152–161 MB
        // in 20–30 s, in one run of nine here only after 30 s (145 MB at 20 s, 155.6 at 30 s,
        // 160.8 at the end: read from 20 s, 10.9 % "growth" that was the warm-up's).
        let warmUp = Date().addingTimeInterval(Self.seconds / (Self.seconds >= 300 ? 3 : 2))
        var warmUpSamples: [Int] = [], timeline: [Int] = []
        while Date() < deadline {
            usleep(500_000)
            guard daemon.isRunning else { break }
            let rss = ProcessMemory.kilobytes(pid, ProcessMemory.resident)
            timeline.append(rss)
            if Date() < warmUp { warmUpSamples.append(rss) }
        }
        func medianOfLastFiveSeconds(_ samples: [Int]) -> Int {
            let last = samples.suffix(10).sorted()
            return last.isEmpty ? 0 : last[last.count / 2]
        }
        let baseline = medianOfLastFiveSeconds(warmUpSamples), peak = medianOfLastFiveSeconds(timeline)
        print("soak resident memory every 5 s (kB): \(stride(from: 0, to: timeline.count, by: 10).map { timeline[$0] })")
        #expect(group.wait(timeout: .now() + 60) == .success, "clients did not finish")
        #expect(daemon.isRunning, "the server died: \(daemon.log.suffix(2000))")
        let status = try HeadTrackingTests.statusDocument(try RawClient(socketPath: daemon.socketPath))
        let output = status.output, render = status.render
        let growth = baseline > 0 ? Double(peak - baseline) / Double(baseline) : 0
        func shown<Value>(_ value: Value?) -> String { value.map { "\($0)" } ?? "?" }
        print("soak \(Int(Self.seconds)) s (peak render load \(render.peakLoad)): \(tally.connections) connections, \(tally.streams) streams, \(tally.drains) drains, \(tally.abandoned) dropped by disconnect, \(tally.sounds) sample plays, \(tally.poses) head poses; RSS \(baseline) → \(peak) kB (\(String(format: "%.1f", growth * 100)) %); cycles missed \(output.underruns) (overloaded \(shown(output.overloadedBlocks)); slowest block \(shown(output.slowestBlockCPUSeconds)) s CPU at \(shown(output.slowestBlockAtSeconds)) s); render load now \(render.load)")
        #expect(tally.failures.isEmpty, "\(tally.failures.prefix(5))")
        #expect(tally.connections >= 64 && tally.drains > 100)
        // The 60 s run in `make test` ends soon after its warm-up, where the allocator may still
        // take a last step up (seen: +4 MB once, then flat), so its memory bar is looser than the
        // long soak's (`make soak`, 300 s). The render bar is the same for both: no block may take
        // longer to render than it lasts, and no cycle may be missed but for the machine.
        let long = Self.seconds >= 300
        #expect(growth < (long ? 0.05 : 0.10), "resident memory grew \(growth * 100) % after warm-up")
        // What the listener hears: every cycle the sink played without us (the node's process
        // outlasted the quantum, a cycle between two of ours was lost, or no buffer) must be one the machine
        // itself stalled for — a CPU taken away from every thread, seen by the stall watch at
        // SCHED_FIFO 90 within the cycle before it ended, or the render's CPU taken by another
        // thread during a call that never waited and whose CPU time fit the block (a fresh-clone
        // run: a call of 5.7 ms with 3.2 ms of CPU, no stall over the watch's 2 ms) — and none the render's own: a call
        // whose CPU time, less what the machine stood still for during it (a virtual machine's
        // thread clock runs on while the host holds the CPU), outlasted the block. The node
        // keeps the latest 63 (15 until 2 Dec 2026, when a fresh-clone run missed 26, the 15
        // kept each the machine's, the host taking 2.8 % of the CPUs: judged one by one now).
        let cycleSeconds = Double(output.blockFrames) / output.rateHz
        let missed = MissedCycles(output.recentUnderruns ?? [], blockSeconds: cycleSeconds, watch: stallWatch)
        print("soak: \(output.underruns) cycles the sink played without us, \(missed.unexplained.count) of them with no stall of the machine; "
              + stallWatch.summary(from: MachineStallWatch.nowSeconds() - Self.seconds, to: MachineStallWatch.nowSeconds()))
        for miss in missed.all { print("soak: missed cycle \(missed.describe(miss))") }
        #expect(output.kind == "pipewire" && output.connected, "output \(output.kind), connected \(output.connected)")
        // More than the node keeps, every one of those the machine's, while the machine disturbed
        // the run (ci56: 770 missed, the host taking 19 % of the CPUs, stalls up to 37 ms): the
        // count is judged as a known issue (`MachineStallWatch.expectTimely`); one the machine
        // did not stall for fails as always.
        let countMessage = "\(output.underruns) cycles missed, \(missed.unexplained.count) of the latest \(missed.all.count) with no machine stall: \(missed.describe(missed.unexplained))"
        let countHolds = output.underruns <= missed.all.count && missed.unexplained.isEmpty
        if missed.unexplained.isEmpty {
            stallWatch.expectTimely(countHolds, countMessage)
        } else {
            #expect(countHolds, Comment(rawValue: countMessage))
        }
        #expect(missed.ours.isEmpty, "the render's own: \(missed.describe(missed.ours))")
        #expect(status.streams.isEmpty)
        if geteuid() == 0 { #expect(output.renderThreadScheduling?.hasPrefix("SCHED_FIFO") == true, "\(output.renderThreadScheduling ?? "-")") }
    }
}
