import Foundation
import SceneSoundTestSupport
import Synchronization
import Testing

/// `MachineStallWatch.takeTrials`, which every latency test's trials go through: a trial the
/// machine disturbed is taken again, and when every one was, the last is judged with its bars
/// a known issue — never passed unjudged, never failed for what the host did.
@Suite(.serialized) struct MachineStallWatchTests {
    @Test func aTrialTheMachineStalledIsTakenAgainAndTheLastJudgedAsAKnownIssue() throws {
        let takes = Atomic<Int>(0), judged = Atomic<Int>(0)
        try MachineStallWatch.takeTrials("a trial with CPU 0 held for 15 ms") { watch in
            takes.add(1, ordering: .relaxed)
            try MachineStallWatch.holdCPU0(forSeconds: 0.015)
            // The spin over, the watch's thread on CPU 0 wakes and records it.
            try waitUntil(timeoutSeconds: 5, "the watch to record the stall") { !watch.stalls.isEmpty }
        } judge: {
            judged.add(1, ordering: .relaxed)
            Issue.record("a bar the stalled machine failed")
        }
        #expect(takes.load(ordering: .relaxed) == MachineStallWatch.trialsAtMost)
        #expect(judged.load(ordering: .relaxed) == 1)
    }

    @Test func theWatchTellsAStallLongEnoughToUnderrunAnOutput() throws {
        let watch = MachineStallWatch(thresholdSeconds: 0.002)
        try MachineStallWatch.holdCPU0(forSeconds: 0.015)
        try waitUntil(timeoutSeconds: 5, "the watch to record the stall") { !watch.stalls.isEmpty }
        watch.stop()
        let why = try #require(watch.disturbance(), "\(watch.summary(from: 0, to: MachineStallWatch.nowSeconds()))")
        print("CPU 0 held for 15 ms: \(why)")
        #expect(why.contains("stalled"))
    }
}
