import SceneSoundDSP
import SceneSoundEngine
import Testing

/// The render thread's events (a stream drained, a stream handed back) when the server has
/// not emptied the queue in time: each waits in the engine for room, none is dropped. A lost
/// release would leave the stream freed on the render thread and its scene held forever; a
/// lost drain, a client waiting forever.
@Suite struct EngineEventTests {
    @Test func eventsWaitForRoomInTheQueueAndNoneIsLost() {
        let configuration = EngineConfiguration()
        let engine = Engine(hrtf: KEMAR.set, configuration: configuration, eventQueueCapacity: 2)
        let block = configuration.blockFrames
        let output = UnsafeMutablePointer<Float>.allocate(capacity: block * 2)
        defer { output.deallocate() }
        let audio = [Float](repeating: 0.1, count: 64)
        let ids = (1 ... 6).map { StreamID($0) }
        for id in ids {
            let ring = AudioRing(capacityFrames: block, channelCount: 1)
            _ = audio.withUnsafeBufferPointer { ring.write($0.baseAddress!, frames: audio.count) }
            let input = RingInput(ring: ring)
            let source = RenderSource(input: input, channelCount: 1, mode: .anchored,
                                      channelPositions: [engine.defaultScenePosition], gain: 1, hrtf: KEMAR.set,
                                      maximumFrames: block)
            #expect(engine.commands.push(.addStream(EngineStream(id: id, source: source, input: input, sceneIndex: 0))))
            #expect(engine.commands.push(.notifyWhenDrained(id, throughFrame: audio.count)))
        }

        /// Renders blocks, the server looking at the queue only after `blocksUnread` of them.
        func collect(blocksUnread: Int) -> [EngineEvent] {
            for _ in 0 ..< blocksUnread { engine.render(into: output) }
            var events: [EngineEvent] = []
            for _ in 0 ..< 20 {
                while let event = engine.events.pop() { events.append(event) }
                engine.render(into: output)
            }
            while let event = engine.events.pop() { events.append(event) }
            return events
        }

        // Six drains due while the server is away for eight blocks: two fit the queue.
        let drained = collect(blocksUnread: 8).compactMap { event -> StreamID? in
            if case .drained(let id, _, _) = event { id } else { nil }
        }
        #expect(drained.sorted() == ids)

        for id in ids { #expect(engine.commands.push(.removeStream(id))) }
        let released = collect(blocksUnread: 8).compactMap { event -> StreamID? in
            if case .released(let stream) = event { stream.id } else { nil }
        }
        #expect(released.sorted() == ids)
        #expect(engine.droppedEventCount == 0)
    }
}
