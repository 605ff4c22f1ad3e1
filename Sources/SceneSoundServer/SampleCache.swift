/// One uploaded sample, converted once to what the engine plays: interleaved Float at the
/// engine rate. Immutable; a play copies it into its own ring, so eviction never cuts a play.
final class CachedSample {
    let name: String
    let channelCount: Int
    let samples: [Float]

    init(name: String, channelCount: Int, samples: [Float]) {
        self.name = name
        self.channelCount = channelCount
        self.samples = samples
    }

    var frameCount: Int { samples.count / channelCount }
    var byteCount: Int { samples.count * MemoryLayout<Float>.size }
}

/// The server-wide sample cache: bounded in bytes, least recently used out first. Confined
/// to the event loop.
struct SampleCache {
    let capacityBytes: Int
    private var entries: [String: (sample: CachedSample, lastUse: UInt64)] = [:]
    private var useCounter: UInt64 = 0
    private(set) var totalBytes = 0

    init(capacityBytes: Int) { self.capacityBytes = capacityBytes }

    var count: Int { entries.count }

    /// The sample, marked as just used.
    mutating func use(_ name: String) -> CachedSample? {
        guard let entry = entries[name] else { return nil }
        useCounter += 1
        entries[name]?.lastUse = useCounter
        return entry.sample
    }

    func contains(_ name: String) -> Bool { entries[name] != nil }

    /// Adds (or replaces) a sample, evicting the least recently used until it fits; returns
    /// the names evicted. The caller checked that the sample alone fits.
    @discardableResult
    mutating func insert(_ sample: CachedSample) -> [String] {
        precondition(sample.byteCount <= capacityBytes)
        remove(sample.name)
        var evicted: [String] = []
        while totalBytes + sample.byteCount > capacityBytes,
              let oldest = entries.min(by: { $0.value.lastUse < $1.value.lastUse })?.key {
            remove(oldest)
            evicted.append(oldest)
        }
        useCounter += 1
        entries[sample.name] = (sample, useCounter)
        totalBytes += sample.byteCount
        return evicted
    }

    private mutating func remove(_ name: String) {
        guard let old = entries.removeValue(forKey: name) else { return }
        totalBytes -= old.sample.byteCount
    }
}
