import Foundation
import SceneSoundProtocol

/// The blocks a listener missed on the PipeWire node (`status`'s `recent_underruns`), judged
/// against what the machine did. A miss is explained when the stall watch saw a CPU stand still
/// within the two blocks before it ended; when another thread held the render's CPU during
/// the call — preempted, never waiting of its own accord, its CPU time within the block (the
/// render would have been on time; a real-time thread is preempted only by one above it or by
/// the kernel, in pieces too short for the watch); or when a cycle went by between two calls,
/// the call itself in time, and either the driver woke the render too late for the first cycle
/// missed (run the moment it became runnable, the call would still have ended after that cycle:
/// the driver ran it late, or skipped it and caught up at once — 0.3.65's null sink fires a late
/// timer's next expiry at once — a gap every node of the graph shares) or the render, woken in
/// time, was kept from a CPU (run when it became runnable, the call, never waiting of its own
/// accord, would have ended within that cycle: a real-time thread ready to run is held only by
/// the machine — a host taking the CPU in slices shorter than the watch sees, a kernel section
/// that does not yield, a CPU it was pushed to that did not take it at once). It is the render's
/// own when its call took more CPU time than the block lasts beyond what the machine stood still
/// for during the call: on a virtual machine a thread's CPU clock also runs while the host holds
/// its CPU. Each is described with what the render thread did — its call outlasted the block
/// (and how much of that was CPU time) or the sink's driver ran a cycle without calling it —
/// and the stall within. A miss before the watch began is neither explained nor not: nothing
/// watched the machine then (a test's setup, before its measurement; 2 Dec 2026 `perf sched`
/// showed one such miss, the render thread runnable for 35 ms while a normal-priority thread
/// of the test held its CPU, described as "no stall of the machine").
public struct MissedCycles {
    public let all: [StatusDocument.Underrun]
    public let unexplained: [StatusDocument.Underrun]
    public let ours: [StatusDocument.Underrun]
    /// The misses that ended before the watch began.
    public let unwatched: [StatusDocument.Underrun]
    private let watch: MachineStallWatch

    public init(_ underruns: [StatusDocument.Underrun], blockSeconds: Double, watch: MachineStallWatch) {
        self.watch = watch
        all = underruns
        unwatched = underruns.filter { $0.atMonotonicSeconds < watch.startedSeconds }
        unexplained = underruns.filter {
            $0.atMonotonicSeconds >= watch.startedSeconds
                && watch.stalledSeconds(from: $0.atMonotonicSeconds - 2 * blockSeconds, to: $0.atMonotonicSeconds) == 0
                && !Self.heldOffItsCPU($0) && !Self.driverRanLate($0) && !Self.keptFromACPU($0)
        }
        ours = underruns.filter {
            $0.callCPUSeconds - watch.stalledSeconds(from: $0.atMonotonicSeconds - $0.callSeconds, to: $0.atMonotonicSeconds)
                > $0.blockSeconds
        }
    }

    /// A call that outlasted its block only because another thread ran in its place.
    public static func heldOffItsCPU(_ miss: StatusDocument.Underrun) -> Bool {
        miss.callSeconds > miss.blockSeconds && miss.callCPUSeconds <= miss.blockSeconds
            && (miss.callPreemptions ?? 0) > 0 && miss.callWaits == 0
    }

    /// A cycle the driver woke the render too late for: a cycle went by between two calls, and
    /// even run the moment it became runnable, this call (in time itself) would have ended after
    /// the first cycle missed was over — the driver ran that cycle late, or not at all and its
    /// catch-up at once (0.3.65's null sink fires a late timer's next expiry at once).
    public static func driverRanLate(_ miss: StatusDocument.Underrun) -> Bool {
        guard let woken = wokenAfterFirstMissedWasDue(miss) else { return false }
        return woken + miss.callCPUSeconds > miss.blockSeconds
    }

    /// A render that was ready in time but not given a CPU: a cycle went by between two calls,
    /// and run the moment it became runnable, this call — in time itself, never waiting of its
    /// own accord — would have ended within the first cycle missed.
    public static func keptFromACPU(_ miss: StatusDocument.Underrun) -> Bool {
        guard let woken = wokenAfterFirstMissedWasDue(miss), miss.callWaits == 0 else { return false }
        return woken + miss.callCPUSeconds <= miss.blockSeconds
    }

    /// For a cycle lost between two calls (the driver's clock moved two blocks or more since the
    /// call before, this call itself no longer than its block): how long after the first cycle
    /// missed was due — `driverStep − block` before this call's own — the render thread became
    /// runnable, at the latest. Between calls nothing of ours runs on the data thread: it sleeps
    /// until the driver wakes it, then is runnable until it runs, so it was woken no earlier than
    /// its wait for a CPU since the call before (which may include waits before it slept) ahead
    /// of the call's start.
    private static func wokenAfterFirstMissedWasDue(_ miss: StatusDocument.Underrun) -> Double? {
        guard let step = miss.driverStepSeconds, let behind = miss.behindDriverSeconds, let waited = miss.waitedForCPUSeconds,
              miss.callSeconds <= miss.blockSeconds, step >= 1.9 * miss.blockSeconds else { return nil }
        return step - miss.blockSeconds + behind - waited
    }

    public func describe(_ miss: StatusDocument.Underrun) -> String {
        let ms = { (seconds: Double) in String(format: "%.1f ms", seconds * 1000) }
        let what = miss.callSeconds > miss.blockSeconds
            ? "call took \(ms(miss.callSeconds)) (\(ms(miss.callCPUSeconds)) CPU)"
            : "called \(ms(miss.sincePreviousCallSeconds)) after the last (call \(ms(miss.callCPUSeconds)) CPU)"
        let stalled = watch.stalledSeconds(from: miss.atMonotonicSeconds - max(miss.callSeconds, miss.sincePreviousCallSeconds),
                                           to: miss.atMonotonicSeconds)
        let driver = miss.driverStepSeconds.map { step in
            "; the driver's clock moved \(ms(step)), this call began \(ms(miss.behindDriverSeconds ?? 0)) after its cycle was due, "
                + "the one before \(ms(miss.previousBehindDriverSeconds ?? 0))"
        } ?? ""
        let switches = miss.callWaits.map { "; it waited \($0) times and was preempted \(miss.callPreemptions ?? 0) times in the call" } ?? ""
        let runnable = miss.waitedForCPUSeconds.map { "; runnable but waiting for a CPU \(ms($0)) since the call before" } ?? ""
        let machine = miss.atMonotonicSeconds < watch.startedSeconds
            ? "before the machine was watched" : "the machine stalled \(ms(stalled)) meanwhile"
        return String(format: "at %.3f s: ", miss.atMonotonicSeconds) + what + " for a \(ms(miss.blockSeconds)) block" + driver + switches + runnable + "; "
            + machine
    }

    public func describe(_ misses: [StatusDocument.Underrun]) -> String { misses.map(describe).joined(separator: "; ") }
}

extension MissedCycles {
    /// A captured app's gap: its 10 ms window in the recording, and when that window was played
    /// at the sink (CLOCK_MONOTONIC seconds, `MonitorRecording.monotonicSeconds(ofFrame:rateHz:)`).
    public struct Gap: Sendable {
        public let window: Int
        public let atMonotonicSeconds: Double
        /// Which captured app (the caller's numbering, as in `drySpells`).
        public let app: Int
        public init(window: Int, atMonotonicSeconds: Double, app: Int) {
            self.window = window
            self.atMonotonicSeconds = atMonotonicSeconds
            self.app = app
        }
    }

    /// The threads that deliver PulseAudio's recordings to the daemon, watched for how long each
    /// waited for a CPU: the server's main thread, which relays every record stream, and the
    /// daemon's capture thread, which reads them.
    public struct RecordingThreads: Sendable {
        public let watch: ThreadWaitWatch
        public let server: ThreadWaitWatch.WatchedThread
        public let capture: ThreadWaitWatch.WatchedThread
        /// Our capture thread waiting this long for a CPU over queues run dry (and for half the
        /// longest spell) makes them ours: shorter waits are the scheduler's everyday.
        public static let ownWaitSeconds = 0.005
        /// The leading time a spell's cause may take before the render finds the queue short:
        /// the delivery late by as much as the queue held.
        public static let leadSeconds = 0.05
        public init(watch: ThreadWaitWatch, server: ThreadWaitWatch.WatchedThread, capture: ThreadWaitWatch.WatchedThread) {
            self.watch = watch
            self.server = server
            self.capture = capture
        }

        /// Watching from now, on PulseAudio (nil on PipeWire, where no recording remains): the
        /// server's main thread and the daemon `daemon`'s capture thread, which must be running.
        public static func watch(_ server: PrivateSoundServer, daemon: pid_t) throws -> RecordingThreads? {
            guard server.kind == .pulseAudio else { return nil }
            guard let serverPID = server.processID(named: "pulseaudio"),
                  let capture = ThreadWaitWatch.WatchedThread.named("scenesound-capture", inProcess: daemon, as: "our capture thread").first else {
                throw ToolFailure(command: "watch the recordings' threads", status: 0, output: "PulseAudio's main thread or the daemon's capture thread not found")
            }
            let main = ThreadWaitWatch.WatchedThread(name: "the server's main thread", pid: serverPID, tid: serverPID)
            return RecordingThreads(watch: ThreadWaitWatch(threads: [main, capture]), server: main, capture: capture)
        }

        /// How long each waited for a CPU over queues run dry from `from` to `to`, and the lead
        /// before; nil where the watch did not sample them both.
        func waits(from: Double, to: Double) -> (server: Double, capture: Double, description: String)? {
            guard let server = watch.waitedSeconds(self.server, from: from - Self.leadSeconds, to: to),
                  let capture = watch.waitedSeconds(self.capture, from: from - Self.leadSeconds, to: to) else { return nil }
            return (server, capture, String(format: "the server's main thread waited %.1f ms for a CPU, our capture thread %.1f ms", server * 1000, capture * 1000))
        }
    }

    /// A spell in which a captured app's queue ran dry (`status`'s `recent_dry_spells`).
    public typealias DrySpell = (startedMonotonicSeconds: Double, seconds: Double)

    /// How near a moment of the output's own record a gap must lie to be that moment's: the
    /// recording's placing (a 20 ms fragment, the poll that saw its end), the sound server's
    /// notice reaching the daemon, a late cycle recorded when its call ended.
    public static let gapMomentToleranceSeconds = 0.25

    /// What excuses a run's captured apps having gaps the direct ones lack, or nil when nothing
    /// does (then the gaps were made on the capture's own path, and the test fails). Each is the
    /// known issue of a busy host (issue 28, item 3), a gap in every captured app at once, and
    /// every captured gap must be accounted for by one of them, judged with its run (the gap
    /// windows in a row, any app's, it lies in) and `gapMomentToleranceSeconds` either side:
    /// - at a moment the output missed audio, by the daemon's status: PulseAudio's underflow
    ///   notices, the PipeWire node's late cycles — the sound server played a cycle without our
    ///   render, which a direct app's own buffer hides — with none of the misses our render's own
    ///   (its call's CPU time over its block);
    /// - at a moment the PipeWire node raised the graph's quantum for: a cycle of ours that began
    ///   within a quarter period of a miss, or missed (`graph_quantum.c`). Such a near miss ends
    ///   after the driver's next cycle when the driver itself was on time, a cycle played without
    ///   us that the node cannot see from its own calls;
    /// - where its app's captured queue ran dry together with another captured app's
    ///   (`drySpells`, by app), in a run whose output underran too: the recordings late for
    ///   several apps at once and the output late as well, the sound server's doing, not one
    ///   stream's queue — unless `recordingThreads` shows our capture thread waiting for a CPU
    ///   over the spells, for half the longest at least and no less than the server's main
    ///   thread: then it is ours, and fails;
    /// - recorded side by side (`directGapWindows`), within a window of a direct app's gap: the
    ///   sink or the machine, at one moment for both paths.
    /// Underruns the status counts without their moment (more than it keeps, or PipeWire's
    /// cycles with no buffer) excuse the whole run, as before the moments were kept: said so.
    public static func excuseForCapturedGaps(before: StatusDocument.Output, after: StatusDocument.Output, watch: MachineStallWatch,
                                             capturedGaps: [Gap], windowSeconds: Double, drySpells: [Int: [DrySpell]] = [:],
                                             directGapWindows: Set<Int>? = nil, recordingThreads: RecordingThreads? = nil) -> String? {
        guard !capturedGaps.isEmpty else { return nil }
        let underruns = after.underruns - before.underruns
        let newer = { (moments: [Double]?, than: [Double]?) in
            let seen = than?.max() ?? -.infinity
            return (moments ?? []).filter { $0 > seen }
        }
        let lateCycles = newer(after.recentUnderruns?.map(\.atMonotonicSeconds), before.recentUnderruns?.map(\.atMonotonicSeconds))
        let underflows = newer(after.recentUnderflowsAtMonotonicSeconds, before.recentUnderflowsAtMonotonicSeconds)
        let raises = newer(after.graphQuantumRaisesAtMonotonicSeconds, before.graphQuantumRaisesAtMonotonicSeconds)
        let misses = (after.recentUnderruns ?? []).filter { lateCycles.contains($0.atMonotonicSeconds) }
        let ours = MissedCycles(misses, blockSeconds: Double(after.blockFrames) / after.rateHz, watch: watch).ours
        // A miss of our render's own excuses nothing, and no moment of the record then does.
        let untimed = underruns - lateCycles.count - underflows.count
        if untimed > 0 && ours.isEmpty {
            return "the output underran \(underruns) time(s) meanwhile, \(untimed) of them at moments not kept, none our render's overrun"
        }
        let moments = !ours.isEmpty ? []
            : (lateCycles + underflows).map { ($0, "the output missed audio") } + raises.map { ($0, "the quantum was raised") }
        // A dropout of many windows in a row is one event: a sound server held up for a second
        // catches up at once, and its underflow notice comes as the dropout ends. So each gap is
        // judged with the run of gap windows (any app's) it lies in.
        let windows = Set(capturedGaps.map(\.window)).sorted()
        var runOfWindow: [Int: ClosedRange<Int>] = [:], first = 0
        for last in windows.indices where last + 1 == windows.count || windows[last + 1] != windows[last] + 1 {
            for window in windows[first ... last] { runOfWindow[window] = windows[first] ... windows[last] }
            first = last + 1
        }
        func run(of gap: Gap) -> (from: Double, to: Double) {
            let windowsInRun = runOfWindow[gap.window]!
            return (gap.atMonotonicSeconds - Double(gap.window - windowsInRun.lowerBound) * windowSeconds,
                    gap.atMonotonicSeconds + Double(windowsInRun.upperBound - gap.window + 1) * windowSeconds)
        }
        // Queues run dry together excuse a gap only in a run whose output underran too, not by
        // our render: the sound server late for our output as for our recordings. Our own
        // capture thread held up starves the queues and leaves the output alone (red-checked),
        // and so does our capture thread kept waiting for a CPU, which `recordingThreads` sees.
        let underranMeanwhile = underruns > 0 && ours.isEmpty
        var drySpellWaits: Set<String> = []
        func sharedDrySpellCause(of gap: Gap, from: Double, to: Double) -> String? {
            let spells = drySpells.mapValues { $0.filter { $0.startedMonotonicSeconds <= to && $0.startedMonotonicSeconds + $0.seconds >= from } }
                .filter { !$0.value.isEmpty }
            guard spells[gap.app] != nil, spells.count >= 2 else { return nil }
            let all = spells.values.joined(), dryFrom = all.map(\.startedMonotonicSeconds).min()!, longest = all.map(\.seconds).max()!
            let dryTo = all.map { $0.startedMonotonicSeconds + $0.seconds }.max()!
            if let recordingThreads, let waits = recordingThreads.waits(from: dryFrom, to: dryTo) {
                drySpellWaits.insert(String(format: "%d apps' queues dry up to %.1f ms from %.3f s: ", spells.count, longest * 1000, dryFrom)
                                     + waits.description)
                if waits.capture >= max(longest / 2, RecordingThreads.ownWaitSeconds), waits.capture >= waits.server { return nil }
            } else if recordingThreads != nil {
                drySpellWaits.insert(String(format: "%d apps' queues dry from %.3f s, the threads not watched then", spells.count, dryFrom))
            }
            return underranMeanwhile ? "its captured queue ran dry with other apps' in a run the output underran" : nil
        }
        var explained: [String: Int] = [:], unexplained: [Gap] = [], offsets: [Double] = []
        for gap in capturedGaps {
            let span = run(of: gap)
            let distance = { (moment: Double) in moment < span.from ? span.from - moment : moment > span.to ? moment - span.to : 0 }
            let nearest = moments.min { distance($0.0) < distance($1.0) }
            if let nearest, distance(nearest.0) <= gapMomentToleranceSeconds {
                explained[nearest.1 + String(format: " at %.3f s", nearest.0), default: 0] += 1
                offsets.append(gap.atMonotonicSeconds - nearest.0)
            } else if let cause = sharedDrySpellCause(of: gap, from: span.from - gapMomentToleranceSeconds, to: span.to + gapMomentToleranceSeconds) {
                explained[cause, default: 0] += 1
            } else if let directGapWindows, (gap.window - 1 ... gap.window + 1).contains(where: directGapWindows.contains) {
                explained["a direct app's gap within a window", default: 0] += 1
            } else {
                unexplained.append(gap)
            }
        }
        guard unexplained.isEmpty else {
            let unaccounted = unexplained.prefix(8).map { gap in
                let nearest = moments.map { $0.0 - gap.atMonotonicSeconds }.min { abs($0) < abs($1) }
                return String(format: "%.3f s", gap.atMonotonicSeconds) + (nearest.map { String(format: " (nearest moment %+.3f s)", $0) } ?? "")
            }
            print("captured gaps that no moment of the output's record, no queues run dry together nor a direct gap account for: \(unaccounted.joined(separator: ", "))"
                  + " of \(capturedGaps.count); moments: \(moments.map { String(format: "%.3f ", $0.0) + $0.1 })"
                  + (drySpellWaits.isEmpty ? "" : "; queues run dry together: \(drySpellWaits.sorted())"))
            return nil
        }
        let spread = offsets.isEmpty ? "" : String(format: "; the gaps %+.3f to %+.3f s from their moments", offsets.min()!, offsets.max()!)
        return "every captured gap's run lay within \(gapMomentToleranceSeconds) s of one of: " + explained.sorted { $0.key < $1.key }
            .map { "\($0.key) (\($0.value))" }.joined(separator: ", ") + spread + (drySpellWaits.isEmpty ? "" : "; queues run dry together: \(drySpellWaits.sorted())")
    }
}
