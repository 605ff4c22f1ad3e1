import Testing
@testable import SceneSoundProtocol

@Suite struct HeadTrackingSetTests {
    /// The mode byte and the recentering time are checked on arrival, each error naming what
    /// is accepted.
    @Test func anUnknownModeOrARecenteringOutOfRangeIsRefused() throws {
        func decode(mode: UInt8, seconds: Float) throws(ProtocolError) -> Message {
            var payload: [UInt8] = []
            payload.writeU8(mode)
            payload.writeF32(seconds)
            return try Message.decode(type: MessageType.headTrackingSet.rawValue, payload: payload[...])
        }
        #expect(try decode(mode: 3, seconds: 0) == .headTrackingSet(HeadTrackingSet(mode: .off)))
        #expect(try decode(mode: 1, seconds: 3600) == .headTrackingSet(HeadTrackingSet(mode: .full, recenterAfterSeconds: 3600)))
        for (mode, seconds, words) in [(UInt8(0), Float(0), "mode 0 unknown"), (4, 0, "mode 4 unknown"),
                                       (1, 0.5, "accepted: 0 for off, or 1 to 3600"), (2, .nan, "out of range"),
                                       (2, 3601, "out of range")] {
            do {
                _ = try decode(mode: mode, seconds: seconds)
                Issue.record("mode \(mode), \(seconds) s accepted")
            } catch {
                #expect(error.code == .invalidArgument && error.detail.contains(words), "\(error)")
            }
        }
        #expect(HeadTrackingSet.Mode(name: "yaw-only") == .yawOnly && HeadTrackingSet.Mode(name: "yaw") == nil)
    }
}
