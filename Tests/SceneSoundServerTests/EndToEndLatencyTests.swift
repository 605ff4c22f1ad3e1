import Foundation
import Testing
import SceneSoundDSP
import SceneSoundProtocol
import SceneSoundTestSupport

/// End-to-end latency through the real daemon into a private null sink, on PulseAudio and on
/// PipeWire (with WirePlumber and its pulse server): a client's write to the sink, and a head
/// pose to the sink. (The timing below is described for PulseAudio; PipeWire's differences are
/// noted where the figures are checked.)
///
/// How it is measured. The test stamps each event with CLOCK_MONOTONIC when the syscall that
/// sends it (send(2) of the STREAM_DATA or HEAD_POSE frame, sendto(2) of the opentrack
/// datagram) has returned. `parec` records the sink's monitor; a reader thread stamps every
/// read of its output. Two times are derived for a recorded frame:
///
/// - *mixed*: when the read that brought the frame returned. PulseAudio copies a frame to the
///   monitor at the moment the sink mixes it (takes it out of the daemon's stream buffer), so
///   this is "reached PulseAudio's mix", plus the capture hop (PulseAudio → parec → pipe →
///   this test), which only makes it later.
/// - *played*: when the sink's clock plays the frame. A sink mixes ahead of its clock by up to
///   its own latency (a sound card's buffer; for the null sink, a virtual one of a few ms),
///   so this is the honest "reached the output" time, the one PulseAudio's reported stream
///   latency is about. The null sink's clock is CLOCK_MONOTONIC and advances exactly one frame
///   per frame; it wakes when the clock reaches the next frame and mixes ahead from there, so
///   the first frame of each burst arrives right after it plays. The lower envelope of
///   (read time − first frame of the burst / rate) is the clock's origin, plus the fastest
///   capture hop (so again late, never early).
///
/// Both are printed; the bounds are on *played*, and the figures are cross-checked against
/// what the server and PulseAudio report (`output.latency_seconds`, `motion_to_sound_seconds`).
@Suite(.serialized) struct EndToEndLatencyTests {
    static let rate = 48000.0
    static let blockSeconds = 256 / rate
    static let limiterSeconds = 0.0015

    /// The daemon's output on each server: pulse on PulseAudio, and on PipeWire both its own
    /// output (the default there) and pulse through pipewire-pulse (the fallback).
    static let setups: [(PrivateSoundServer.Kind, String)] = [(.pulseAudio, "pulse"), (.pipeWire, "pipewire"), (.pipeWire, "pulse")]
        .filter { PrivateSoundServer.Kind.allCases.contains($0.0) }
    static let servers: [(PrivateSoundServer.Kind, String)] = [(.pulseAudio, "pulse"), (.pipeWire, "pipewire")]
        .filter { PrivateSoundServer.Kind.allCases.contains($0.0) }

    @Test(arguments: setups)
    func aClientsWriteAndAHeadPoseReachTheSinkInTime(kind: PrivateSoundServer.Kind, output: String) throws {
        // As with the clicks after rest: a trial the machine disturbed (a stall long enough to
        // underrun the output — on PulseAudio its buffer then doubles for the minute after, and
        // every later event is late by that: head poses heard at a median of 39.7 ms after a
        // 26.7 ms stall here — or the host's steal) is taken again; the bars stay as they are
        // (`MachineStallWatch.takeTrials`).
        try MachineStallWatch.takeMeasuredTrials("writes and head poses on \(kind), --output \(output)") { watch in
            let rig = try LatencyRig(kind, output: output, stallWatch: watch)
            let (writes, flips) = (try rig.clicks(count: 10), try rig.headFlips(count: 12))
            return try measureWritesAndPoses(rig, writes: writes, flips: flips, kind: kind, output: output)
        }
    }

    func measureWritesAndPoses(_ rig: LatencyRig, writes: [LatencyRig.Click], flips: (events: [LatencyRig.Flip], firstFrame: Int),
                               kind: PrivateSoundServer.Kind, output: String) throws -> MeasuredTrial {
        var trial = MeasuredTrial()
        // Read before the recording ends, as the clicks after rest read it: ci73 (2 Dec 2026)
        // heard the writes at 20.0 ms and the poses after them at 42.9 ms (bar 32) in a trial
        // with stalls to 3.4 ms and 2.6 % steal, 20 ms later as when PulseAudio's buffer doubles
        // after an underrun; whether the output had underrun, nothing said.
        let outputStatus = try HeadTrackingTests.statusDocument(rig.client).output
        trial.disturbance = Self.underranWhileStalled(outputStatus, output: output, watch: rig.stallWatch)
        let recording = rig.capture.finish()
        let clock = SinkClock(reads: recording.reads)
        // How far the sink plays behind the monitor reads: on PulseAudio the null sink's
        // configured latency. PipeWire's pulse server reports 0 for its null sink and hands the
        // monitor over in whole bursts (measured: parec's 20 ms fragment), so a frame read at
        // the start of a burst plays up to one burst later.
        let burstSeconds = Double(clock.medianBurstFrames) / Self.rate
        let sinkLatency = kind == .pulseAudio ? rig.sinkConfiguredLatencySeconds() : burstSeconds

        // (a) Client write → sink: the onset of each click in the recording.
        let onsets = Self.onsets(recording.left, recording.right, before: flips.firstFrame, threshold: 0.01)
        guard onsets.count == writes.count else { return trial.failing("""
            found \(onsets.count) clicks at the sink, wrote \(writes.count); the output's underruns \(outputStatus.underruns); \
            \(rig.stallWatch.summary(from: writes[0].seconds, to: flips.events.last!.seconds + 0.1))
            """) }
        var writeMixed: [Double] = [], writePlayed: [Double] = []
        for (onset, write) in zip(onsets, writes) {
            writeMixed.append(clock.mixed(onset) - write.seconds)
            writePlayed.append(clock.played(Double(onset)) - write.seconds)
        }
        let pulseLatency = writes.compactMap(\.outputLatency)
        guard !pulseLatency.isEmpty else { return trial.failing("status reported no output latency") }

        // (b) Head pose → sink: where the interaural level difference changes sign.
        let crossings = Self.ildCrossings(recording.left, recording.right, from: flips.firstFrame,
                                          signs: flips.events.map { $0.yawDegrees < 0 ? 1 : -1 },
                                          notBefore: flips.events.map(\.framesRecordedAtSend))
        guard crossings.count == flips.events.count else {
            return trial.failing("found \(crossings.count) of \(flips.events.count) head turns at the sink")
        }
        var poseMixed: [Double] = [], posePlayed: [Double] = []
        for (crossing, flip) in zip(crossings, flips.events) {
            poseMixed.append(clock.mixed(Int(crossing)) - flip.seconds)
            posePlayed.append(clock.played(crossing) - flip.seconds)
        }
        let reported = flips.events.compactMap(\.motionToSound)
        let toRender = flips.events.compactMap(\.motionToRender)
        let viaProtocol = zip(flips.events, posePlayed).filter { !$0.0.openTrack }.map(\.1)
        let viaOpenTrack = zip(flips.events, posePlayed).filter { $0.0.openTrack }.map(\.1)

        let sinkSlack = zip(writePlayed, writeMixed).map { $0 - $1 } + zip(posePlayed, poseMixed).map { $0 - $1 }

        trial.print("""
            end-to-end latency on \(kind), scenesoundd --output \(output) → private null sink; block 256 frames (5.3 ms), \
            pulse target 20 ms, the sink's own buffer: \(sinkLatency.map { Self.ms($0) } ?? "?") ms \
            (monitor bursts: median \(clock.medianBurstFrames) frames, \(Self.ms(burstSeconds)) ms)
            min / median / max in ms:
              client write → mixed by the server (monitor read, capture hop included): \(Self.summary(writeMixed))
              client write → played on the sink's clock:                            \(Self.summary(writePlayed))
                each: \(writePlayed.map { Self.ms($0) }.joined(separator: " "))
                status output.latency_seconds at the writes: \(Self.summary(pulseLatency))
              head pose → mixed (interaural level difference changes sign):          \(Self.summary(poseMixed))
              head pose → played on the sink's clock:                               \(Self.summary(posePlayed))
                each: \(posePlayed.map { Self.ms($0) }.joined(separator: " "))
                by HEAD_POSE: \(Self.summary(viaProtocol)); by opentrack UDP: \(Self.summary(viaOpenTrack))
                status motion_to_render_seconds: \(Self.summary(toRender)); motion_to_sound_seconds: \(Self.summary(reported))
              played − mixed (the sink's own buffer, less the capture hop): \(Self.summary(sinkSlack))
              capture hop jitter (median burst read after the fastest): \(Self.ms(clock.hopJitterSeconds)) ms
              the output's underruns: \(outputStatus.underruns)
            """)

        // Bounds, PulseAudio. A write waits for the render that picks it up. PulseAudio asks for audio only
        // when at least minreq (one 256-frame block) is missing, and with the 20 ms target it
        // runs the null sink at (20 − 2 × 5.3) / 2 = 4.7 ms, i.e. 224 frames per wake-up; so
        // requests, and renders, follow one or two wake-ups: up to ~9.3 ms of waiting. Then the
        // limiter's 1.5 ms look-ahead, then PulseAudio's buffer, 20 ms in all: ~31 ms at worst,
        // ~20 ms typical; a pose adds its glide to the new orientation (within one block).
        // Measured on a two-core machine: medians 18–25 ms, worst 32 ms. The median bound
        // fails on one block of extra buffering anywhere in the chain; the worst-case bound
        // leaves room for one scheduling stall.
        // PipeWire (its pulse server in front of the graph) adds ~20 ms more between the
        // daemon's stream and the sink, not examined here: measured on the same machine (2 cores
        // shared with other work), medians 40–42 ms (write) and 44–46 ms (pose), worst 54 ms.
        // Its median bounds, 48 and 53 ms, leave ~7 ms (as PulseAudio's do; doubling the
        // daemon's tlength, +12 ms here, fails both); the worst-case one, 80 ms, leaves room
        // for one scheduling stall.
        // PipeWire's own output (`--output pipewire`, the default there): the graph runs at its
        // one-block quantum, 5.3 ms; measured on the same machine, medians 10.8 ms (write) and
        // 14.7 ms (pose), worst 22 ms. Bounds 25 ms (medians) and 50 ms (worst); a node.latency
        // of four blocks fails them.
        let median = { (x: [Double]) in x.sorted()[x.count / 2] }
        let bound = Bounds.of(kind, output: output)
        trial.expect(median(writePlayed) < bound.writeMedianSeconds, "client write → sink, median \(Self.ms(median(writePlayed))) ms")
        // The tail: each event less what the machine itself stalled between its send and the
        // sink (a host that takes the CPUs for 40 ms delays whatever is in flight by that;
        // printed), judged by the second worst of each set, the worst printed: one event in a
        // set may meet a stall of any length in a server thread we do not control (seen twice
        // in a day on PipeWire's pulse server: one pose of 12 heard 85 and 109 ms after it was
        // sent, the others 42–53 ms, no machine stall seen); extra buffering anywhere delays
        // them all.
        let writeStalls = zip(writes, writePlayed).map { rig.stallWatch.stalledSeconds(from: $0.seconds, to: $0.seconds + $1) }
        let poseStalls = zip(flips.events, posePlayed).map { rig.stallWatch.stalledSeconds(from: $0.seconds, to: $0.seconds + $1) }
        trial.print("  \(rig.stallWatch.summary(from: writes[0].seconds, to: flips.events.last!.seconds + 0.1))")
        let secondWorst = { (x: [Double]) in x.sorted().dropLast().last! }
        let tailWrite = secondWorst(zip(writePlayed, writeStalls).map { $0 - $1 })
        let tailPose = secondWorst(zip(posePlayed, poseStalls).map { $0 - $1 })
        trial.expect(tailWrite < bound.worstSeconds,
                     "client write → sink, second worst \(Self.ms(tailWrite)) ms less the machine's stalls (worst \(Self.ms(writePlayed.max()!)) ms)")
        trial.expect(median(posePlayed) < bound.poseMedianSeconds, "head pose → sink, median \(Self.ms(median(posePlayed))) ms")
        trial.expect(tailPose < bound.worstSeconds,
                     "head pose → sink, second worst \(Self.ms(tailPose)) ms less the machine's stalls (worst \(Self.ms(posePlayed.max()!)) ms)")
        // The two clocks are one (CLOCK_MONOTONIC): nothing is mixed before it was sent, nor
        // sooner than the render wait and PulseAudio's buffer allow.
        trial.expect(writeMixed.min()! > 0.005 && poseMixed.min()! > 0.005,
                     "write → mixed at least \(Self.ms(writeMixed.min()!)) ms, pose → mixed at least \(Self.ms(poseMixed.min()!)) ms")
        // The sink's clock, reconstructed, agrees with the direct reads: a frame plays after it
        // is mixed by no more than the sink's configured latency. A read comes the capture hop's
        // jitter after the fastest one, which the reconstructed clock is built on, so "mixed"
        // is that much late: with PipeWire's 5.3 ms bursts (a frame sits 2.7 ms into its burst
        // at the median) a 3 ms hop jitter makes the median slightly negative (−1.3 ms seen in
        // CI with 2.9 ms of jitter). The lower bound allows the measured jitter, no more.
        if let sinkLatency {
            trial.expect(median(sinkSlack) > -clock.hopJitterSeconds - 0.001 && median(sinkSlack) < sinkLatency + 0.001,
                         "played − mixed median \(Self.ms(median(sinkSlack))) ms, sink latency \(Self.ms(sinkLatency)) ms, capture hop jitter \(Self.ms(clock.hopJitterSeconds)) ms")
        }
        // Cross-checks with what the server reports. On PipeWire the stream latency its pulse
        // server reports leaves out ~24–28 ms (measured: a write heard 40.7 ms after it, with
        // 14.2 ms reported; the cause is not examined here): the windows there allow 30 ms more.
        // output.latency_seconds is a write's way to the sink as the server knows it: the
        // output's delay (through libpulse the stream latency as each write begins, the bottom
        // of the buffer's sawtooth: read after the write, its top, it was a block high and
        // reported 4 ms more than was measured), the average wait for the render that takes the
        // write (half a block) and the limiter's look-ahead. Through libpulse a write may wait a
        // second block (PulseAudio's request pattern, above).
        let unreported = bound.unreportedSeconds
        let writeExcess = median(writePlayed) - median(pulseLatency)
        trial.expect(writeExcess > -0.003 - Self.blockSeconds / 2 && writeExcess < unreported + 1.5 * Self.blockSeconds + 0.003,
                     "write → sink \(Self.ms(median(writePlayed))) ms vs output latency \(Self.ms(median(pulseLatency))) ms")
        // PipeWire's own output knows its delay to the device exactly (the graph's position:
        // the driver's delay and the quantum, and what the block adapter holds): what status
        // reports is what the sink plays, within 3 ms.
        if output == "pipewire" {
            trial.expect(abs(writeExcess) < 0.003,
                         "write → sink \(Self.ms(median(writePlayed))) ms vs reported output latency \(Self.ms(median(pulseLatency))) ms")
        }
        // motion_to_sound = pose → render + the limiter's look-ahead + the output's delay; it
        // leaves out the glide to the new pose (one block), so the sink hears the turn a little
        // later.
        let poseExcess = median(posePlayed) - median(reported)
        trial.expect(poseExcess > -0.003 - Self.limiterSeconds && poseExcess < unreported + Self.blockSeconds + 0.005,
                     "pose → sink \(Self.ms(median(posePlayed))) ms vs motion_to_sound \(Self.ms(median(reported))) ms")
        return trial
    }

    /// Silent when silent, and a sound after rest starts at once: its first sample reaches the
    /// sink (played, as above) ≤ 30 ms after the request, nothing of its start lost (each click
    /// after a rest peaks as one sent while awake does). The monitor's recording keeps the sink
    /// itself running; the daemon's own output rests and wakes.
    @Test(arguments: servers)
    func aSoundAfterRestStartsAtOnce(kind: PrivateSoundServer.Kind, output: String) throws {
        try clickAfterRest(kind: kind, output: output, captureApps: false)
    }

    /// The same with `--capture-apps`, the capture resting too (its mix's recording corked,
    /// on PulseAudio its sink suspended) when each click is sent.
    @Test(arguments: servers)
    func aSoundAfterRestStartsAtOnceWhileCapturing(kind: PrivateSoundServer.Kind, output: String) throws {
        try clickAfterRest(kind: kind, output: output, captureApps: true)
    }

    func clickAfterRest(kind: PrivateSoundServer.Kind, output: String, captureApps: Bool) throws {
        // A trial the machine disturbed (a virtual machine's host stopping it long enough to
        // underrun the output, or stealing its CPUs' time) measures the host: on PulseAudio the
        // output's buffer then doubled for the minute after (AdaptiveBuffer), so every click
        // after it was late by that (played 22.5, 32.3, 45.2 ms after an 83 ms freeze). Such a
        // trial is taken again; the bars stay as they are (`takeTrials`). So is one whose
        // PulseAudio output underran while the machine stalled under the disturbing length (the
        // official run on 1 Dec 2026: stalls to 8 ms, 2 underruns, the buffer 20 → 34 ms, the
        // clicks 29.2, 30.5, 36.1 ms); on a still machine it does not underrun (0 in every calm
        // trial of that day's runs). PipeWire's count is of cycles missed, its latency fixed.
        try MachineStallWatch.takeMeasuredTrials("clicks after rest on \(kind), --output \(output)") { watch in
            // A rest after 1 s of silence (3 s by default): the same rest and wake, each click
            // 2 s sooner.
            let restAfterSeconds = 1.0
            let rig = try LatencyRig(kind, output: output, captureApps: captureApps, restAfterSeconds: restAfterSeconds, stallWatch: watch)
            let (afterRest, awake, restDelays) = try rig.clicksAfterRest(count: 3)
            var trial = try measureClicksAfterRest(rig, afterRest: afterRest, awake: awake, kind: kind, output: output, captureApps: captureApps)
            // The rest came as --rest-after-seconds says (the default 3 s would be late here),
            // not before: the click itself is heard first.
            trial.print("  rested \(restDelays.map { String(format: "%.2f", $0) }.joined(separator: " ")) s after a click (--rest-after-seconds \(restAfterSeconds))")
            for delay in restDelays {
                trial.expect(delay >= restAfterSeconds - 0.1 && delay <= restAfterSeconds + 1,
                             "rested \(delay) s after a click, with --rest-after-seconds \(restAfterSeconds)")
            }
            if let captureRest = rig.captureRestSeconds {
                trial.print("  the capture rested \(String(format: "%.2f", captureRest)) s after it started")
                trial.expect(captureRest <= restAfterSeconds + 1, "the capture rested \(captureRest) s after it started, with --rest-after-seconds \(restAfterSeconds)")
            }
            return trial
        }
    }

    /// A trial of clicks after rest, measured (`MeasuredTrial`).
    func measureClicksAfterRest(_ rig: LatencyRig, afterRest: [LatencyRig.Click], awake: LatencyRig.Click,
                                kind: PrivateSoundServer.Kind, output: String, captureApps: Bool) throws -> MeasuredTrial {
        var trial = MeasuredTrial()
        let outputStatus = try HeadTrackingTests.statusDocument(rig.client).output
        trial.disturbance = Self.underranWhileStalled(outputStatus, output: output, watch: rig.stallWatch)
        let recording = rig.capture.finish()
        let clock = SinkClock(reads: recording.reads)
        let onsets = Self.onsets(recording.left, recording.right, before: recording.left.count, threshold: 0.01)
        guard onsets.count == afterRest.count + 1 else {
            return trial.failing("""
                found \(onsets.count) clicks at the sink, sent \(afterRest.count + 1); the output's underruns \(outputStatus.underruns); \
                \(rig.stallWatch.summary(from: afterRest[0].seconds, to: awake.seconds + 0.1)); \(rig.graphAndLog())
                """)
        }
        let played = zip(onsets, afterRest + [awake]).map { clock.played(Double($0)) - $1.seconds }
        let peaks = onsets.map { onset in
            (max(0, onset - 48)..<min(recording.left.count, onset + 480)).reduce(Float(0)) { max($0, abs(recording.left[$1]), abs(recording.right[$1])) }
        }
        trial.print("""
            a click after rest on \(kind), --output \(output)\(captureApps ? " --capture-apps" : ""): request → played \(played.dropLast().map { Self.ms($0) }.joined(separator: " ")) ms \
            (awake: \(Self.ms(played.last!)) ms); peaks \(peaks.dropLast().map { String(format: "%.3f", $0) }.joined(separator: " ")) \
            (awake: \(String(format: "%.3f", peaks.last!))); the output's underruns \(outputStatus.underruns), latency now \(outputStatus.latencySeconds.map { Self.ms($0) } ?? "-") ms
            """)
        let median = played.dropLast().sorted()[afterRest.count / 2]
        trial.expect(median <= 0.030, "after rest, request → played median \(Self.ms(median)) ms")
        let worst = zip(afterRest, played).map { $1 - rig.stallWatch.stalledSeconds(from: $0.seconds, to: $0.seconds + $1) }.max()!
        trial.print("  \(rig.stallWatch.summary(from: afterRest[0].seconds, to: awake.seconds + 0.1))")
        trial.expect(worst <= 0.050, "after rest, worst \(Self.ms(played.dropLast().max()!)) ms (\(Self.ms(worst)) ms less the machine's stalls)")
        for peak in peaks.dropLast() {
            trial.expect(abs(peak / peaks.last! - 1) < 0.1, "a click after rest peaks at \(peak), awake \(peaks.last!)")
        }
        // A rest is no miss: the sink plays on without us while our outputs are unlinked (here
        // for 0.1 s), and as they are linked again the whole graph may stop for ~43 ms; each
        // once counted as a cycle the sink played without us, an underrun in `status` at every
        // wake on an idle machine. Every miss left must be the machine's.
        if output == "pipewire" {
            let missed = MissedCycles(outputStatus.recentUnderruns ?? [], blockSeconds: Self.blockSeconds, watch: rig.stallWatch)
            trial.expect(outputStatus.underruns <= missed.all.count && missed.unexplained.isEmpty,
                         "\(outputStatus.underruns) cycles missed, with no stall of the machine: \(missed.describe(missed.unexplained))")
        }
        return trial
    }

    /// PulseAudio's output underran while the machine stalled: its buffer doubles for the minute
    /// after, and every later event is late by that — the host's doing (official run, 1 Dec 2026:
    /// stalls to 8 ms, 2 underruns, the buffer 20 → 34 ms); calm trials underrun 0 times.
    /// PipeWire's count is of cycles missed, its latency fixed: judged by `MissedCycles`.
    static func underranWhileStalled(_ outputStatus: StatusDocument.Output, output: String, watch: MachineStallWatch) -> String? {
        guard output == "pulse", outputStatus.underruns > 0, !watch.stalls.isEmpty else { return nil }
        return "the output underran \(outputStatus.underruns) time(s) while the machine stalled (\(watch.stalls.count) stalls over 2 ms)"
    }

    struct Bounds {
        /// Played on the sink's clock after the send: medians of a run (write, pose), and its worst.
        let writeMedianSeconds: Double, poseMedianSeconds: Double, worstSeconds: Double
        /// Latency the sound server leaves out of the stream latency it reports.
        let unreportedSeconds: Double
        static func of(_ kind: PrivateSoundServer.Kind, output: String) -> Bounds {
            switch (kind, output) {
            case (.pipeWire, "pipewire"):
                // PipeWire's own output: one quantum of 256 frames in the graph, the limiter's
                // look-ahead, and the null sink's one cycle. See the figures above.
                Bounds(writeMedianSeconds: 0.025, poseMedianSeconds: 0.025, worstSeconds: 0.050, unreportedSeconds: 0.005)
            case (.pulseAudio, _): Bounds(writeMedianSeconds: 0.032, poseMedianSeconds: 0.032, worstSeconds: 0.050, unreportedSeconds: 0)
            case (.pipeWire, _): Bounds(writeMedianSeconds: 0.048, poseMedianSeconds: 0.053, worstSeconds: 0.080,
                                        unreportedSeconds: 0.030)
            }
        }
    }

    // MARK: Analysis

    /// First frame above `threshold` of each click (clicks at least 30 ms apart).
    static func onsets(_ left: [Float], _ right: [Float], before end: Int, threshold: Float) -> [Int] {
        var onsets: [Int] = []
        var n = 0
        while n < min(end, left.count) {
            if abs(left[n]) > threshold || abs(right[n]) > threshold {
                onsets.append(n)
                n += Int(0.030 * rate)
            } else {
                n += 1
            }
        }
        return onsets
    }

    /// For each expected turn, in order, the (fractional) frame where the interaural level
    /// difference (left over right, in 1 ms windows, smoothed over 3) crosses zero towards
    /// `sign` and then holds beyond 6 dB for 10 ms, looked for from the frame the monitor had
    /// delivered when the turn was sent (`notBefore`).
    static func ildCrossings(_ left: [Float], _ right: [Float], from start: Int, signs: [Double], notBefore: [Int]) -> [Double] {
        let window = 48
        var ild: [Double] = []
        var w = start
        while w + window <= left.count {
            var el = 1e-12, er = 1e-12
            for k in w..<(w + window) { el += Double(left[k] * left[k]); er += Double(right[k] * right[k]) }
            ild.append(10 * log10(el / er))
            w += window
        }
        guard ild.count > 3 else { return [] }
        let smooth = ild.indices.map { k in ild[max(0, k - 1)...min(ild.count - 1, k + 1)].reduce(0, +) / Double(min(ild.count - 1, k + 1) - max(0, k - 1) + 1) }
        var crossings: [Double] = []
        var search = 1
        for (sign, earliest) in zip(signs, notBefore) {
            // A turn is looked for only in what the sink played after it was sent: the monitor
            // had already delivered the frames before, so nothing rendered later is among them.
            search = max(search, (earliest - start) / window + 1)
            // The last sign change of the smoothed ILD up to the end of the first 10 windows
            // that hold the new side: a window of those may still be on the old side, and
            // interpolating between two windows of one side threw the crossing 50 ms off.
            guard let held = (search..<max(search, ild.count - 10)).first(where: { k in
                      ild[k..<(k + 10)].reduce(0, +) / 10 * sign > 6 }),
                  let before = (search...(held + 9)).last(where: { smooth[$0 - 1] * sign <= 0 && smooth[$0] * sign > 0 })
            else { break }
            // Between windows before−1 (not yet flipped) and before (flipped), interpolated.
            let a = smooth[before - 1], b = smooth[before]
            let position = Double(before - 1) + (b == a ? 0 : a / (a - b))
            crossings.append(Double(start) + (position + 0.5) * Double(window))
            search = held + 10
        }
        return crossings
    }

    static func ms(_ seconds: Double) -> String { String(format: "%.1f", seconds * 1000) }

    static func summary(_ seconds: [Double]) -> String {
        guard !seconds.isEmpty else { return "none" }
        let s = seconds.sorted()
        return "\(ms(s[0])) / \(ms(s[s.count / 2])) / \(ms(s[s.count - 1])) (n=\(s.count))"
    }
}

/// The null sink's clock, reconstructed from the timestamped reads of its monitor.
struct SinkClock {
    let reads: [TimedMonitorCapture.Read]
    /// Median of (burst read time − sink clock), i.e. how late a typical read is compared with
    /// the fastest one.
    let hopJitterSeconds: Double
    /// Frames a burst of reads typically brings: PulseAudio's null sink mixes a wake-up's worth
    /// (~4.7 ms); PipeWire's pulse server sends the monitor in parec's fragments (20 ms).
    let medianBurstFrames: Int
    private let origins: [(frame: Int, origin: Double)]

    init(reads: [TimedMonitorCapture.Read]) {
        self.reads = reads
        // A burst's first read: more than 1 ms after the previous one (reads of one burst come
        // within microseconds; bursts every few ms). Its first frame played when the sink woke.
        var bursts: [(frame: Int, offset: Double)] = []
        for k in 1..<max(1, reads.count) where reads[k].nanoseconds - reads[k - 1].nanoseconds > 1_000_000 {
            let first = reads[k - 1].endFrame
            bursts.append((first, Double(reads[k].nanoseconds) * 1e-9 - Double(first) / EndToEndLatencyTests.rate))
        }
        // The lower envelope over ±0.25 s around each burst: robust to a change of the sink's
        // timing during the run, tight because it holds ~50 bursts.
        origins = bursts.map { burst in
            (burst.frame, bursts.filter { abs($0.frame - burst.frame) < 12000 }.map(\.offset).min()!)
        }
        let jitter = zip(bursts, origins).map { $0.offset - $1.origin }.sorted()
        hopJitterSeconds = jitter.isEmpty ? 0 : jitter[jitter.count / 2]
        let sizes = zip(bursts.dropFirst(), bursts).map { $0.frame - $1.frame }.sorted()
        medianBurstFrames = sizes.isEmpty ? 0 : sizes[sizes.count / 2]
    }

    /// When `frame` played on the sink's clock (CLOCK_MONOTONIC seconds).
    func played(_ frame: Double) -> Double {
        let nearest = origins.min(by: { abs(Double($0.frame) - frame) < abs(Double($1.frame) - frame) })!
        return nearest.origin + frame / EndToEndLatencyTests.rate
    }

    /// When the read that brought `frame` returned (CLOCK_MONOTONIC seconds).
    func mixed(_ frame: Int) -> Double {
        Double(reads.first(where: { $0.endFrame > frame })!.nanoseconds) * 1e-9
    }
}

/// A private sound server (PulseAudio or PipeWire) with a null sink, the daemon playing into it, and the sink's monitor recorded
/// with timestamps; the events are sent at known CLOCK_MONOTONIC times.
final class LatencyRig {
    struct Click { let seconds: Double; let outputLatency: Double? }
    struct Flip {
        let seconds: Double, yawDegrees: Double, openTrack: Bool, motionToRender: Double?, motionToSound: Double?
        /// How many frames the monitor had delivered when the turn was sent.
        let framesRecordedAtSend: Int
    }

    let pulse: PrivatePulse
    let port: Int
    let daemon: Daemon
    let client: RawClient
    let capture: TimedMonitorCapture
    let captureApps: Bool
    /// With `captureApps`: from the capture's start to its first rest, no app playing.
    private(set) var captureRestSeconds: Double?
    /// The machine's own stalls (a virtual machine's host taking its CPUs), for the worst cases
    /// and the node's missed cycles: wakes over 2 ms late, as the soak's (at 5 ms, a run saw its
    /// data thread wait 3.6–5.4 ms for a CPU before four missed cycles, and nothing).
    let stallWatch: MachineStallWatch

    /// For a failure's message: PipeWire's links (`pw-link -l`) and the daemon's log's end.
    func graphAndLog() -> String {
        let links = pulse.kind == .pipeWire
            ? ((try? runTool("/usr/bin/pw-link", ["-l"], display: nil, environment: ["PIPEWIRE_REMOTE": pulse.directory + "/pipewire-0"])) ?? "?")
            : "-"
        return "links:\n\(links)\nthe daemon's log ends:\n" + daemon.log.split(separator: "\n").suffix(30).joined(separator: "\n")
    }

    /// `restAfterSeconds`: the daemon's `--rest-after-seconds` (nil: its default).
    init(_ kind: PrivateSoundServer.Kind, output: String = "pulse", captureApps: Bool = false, restAfterSeconds: Double? = nil,
         stallWatch: MachineStallWatch = MachineStallWatch(thresholdSeconds: 0.002)) throws {
        self.stallWatch = stallWatch
        pulse = try PrivatePulse(kind)
        port = HeadTrackingTests.freeUDPPort()
        // The capture follows its exclusion list in XDG_CONFIG_HOME: a directory of the test's.
        daemon = try Daemon(output: output, extraArguments: ["--opentrack", String(port)] + (captureApps ? ["--capture-apps"] : [])
                                + (restAfterSeconds.map { ["--rest-after-seconds", String($0)] } ?? []),
                            environment: pulse.environment.merging(["XDG_CONFIG_HOME": pulse.directory + "-config"]) { $1 })
        self.captureApps = captureApps
        // The capture first, and the recording pinned to out (node.dont-reconnect): on PipeWire
        // a recording linked while its sink is the default follows the default from then on
        // (WirePlumber does what PulseAudio does): linked before WirePlumber had made our
        // capture sink the default, it was moved there and recorded nothing more (seen by hand).
        if captureApps {
            let daemon = daemon
            try waitUntil(timeoutSeconds: 20, "the capture to start") { daemon.log.contains("app capture: taking other apps' streams") }
            // With no app playing, the capture's first rest comes `restAfterSeconds` after it
            // started (at most: its start is seen here a little late).
            let started = Date()
            try waitUntil(timeoutSeconds: 10, "the capture to rest") { daemon.log.contains("app capture: nothing plays on the capture sink: resting") }
            captureRestSeconds = Date().timeIntervalSince(started)
        }
        client = try RawClient(socketPath: daemon.socketPath)
        // 20 ms fragments: the monitor's latency request stays above the daemon's, so PulseAudio
        // sizes the null sink for the daemon's stream, as it would without the recorder.
        // With PipeWire's own output the graph runs at the daemon's one block (256 frames) and
        // pipewire-pulse hands the monitor over in parec's fragments: 20 ms ones would make every
        // frame read up to 20 ms late. 6 ms fragments (288 frames) stay just above the block.
        capture = try TimedMonitorCapture(environment: pulse.environment,
                                          latencyMilliseconds: kind == .pipeWire && output == "pipewire" ? 6 : 20)
        // An idle null sink starts up to 2 s ahead of real time: wait until the monitor
        // delivers at real-time pace, the daemon's stream included.
        try waitUntil(timeoutSeconds: 10, "the sink to play in real time") {
            let reads = capture.reads
            guard let last = reads.last, last.endFrame > 9600,
                  let earlier = reads.last(where: { $0.nanoseconds <= last.nanoseconds - 250_000_000 }) else { return false }
            let pace = Double(last.endFrame - earlier.endFrame) / (Double(last.nanoseconds - earlier.nanoseconds) * 1e-9)
            return abs(pace / EndToEndLatencyTests.rate - 1) < 0.05
        }
        try waitUntil(timeoutSeconds: 5, "the opentrack listener") { daemon.log.contains("opentrack input on 127.0.0.1:\(port)") }
    }

    deinit {
        _ = capture.finish()
        daemon.stop()  // before the sound server goes (the PrivatePulse's deinit), so it does not reconnect
        try? FileManager.default.removeItem(atPath: pulse.directory + "-config")
    }

    /// Waits for a CLOCK_MONOTONIC time (sub-ms sleeps: the send time must be ours, not the scheduler's).
    private func sleep(until nanoseconds: Int) {
        while monotonicNow() < nanoseconds { usleep(200) }
    }

    /// Clicks on an idle stream straight ahead, ~60 ms apart (at varying phases of the render
    /// blocks), each one STREAM_DATA frame: four samples at 0.6 full scale, then silence.
    func clicks(count: Int) throws -> [Click] {
        let stream = try client.openStream(format: AudioFormat(sampleFormat: .s16le, rateHz: 48000, channels: 1))
        let click = LosslessStreamTests.bytes((0..<256).map { $0 < 4 ? Int16(20000) : 0 })
        var events: [Click] = []
        var next = monotonicNow() + 20_000_000
        for i in 0..<count {
            sleep(until: next)
            try client.send(.streamData(StreamData(streamID: stream, pcm: click[...])))
            let sent = Double(monotonicNow()) * 1e-9
            let output = try HeadTrackingTests.statusDocument(client).output
            events.append(Click(seconds: sent, outputLatency: output.latencySeconds))
            next += 60_000_000 + i * 1_300_000
        }
        try waitForTheSink(after: events.last!.seconds)
        return events
    }

    /// Clicks on one stream, each sent once the daemon has rested again (nothing sounding for
    /// its `--rest-after-seconds`: its output corked or inactive, its tick stopped), then one more 60 ms after the last
    /// (awake), for reference.
    /// `restDelays`: from each click after the first sent to the rest after it.
    func clicksAfterRest(count: Int) throws -> (afterRest: [Click], awake: Click, restDelays: [Double]) {
        let stream = try client.openStream(format: AudioFormat(sampleFormat: .s16le, rateHz: 48000, channels: 1))
        let click = LosslessStreamTests.bytes((0..<256).map { $0 < 4 ? Int16(20000) : 0 })
        func rests() -> Int { daemon.log.components(separatedBy: "nothing sounding: the output and the tick rest").count - 1 }
        func send() throws -> Click {
            try client.send(.streamData(StreamData(streamID: stream, pcm: click[...])))
            return Click(seconds: Double(monotonicNow()) * 1e-9, outputLatency: nil)
        }
        func captureRests() -> Int { daemon.log.components(separatedBy: "app capture: nothing plays on the capture sink: resting").count - 1 }
        var afterRest: [Click] = [], restDelays: [Double] = []
        for _ in 0..<count {
            let restsBefore = rests()
            try waitUntil(timeoutSeconds: 10, "the daemon to rest") { rests() > restsBefore }
            if let previous = afterRest.last { restDelays.append(Double(monotonicNow()) * 1e-9 - previous.seconds) }
            if captureApps { try waitUntil(timeoutSeconds: 10, "the capture to rest") { captureRests() >= 1 } }
            usleep(100_000)
            afterRest.append(try send())
        }
        sleep(until: Int(afterRest.last!.seconds * 1e9) + 60_000_000)
        let awake = try send()
        try waitForTheSink(after: awake.seconds)
        return (afterRest, awake, restDelays)
    }

    /// Noise straight ahead while the head turns between yaw +60° (the noise heard at −60°,
    /// louder on the right) and −60° (louder on the left), ~60 ms apart; two turns by
    /// HEAD_POSE, two by opentrack, and so on.
    func headFlips(count: Int) throws -> (events: [Flip], firstFrame: Int) {
        try sendHeadPose(yawDegrees: 60)
        let noiseClient = try RawClient(socketPath: daemon.socketPath, name: "noise")
        let stream = try noiseClient.openStream(format: AudioFormat(sampleFormat: .s16le, rateHz: 48000, channels: 1))
        var generator = WhiteNoise(seed: 5)
        let seconds = 0.4 + Double(count) * 0.075 + 0.3
        let noise = LosslessStreamTests.bytes((0..<Int(seconds * 48000)).map { _ in Int16(generator.next(amplitude: 12000)) })
        let writer = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            try? noiseClient.write(stream: stream, pcm: noise, bytesPerFrame: 2)
            writer.signal()
        }
        let firstFrame = capture.frameCount
        try waitUntil(timeoutSeconds: 5, "the noise at the sink") {
            let frames = capture.frameCount
            return frames > firstFrame + 2400 && capture.peak(from: frames - 960, to: frames) > 0.01
        }
        var events: [Flip] = []
        // The first turn 250 ms into the noise (its 0.4 s lead-in), not 30 ms: the output may have
        // rested since the clicks, and the first turn sent while the sink and its monitor were
        // resuming was twice found before it was sent (−17 ms, −1.1 s: the monitor's reads and
        // frames out of step then), a measurement artifact.
        var next = monotonicNow() + 250_000_000
        for i in 0..<count {
            sleep(until: next)
            let yaw: Double = i % 2 == 0 ? -60 : 60
            let openTrack = i % 4 >= 2
            if openTrack {
                HeadTrackingTests.sendUDP(HeadTrackingTests.openTrackPacket([0, 0, 0, yaw, 0, 0]), port: port)
            } else {
                try sendHeadPose(yawDegrees: yaw)
            }
            let sent = Double(monotonicNow()) * 1e-9
            let framesRecordedAtSend = capture.frameCount
            var head: StatusDocument.Head?
            try waitUntil(timeoutSeconds: 5, "turn \(i + 1) to be rendered") {
                let now = try HeadTrackingTests.head(client)
                head = now
                return now.posesReceived == i + 2 && now.motionToRenderSeconds != nil
            }
            events.append(Flip(seconds: sent, yawDegrees: yaw, openTrack: openTrack,
                               motionToRender: head?.motionToRenderSeconds,
                               motionToSound: head?.motionToSoundSeconds, framesRecordedAtSend: framesRecordedAtSend))
            next += 60_000_000 + i * 1_300_000
        }
        try waitForTheSink(after: events.last!.seconds)
        _ = writer.wait(timeout: .now() + 5)
        return (events, firstFrame)
    }

    private func sendHeadPose(yawDegrees: Double) throws {
        let q = SceneSoundDSP.Quaternion(yawDegrees: yawDegrees)
        try client.send(.headPose(SceneSoundProtocol.HeadPose(
            timestampNanoseconds: 0, orientation: .init(w: Float(q.w), x: Float(q.x), y: Float(q.y), z: Float(q.z)))))
    }

    /// Until the monitor has delivered everything up to 100 ms after `seconds`.
    private func waitForTheSink(after seconds: Double) throws {
        try waitUntil(timeoutSeconds: 5, "the sink to catch up") {
            Double(capture.reads.last?.nanoseconds ?? 0) * 1e-9 > seconds + 0.1
        }
    }

    /// The null sink's latency as PulseAudio configured it (from `pactl list sinks`).
    func sinkConfiguredLatencySeconds() -> Double? {
        guard let text = try? run("/usr/bin/env", pulse.environment.map { "\($0.key)=\($0.value)" } + ["pactl", "list", "sinks"]),
              let line = text.split(separator: "\n").first(where: { $0.contains("configured") }),
              let range = line.range(of: #"configured (\d+) usec"#, options: .regularExpression)
        else { return nil }
        return Double(line[range].split(separator: " ")[1]).map { $0 * 1e-6 }
    }
}

/// CLOCK_MONOTONIC in nanoseconds: the clock the test, the server and PulseAudio share.
func monotonicNow() -> Int {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}

/// Records the null sink's monitor with `parec` and timestamps every read of its output:
/// CLOCK_MONOTONIC when the read returned and how many frames had arrived by then.
final class TimedMonitorCapture: @unchecked Sendable {
    struct Read { let nanoseconds: Int; let endFrame: Int }

    private let process = Process()
    private let pipe = Pipe()
    private let lock = NSLock()
    private var interleaved: [Float] = []
    private var readLog: [Read] = []
    private var partial: [UInt8] = []
    private var stopping = false
    private let finished = DispatchSemaphore(value: 0)
    private var result: (left: [Float], right: [Float], reads: [Read])?

    init(environment: [String: String], latencyMilliseconds: Int) throws {
        PrivatePulse.configureMonitorCapture(process, environment: environment, latencyMilliseconds: latencyMilliseconds,
                                             into: pipe)
        try process.run()
        let fd = pipe.fileHandleForReading.fileDescriptor
        // A thread of its own, blocked in poll/read: the stamp is taken as the data arrives.
        let thread = Thread { [self] in readLoop(fd) }
        thread.qualityOfService = .userInteractive
        thread.start()
    }

    private func readLoop(_ fd: Int32) {
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while !lock.withLock({ stopping }) {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 50) > 0 else { continue }
            let n = read(fd, &buffer, buffer.count)
            let now = monotonicNow()
            guard n > 0 else { break }
            lock.withLock {
                partial.append(contentsOf: buffer[0..<n])
                let whole = partial.count / 8 * 8
                guard whole > 0 else { return }
                partial.withUnsafeBytes { raw in
                    for i in 0..<(whole / 4) { interleaved.append(raw.loadUnaligned(fromByteOffset: i * 4, as: Float.self)) }
                }
                partial.removeFirst(whole)
                readLog.append(Read(nanoseconds: now, endFrame: interleaved.count / 2))
            }
        }
        finished.signal()
    }

    var frameCount: Int { lock.withLock { interleaved.count / 2 } }
    var reads: [Read] { lock.withLock { readLog } }

    /// Largest absolute sample over frames `from..<to`.
    func peak(from: Int, to: Int) -> Float {
        lock.withLock {
            var peak: Float = 0
            for i in (2 * max(0, from))..<min(interleaved.count, 2 * to) { peak = max(peak, abs(interleaved[i])) }
            return peak
        }
    }

    /// Stops parec (SIGKILL: children of the test runner inherit a blocked SIGTERM) and the
    /// reader; returns the recording. Idempotent.
    func finish() -> (left: [Float], right: [Float], reads: [Read]) {
        if let result { return result }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        lock.withLock { stopping = true }
        _ = finished.wait(timeout: .now() + 2)
        let recording = lock.withLock {
            let frames = interleaved.count / 2
            var left = [Float](repeating: 0, count: frames), right = left
            for i in 0..<frames { left[i] = interleaved[2 * i]; right[i] = interleaved[2 * i + 1] }
            return (left, right, readLog)
        }
        result = recording
        return recording
    }
}
