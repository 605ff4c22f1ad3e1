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

    var underrunCount: Int { underruns.load(ordering: .relaxed) }
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
    func recordUnderrun() { underruns.add(1, ordering: .relaxed) }
    func recordReconnect() { reconnects.add(1, ordering: .relaxed) }
    func recordLatency(seconds: Double?) {
        latencyBits.store((seconds ?? .nan).bitPattern, ordering: .relaxed)
    }
}
