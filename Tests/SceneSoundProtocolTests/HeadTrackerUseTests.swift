import Testing
@testable import SceneSoundProtocol

@Suite struct HeadTrackerUseTests {
    static func decode(tracker: UInt8, posesPerSecond: UInt32) throws(ProtocolError) -> Message {
        var payload: [UInt8] = []
        payload.writeU8(tracker)
        payload.writeU32(posesPerSecond)
        return try Message.decode(type: MessageType.headTrackerUse.rawValue, payload: payload[...])
    }

    /// Each choice and the rate's ends go through the encoder and back unchanged.
    @Test func everyTrackerAndRateRoundTrips() throws {
        for tracker in HeadTrackerUse.Tracker.allCases {
            for rate: UInt32 in [0, 10, 60, 1000] {
                let message = Message.headTrackerUse(HeadTrackerUse(tracker: tracker, posesPerSecond: rate))
                let bytes = FrameEncoder.frame(message, requestID: 7)
                var decoder = FrameDecoder()
                decoder.append(contentsOf: bytes)
                let frame = try #require(try decoder.nextFrame())
                #expect(frame.typeCode == MessageType.headTrackerUse.rawValue && frame.requestID == 7)
                #expect(try Message.decode(frame: frame, version: 1) == message)
            }
        }
        #expect(try Self.decode(tracker: 3, posesPerSecond: 0) == .headTrackerUse(HeadTrackerUse(tracker: .osc)))
        #expect(HeadTrackerUse.Tracker(name: "opentrack") == .opentrack && HeadTrackerUse.Tracker(name: "OSC") == nil)
        #expect(HeadTrackerUse.Tracker.allCases.map(\.name) == ["any", "opentrack", "osc"])
    }

    /// An unknown tracker or a rate outside 10 … 1000 (0 aside) is refused on arrival, the error
    /// naming the field and what is accepted.
    @Test func anUnknownTrackerOrARateOutOfRangeIsRefused() {
        for (tracker, rate, words) in [(UInt8(0), UInt32(0), "tracker 0 unknown (accepted: 1 any, 2 opentrack, 3 osc)"),
                                       (4, 60, "tracker 4 unknown"),
                                       (1, 9, "poses_per_second 9 out of range (accepted: 0 for the daemon's own limits, or 10 to 1000)"),
                                       (2, 1001, "poses_per_second 1001 out of range"), (3, .max, "out of range")] {
            do {
                _ = try Self.decode(tracker: tracker, posesPerSecond: rate)
                Issue.record("tracker \(tracker), \(rate) poses/s accepted")
            } catch {
                #expect(error.code == .invalidArgument && error.detail.contains(words), "\(error)")
            }
        }
    }
}
