import Foundation
import SceneSoundPlatform

/// Gives the heap's free pages back to the system. A burst of captured streams (on PipeWire:
/// recordings, pw_streams, feeds made and freed by the hundred) leaves the heap as large as
/// its peak, the freed chunks kept resident below whatever is still in use: measured after
/// bursts of 100 streams, the bytes in use grew 0.25 kB a stream while the daemon's own memory
/// grew by up to 34 MB a burst. glibc trims only the top of a heap by itself; `malloc_trim`
/// returns every free page. Called once as the capture goes to rest after taking streams,
/// never on the render thread: it holds each arena's lock while it walks the free chunks.
enum HeapTrim {

    struct Outcome {
        /// `RssAnon` before and after, in kB.
        var beforeKilobytes: Int
        var afterKilobytes: Int
        var seconds: Double
    }

    static func giveBack() -> Outcome {
        let before = ownKilobytes()
        let started = MonotonicClock.nowSeconds()
        GlibcMalloc.trim(padBytes: 0)
        let seconds = MonotonicClock.nowSeconds() - started
        return Outcome(beforeKilobytes: before, afterKilobytes: ownKilobytes(), seconds: seconds)
    }

    /// The process's own resident memory (`RssAnon`: heap and stacks), in kB; 0 if unreadable.
    static func ownKilobytes() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("RssAnon:") }) else { return 0 }
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }
}

/// glibc's malloc calls of <malloc.h>, which Swift's Glibc module leaves out: found at run time
/// and called with C's convention. Each returns nil where the C library has no such call.
enum GlibcMalloc {
    private static func function<T>(_ name: String, as type: T.Type) -> T? {
        dlsym(UnsafeMutableRawPointer(bitPattern: 0), name).map { unsafeBitCast($0, to: type) }  // RTLD_DEFAULT
    }

    /// `malloc_trim`: 1 if memory was given back.
    @discardableResult
    static func trim(padBytes: Int) -> Int32? {
        function("malloc_trim", as: (@convention(c) (Int) -> Int32).self)?(padBytes)
    }

    /// `mallopt(M_ARENA_MAX, count)`: 1 on success.
    @discardableResult
    static func setArenaMaximum(_ count: Int32) -> Int32? {
        let arenaMaximumOption: Int32 = -8  // M_ARENA_MAX
        return function("mallopt", as: (@convention(c) (Int32, Int32) -> Int32).self)?(arenaMaximumOption, count)
    }
}
