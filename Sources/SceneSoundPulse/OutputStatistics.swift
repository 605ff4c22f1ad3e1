import SceneSoundPlatform
import Synchronization

/// Counters written on the PulseAudio thread and read from anywhere, lock-free.
final class OutputStatistics: Sendable {
    private let reconnects = Atomic<Int>(0)
    /// The latency's Double bit pattern; NaN while no stream is playing.
    private let latencyBits = Atomic<UInt64>(Double.nan.bitPattern)
    /// The buffer asked of the server now (tlength, seconds' bit pattern): the configured target,
    /// or more after underflows (`PlaybackStream`); NaN while no stream is playing.
    private let targetBits = Atomic<UInt64>(Double.nan.bitPattern)

    /// When each underflow notice reached us (CLOCK_MONOTONIC ns), one record per notice,
    /// written on the PulseAudio thread; their count is the underruns'.
    private let underrunNanoseconds = LatestRecords(keeping: 8)

    var underrunCount: Int { underrunNanoseconds.count }

    /// The latest underflows' moments, newest first (CLOCK_MONOTONIC seconds).
    var recentUnderrunsAtMonotonicSeconds: [Double] { underrunNanoseconds.newestFirst.map { Double($0) * 1e-9 } }
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
    func recordUnderrun(atMonotonicNanoseconds nanoseconds: Int) { underrunNanoseconds.record(UInt64(nanoseconds)) }
    func recordReconnect() { reconnects.add(1, ordering: .relaxed) }
    func recordLatency(seconds: Double?) {
        latencyBits.store((seconds ?? .nan).bitPattern, ordering: .relaxed)
    }
}
