import Glibc

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

    /// Asks for the best scheduling available for the calling thread and says what it got.
    package static func requestRealtimeForCurrentThread() -> ThreadScheduling {
        var parameters = sched_param()
        parameters.sched_priority = realtimePriority
        if pthread_setschedparam(pthread_self(), SCHED_FIFO, &parameters) == 0 {
            return .realtimeFIFO(priority: realtimePriority)
        }
        // Nice is per thread on Linux, and `who` 0 is the calling thread: the lowest level allowed.
        for level: Int32 in [-11, -5, -1] where setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, level) == 0 {
            return .niced(level: level)
        }
        return .normal
    }

    /// What the calling thread runs with now.
    package static func current() -> ThreadScheduling {
        var policy: Int32 = 0
        var parameters = sched_param()
        if pthread_getschedparam(pthread_self(), &policy, &parameters) == 0, policy == SCHED_FIFO {
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
