@testable import SceneSoundCapture
import Testing

/// One look at the default while capturing: which real sink is behind ours, and whether ours
/// takes the default back (`DefaultSinkChoice`).
struct DefaultSinkChoiceTests {
    let sinks = ["out", "headset"], ours = "scenesound_capture"

    func look(server: String?, graph: String?, current: String?, seenBefore: Bool = false) -> DefaultSinkChoice {
        DefaultSinkChoice(.init(server: server, graph: graph), captureSink: ours, current: current, realSinks: sinks,
                          seenBefore: seenBefore)
    }

    @Test func theUsersChoiceHeardByBothIsTheRealSinkAndOursTakesTheDefaultBack() {
        #expect(look(server: "headset", graph: "headset", current: "out") == DefaultSinkChoice(realSink: "headset", takesTheDefaultBack: true))
        // PulseAudio: no graph node.
        #expect(look(server: "headset", graph: nil, current: "out") == DefaultSinkChoice(realSink: "headset", takesTheDefaultBack: true))
    }

    /// pipewire-pulse's copy for our connection missed the choice (it still says ours); the
    /// node heard it.
    @Test func aChoiceOnlyTheNodeHeardIsTaken() {
        #expect(look(server: ours, graph: "headset", current: "out") == DefaultSinkChoice(realSink: "headset", takesTheDefaultBack: true))
    }

    /// The server names a real sink the node has not heard of yet (its binding deaf): the
    /// default is left as the user made it, and looked at again; the same two readings a
    /// second later, the node's is taken.
    @Test func aChoiceTheNodeHasNotHeardIsNotUndoneAtOnce() {
        #expect(look(server: "headset", graph: "out", current: "out")
            == DefaultSinkChoice(realSink: "out", takesTheDefaultBack: false, disagrees: true))
        #expect(look(server: "headset", graph: ours, current: "out")
            == DefaultSinkChoice(realSink: "out", takesTheDefaultBack: false, disagrees: true))
        #expect(look(server: "headset", graph: "out", current: "out", seenBefore: true)
            == DefaultSinkChoice(realSink: "out", takesTheDefaultBack: true, disagrees: true))
    }

    @Test func oursAsTheDefaultKeepsTheRealSinkAndNothingIsAsked() {
        #expect(look(server: ours, graph: ours, current: "headset") == DefaultSinkChoice(realSink: "headset", takesTheDefaultBack: false))
        // The real sink gone: another takes over.
        #expect(look(server: ours, graph: ours, current: "gone") == DefaultSinkChoice(realSink: "out", takesTheDefaultBack: false))
        #expect(DefaultSinkChoice(.init(server: "out", graph: nil), captureSink: ours, current: nil, realSinks: [], seenBefore: false)
            == DefaultSinkChoice(realSink: nil, takesTheDefaultBack: false))
    }
}
