/// When the tracker may publish: at most once per `minimumIntervalNanoseconds`, and otherwise
/// at once. A lone event is published as soon as it is read; during a drag the first event of
/// each interval is held until the interval ends, so the newest state is never older than one
/// interval when it reaches the consumer (leading edge plus a trailing deadline, no idle wait).
package struct PublishSchedule: Sendable {
    package let minimumIntervalNanoseconds: UInt64
    package private(set) var lastPublishNanoseconds: UInt64?

    package init(minimumIntervalNanoseconds: UInt64) {
        self.minimumIntervalNanoseconds = minimumIntervalNanoseconds
    }

    /// 0 when publishing is allowed now.
    package func nanosecondsUntilAllowed(now: UInt64) -> UInt64 {
        guard let last = lastPublishNanoseconds else { return 0 }
        let allowed = last + minimumIntervalNanoseconds
        return allowed > now ? allowed - now : 0
    }

    package mutating func didPublish(now: UInt64) { lastPublishNanoseconds = now }
}
