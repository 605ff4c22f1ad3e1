import Synchronization

/// Counters written on the PulseAudio thread and read from anywhere, lock-free.
final class OutputStatistics: Sendable {
    private let underruns = Atomic<Int>(0)
    private let reconnects = Atomic<Int>(0)
    /// The latency's Double bit pattern; NaN while no stream is playing.
    private let latencyBits = Atomic<UInt64>(Double.nan.bitPattern)
    /// The buffer asked of the server now (tlength, seconds' bit pattern): the configured target,
    /// or more after underflows (`PlaybackStream`); NaN while no stream is playing.
    private let targetBits = Atomic<UInt64>(Double.nan.bitPattern)

    /// When the latest underflow notices reached us (CLOCK_MONOTONIC ns), by underrun number:
    /// written on the PulseAudio thread, slot before count, at most one per notice.
    private static let recordedUnderruns = 8
    private let underrunNanoseconds: InlineArray<8, Atomic<Int>> = InlineArray { _ in Atomic(0) }

    var underrunCount: Int { underruns.load(ordering: .acquiring) }

    /// The latest underflows' moments, newest first (CLOCK_MONOTONIC seconds).
    var recentUnderrunsAtMonotonicSeconds: [Double] {
        let count = underruns.load(ordering: .acquiring)
        return (max(0, count - Self.recordedUnderruns) ..< count).reversed().map {
            Double(underrunNanoseconds[$0 % Self.recordedUnderruns].load(ordering: .relaxed)) * 1e-9
        }
    }
    var reconnectCount: Int { reconnects.load(ordering: .relaxed) }

    var latencySeconds: Double? {
        let seconds = Double(bitPattern: latencyBits.load(ordering: .relaxed))
        return seconds.isNaN ? nil : seconds
    }

    var targetLatencySeconds: Double? {
        let seconds = Double(bitPattern: targetBits.load(ordering: .relaxed))
        return seconds.isNaN ? nil : seconds
    }

    func recordTargetLatency(seconds: Double?) { targetBits.store((seconds ?? .nan).bitPattern, ordering: .relaxed) }
    func recordUnderrun(atMonotonicNanoseconds nanoseconds: Int) {
        let count = underruns.load(ordering: .relaxed)
        underrunNanoseconds[count % Self.recordedUnderruns].store(nanoseconds, ordering: .relaxed)
        underruns.store(count + 1, ordering: .releasing)
    }
    func recordReconnect() { reconnects.add(1, ordering: .relaxed) }
    func recordLatency(seconds: Double?) {
        latencyBits.store((seconds ?? .nan).bitPattern, ordering: .relaxed)
    }
}
