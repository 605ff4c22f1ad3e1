import Glibc
import Synchronization

/// The scheduling a render thread obtained: real-time where the system permits it (root, or
/// an `rtprio` limit), else the highest nice level permitted, else none. Status reports it so
/// that an overloaded block can be told apart from a thread the kernel kept waiting.
package enum ThreadScheduling: Sendable, Equatable, CustomStringConvertible {
    case realtimeFIFO(priority: Int32)
    case niced(level: Int32)
    case normal

    /// SCHED_FIFO at a moderate priority: above every normal thread, below the kernel's own
    /// (and below PipeWire's data thread, 88 by default, and rtkit's usual 20 limit allows it).
    package static let realtimePriority: Int32 = 20

    /// Linux's flag (`<linux/sched.h>`, not in Swift's Glibc): threads and processes the thread
    /// starts begin at normal scheduling instead of inheriting real-time.
    static let resetOnFork: Int32 = 0x4000_0000

    /// Asks for the best scheduling available for the calling thread and says what it got.
    /// Real-time with `resetOnFork`: nothing a render thread starts — a thread a callback
    /// makes, a process — runs real-time by inheritance, above every normal thread.
    package static func requestRealtimeForCurrentThread() -> ThreadScheduling {
        var parameters = sched_param()
        parameters.sched_priority = realtimePriority
        // Linux schedules threads: 0 is the calling thread.
        if sched_setscheduler(0, SCHED_FIFO | resetOnFork, &parameters) == 0 {
            return .realtimeFIFO(priority: realtimePriority)
        }
        // Nice is per thread on Linux, and `who` 0 is the calling thread: the lowest level allowed.
        for level: Int32 in [-11, -5, -1] where setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, level) == 0 {
            return .niced(level: level)
        }
        return .normal
    }

    /// What the calling thread runs with now.
    /// (From the kernel, not `pthread_getschedparam`: glibc keeps what it last saw of a thread.)
    package static func current() -> ThreadScheduling {
        var parameters = sched_param()
        if sched_getscheduler(0) & ~resetOnFork == SCHED_FIFO, sched_getparam(0, &parameters) == 0 {
            return .realtimeFIFO(priority: parameters.sched_priority)
        }
        errno = 0
        let level = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
        return level < 0 && errno == 0 ? .niced(level: level) : .normal
    }

    /// For status: `SCHED_FIFO 20`, `nice -11`, `normal`.
    package var description: String {
        switch self {
        case .realtimeFIFO(let priority): "SCHED_FIFO \(priority)"
        case .niced(let level): "nice \(level)"
        case .normal: "normal"
        }
    }
}

extension ThreadScheduling {
    /// As one integer, for an atomic: 0 normal, 1…99 a FIFO priority, 100 − level when niced.
    var code: Int {
        switch self {
        case .normal: 0
        case .realtimeFIFO(let priority): Int(priority)
        case .niced(let level): 100 - Int(level)
        }
    }

    init(code: Int) {
        switch code {
        case 1...99: self = .realtimeFIFO(priority: Int32(code))
        case 100...: self = .niced(level: Int32(100 - code))
        default: self = .normal
        }
    }
}

/// Asks once, on whichever thread renders, for real-time scheduling, and keeps what it got
/// where any thread can read it without a lock (status). For render callbacks on threads we do
/// not create, such as libpulse's mainloop thread: the first block asks, every later block
/// costs one relaxed atomic load.
package final class RealtimeSchedulingRequest: Sendable {
    private let obtainedCode = Atomic<Int>(-1)  // −1: not asked yet

    package init() {}

    @inline(__always)
    package func ensureRequestedOnCurrentThread() {
        guard obtainedCode.load(ordering: .relaxed) < 0 else { return }
        obtainedCode.store(ThreadScheduling.requestRealtimeForCurrentThread().code, ordering: .relaxed)
    }

    /// As `ensureRequestedOnCurrentThread`, but a thread that is real-time already (libpipewire's
    /// data thread, raised by its module-rt: SCHED_FIFO 88 on 0.3.65 with client-rt.conf) is
    /// left at its priority and recorded so, not lowered to ours.
    @inline(__always)
    package func ensureRealtimeOnCurrentThread() {
        guard obtainedCode.load(ordering: .relaxed) < 0 else { return }
        let current = ThreadScheduling.current()
        if case .realtimeFIFO = current {
            obtainedCode.store(current.code, ordering: .relaxed)
        } else {
            obtainedCode.store(ThreadScheduling.requestRealtimeForCurrentThread().code, ordering: .relaxed)
        }
    }

    /// What the rendering thread runs with; nil until it has rendered.
    package var obtained: ThreadScheduling? {
        let code = obtainedCode.load(ordering: .relaxed)
        return code < 0 ? nil : ThreadScheduling(code: code)
    }
}
