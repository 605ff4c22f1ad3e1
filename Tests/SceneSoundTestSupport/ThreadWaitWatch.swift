import Foundation
import Synchronization

/// How long given threads waited for a CPU, over time: the kernel's `run_delay` of each
/// (`/proc/PID/task/TID/schedstat`, the second field: nanoseconds spent runnable on a run
/// queue, not running), sampled every few milliseconds from a thread of its own; the kernel
/// adds a wait when the thread gets its CPU back, so a wait shows once it is over. A thread late
/// because it waited for a CPU shows here; one late because it slept, blocked on a lock or
/// was busy does not. Tests use it to tell whose thread a late delivery was: the sound
/// server's, kept off a CPU, or the daemon's.
public final class ThreadWaitWatch: @unchecked Sendable {
    public struct WatchedThread: Sendable, Hashable {
        public let name: String
        public let pid: pid_t
        public let tid: pid_t
        public init(name: String, pid: pid_t, tid: pid_t) {
            self.name = name
            self.pid = pid
            self.tid = tid
        }

        /// The threads of process `pid` whose kernel name (comm, at most 15 characters) is `comm`.
        public static func named(_ comm: String, inProcess pid: pid_t, as name: String) -> [WatchedThread] {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
            return tasks.compactMap(pid_t.init).filter { tid in
                (try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/comm", encoding: .utf8))?
                    .trimmingCharacters(in: .whitespacesAndNewlines) == String(comm.prefix(15))
            }.map { WatchedThread(name: name, pid: pid, tid: $0) }
        }
    }

    /// A sample: CLOCK_MONOTONIC seconds, and each thread's run_delay then (seconds).
    private struct Sample {
        let atSeconds: Double
        let waitedSeconds: [Double?]
    }

    public let threads: [WatchedThread]
    public let intervalSeconds: Double
    private let samples = Mutex<[Sample]>([])
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    public init(threads: [WatchedThread], intervalSeconds: Double = 0.005) {
        self.threads = threads
        self.intervalSeconds = intervalSeconds
        let paths = threads.map { "/proc/\($0.pid)/task/\($0.tid)/schedstat" }
        Thread.detachNewThread { [self] in
            while !stopping.load(ordering: .relaxed) {
                let sample = Sample(atSeconds: MachineStallWatch.nowSeconds(), waitedSeconds: paths.map(Self.runDelaySeconds))
                samples.withLock { $0.append(sample) }
                Thread.sleep(forTimeInterval: intervalSeconds)
            }
            finished.signal()
        }
    }

    deinit { stop() }

    /// Idempotent.
    public func stop() {
        guard !stopping.exchange(true, ordering: .relaxed) else { return }
        finished.wait()
    }

    /// How long `thread` waited for a CPU from `from` to `to` (CLOCK_MONOTONIC seconds), from
    /// the samples around them (so up to one interval more either side); nil where it was not
    /// sampled (gone, or outside the watch).
    public func waitedSeconds(_ thread: WatchedThread, from: Double, to: Double) -> Double? {
        guard let index = threads.firstIndex(of: thread) else { return nil }
        return samples.withLock { samples in
            // Taken in time order: the first sample at or after a moment, by halving.
            func firstIndex(atOrAfter seconds: Double) -> Int {
                var low = 0, high = samples.count
                while low < high {
                    let middle = (low + high) / 2
                    if samples[middle].atSeconds < seconds { low = middle + 1 } else { high = middle }
                }
                return low
            }
            let afterFrom = firstIndex(atOrAfter: from), afterTo = firstIndex(atOrAfter: to)
            let before = afterFrom < samples.count && samples[afterFrom].atSeconds == from ? samples[afterFrom]
                : afterFrom > 0 ? samples[afterFrom - 1] : nil
            let after = afterTo < samples.count ? samples[afterTo] : nil
            guard let start = before?.waitedSeconds[index], let end = after?.waitedSeconds[index] else { return nil }
            return end - start
        }
    }

    /// When the first sample was taken (CLOCK_MONOTONIC seconds): nothing before it is seen.
    public var watchingSinceSeconds: Double? { samples.withLock { $0.first?.atSeconds } }

    /// Each thread's wait over the whole watch, as "name (tid) 12.3 ms".
    public var summary: String {
        let (first, last) = samples.withLock { ($0.first, $0.last) }
        return threads.indices.map { index in
            let waited = first?.waitedSeconds[index].flatMap { start in last?.waitedSeconds[index].map { $0 - start } }
            return "\(threads[index].name) (\(threads[index].tid)) " + (waited.map { String(format: "%.1f ms", $0 * 1000) } ?? "not seen")
        }.joined(separator: ", ")
    }

    /// The calling thread's kernel ID (`/proc/thread-self` reads "PID/task/TID").
    public static func currentThreadID() -> pid_t {
        pid_t((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self"))?.split(separator: "/").last ?? "") ?? 0
    }

    private static func runDelaySeconds(_ path: String) -> Double? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count >= 2, let nanoseconds = Double(fields[1]) else { return nil }
        return nanoseconds * 1e-9
    }
}
