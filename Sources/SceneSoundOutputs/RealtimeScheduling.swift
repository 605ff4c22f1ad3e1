import Glibc
import Synchronization

/// Real-time scheduling for whichever thread renders (the clocked outputs' own thread,
/// libpulse's mainloop thread): SCHED_FIFO where this process may use it (root, CAP_SYS_NICE
/// or an RLIMIT_RTPRIO), else the lowest nice value RLIMIT_NICE allows, else unchanged.
enum RealtimeScheduling {
    static let fifoPriority: Int32 = 20

    /// Promotes the calling thread as far as permitted; returns what it got.
    static func promoteCurrentThread() -> RenderThreadScheduling {
        var parameters = sched_param()
        var limit = rlimit()
        let rtprio = getrlimit(__rlimit_resource_t(__RLIMIT_RTPRIO.rawValue), &limit) == 0 ? limit.rlim_cur : 0
        for priority in [fifoPriority, Int32(min(UInt64(fifoPriority), UInt64(rtprio)))] where priority > 0 {
            parameters.sched_priority = priority
            if pthread_setschedparam(pthread_self(), SCHED_FIFO, &parameters) == 0 { return .fifo(priority: Int(priority)) }
        }
        // RLIMIT_NICE's soft limit r lets an unprivileged thread go down to nice 20 − r.
        let niceLimit = getrlimit(__rlimit_resource_t(__RLIMIT_NICE.rawValue), &limit) == 0 ? limit.rlim_cur : 0
        let floor = niceLimit >= 40 ? -20 : 20 - Int32(niceLimit)
        // Linux applies PRIO_PROCESS with id 0 to the calling thread alone.
        let thread: id_t = 0
        for nice in stride(from: max(-20, floor), to: 0, by: 1) {
            if setpriority(__priority_which_t(PRIO_PROCESS.rawValue), thread, nice) == 0 { return .nice(Int(nice)) }
        }
        return .nice(Int(getpriority(__priority_which_t(PRIO_PROCESS.rawValue), thread)))
    }
}

/// How the render thread is scheduled, for status.
public enum RenderThreadScheduling: Equatable, Sendable, CustomStringConvertible {
    case fifo(priority: Int)
    /// SCHED_OTHER at this nice value (0: an ordinary thread).
    case nice(Int)

    public var description: String {
        switch self {
        case .fifo(let priority): return "SCHED_FIFO \(priority)"
        case .nice(let value): return "SCHED_OTHER nice \(value)"
        }
    }

    /// One integer for an atomic: FIFO priorities 1…99 as themselves, nice values −20…19 as
    /// 1000 + nice; 0 for "not rendering yet".
    var encoded: Int {
        switch self {
        case .fifo(let priority): return priority
        case .nice(let value): return 1000 + value
        }
    }

    init?(encoded: Int) {
        if encoded == 0 { return nil }
        self = encoded < 500 ? .fifo(priority: encoded) : .nice(encoded - 1000)
    }
}

/// The render thread's scheduling as the output last set it, readable from any thread.
final class RenderThreadSchedulingRecord: @unchecked Sendable {
    private let value = Atomic<Int>(0)
    /// The thread it was set for, so a new render thread (libpulse's, after a restart) is
    /// promoted too, and a running one only once.
    private let thread = Atomic<UInt>(0)

    /// From the render thread, before each block: promotes it the first time it is seen.
    /// A comparison otherwise.
    func promoteIfNew() {
        let me = UInt(pthread_self())
        guard thread.load(ordering: .relaxed) != me else { return }
        thread.store(me, ordering: .relaxed)
        value.store(RealtimeScheduling.promoteCurrentThread().encoded, ordering: .relaxed)
    }

    var current: RenderThreadScheduling? { RenderThreadScheduling(encoded: value.load(ordering: .relaxed)) }
}
