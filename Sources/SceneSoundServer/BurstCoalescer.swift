/// Merges identical sounds requested in a burst (twenty bells in 100 ms): a request within
/// `windowSeconds` of the last identical one that played is coalesced into it. The window runs
/// from the play that sounded, not from the latest request, so a sustained stream of requests
/// still sounds once per window.
struct BurstCoalescer {
    var windowSeconds: Double
    private var lastPlayedSeconds: [String: Double] = [:]

    init(windowSeconds: Double) { self.windowSeconds = windowSeconds }

    /// True: play it (and start a new window). False: coalesce it into the one playing.
    mutating func admit(_ key: String, atSeconds now: Double) -> Bool {
        guard windowSeconds > 0 else { return true }
        if let last = lastPlayedSeconds[key], now - last < windowSeconds { return false }
        if lastPlayedSeconds.count >= 1024 {
            // Keys of long-finished windows mean nothing any more.
            lastPlayedSeconds = lastPlayedSeconds.filter { now - $0.value < windowSeconds }
        }
        lastPlayedSeconds[key] = now
        return true
    }
}
