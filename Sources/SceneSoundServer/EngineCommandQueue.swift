import SceneSoundEngine

/// The event loop's side of the engine's command queue. The render thread takes at most 512
/// commands a block, so a stalled output (or a flood) can fill the queue: a command that does not
/// fit is never dropped — it waits here, in order, and `flush()` (every tick) hands it on once
/// the render thread has made room. Commands that only set state (a gain, a scene's place, the
/// head pose, a drain target) replace an earlier waiting one for the same thing, so the backlog
/// stays bounded by the streams and scenes there are; requests that would add more work are
/// refused while `isBacklogged` (the session answers them with `limit_exceeded`).
/// Event-loop confined.
final class EngineCommandQueue {
    private let queue: SPSCQueue<EngineCommand>
    /// Commands waiting for room, oldest first from `first`; nil where one was handed on.
    private var waiting: [EngineCommand?] = []
    private var first = 0
    /// Where a state-setting command waits, by what it sets (absolute indices into `waiting`).
    private var slots: [Key: Int] = [:]
    /// Above this many waiting commands new requests are refused.
    let refusalThreshold: Int

    /// Pushes that found the queue full (or a backlog ahead of them) and had to wait.
    private(set) var deferredCount = 0
    /// Requests answered with an error because the backlog was over the threshold.
    var refusedRequests = 0

    /// New work (a stream added, audio written, a client to watch): wakes a resting output
    /// and the server's tick.
    var onWork: () -> Void = {}

    /// Work no command carries: a stream's ring got audio, a client stopped reading.
    func workArrived() { onWork() }

    /// Nothing waits here or in the engine's queue.
    var isEmpty: Bool { waitingCount == 0 && queue.count == 0 }

    init(queue: SPSCQueue<EngineCommand>, refusalThreshold: Int) {
        self.queue = queue
        self.refusalThreshold = refusalThreshold
    }

    var waitingCount: Int { waiting.count - first }
    /// True while the render thread is so far behind that new work should be refused.
    var isBacklogged: Bool { waitingCount >= refusalThreshold }

    /// Hands the command to the render thread, or keeps it until there is room. Order is kept:
    /// while anything waits, new commands queue behind it.
    func push(_ command: EngineCommand) {
        if case .addStream = command { onWork() }
        if waitingCount == 0, queue.push(command) { return }
        deferredCount += 1
        if case .resetScene(let index) = command {
            // A freed scene slot: what waits for it belongs to its old scene and stays ahead of
            // the reset; the next scene's commands must queue behind it, not replace those.
            slots[.placeScene(index)] = nil
            slots[.sceneLowpass(index)] = nil
        }
        let key = Key(command)
        if let key, let slot = slots[key] {
            waiting[slot] = command
            return
        }
        if let key { slots[key] = waiting.count }
        waiting.append(command)
    }

    /// Hands on what waits, as far as the queue has room (called on every tick).
    func flush() {
        while first < waiting.count {
            guard let command = waiting[first] else { first += 1; continue }
            guard queue.push(command) else { return }
            if let key = Key(command), slots[key] == first { slots[key] = nil }
            waiting[first] = nil
            first += 1
        }
        waiting.removeAll(keepingCapacity: true)
        first = 0
        slots.removeAll(keepingCapacity: true)
    }

    /// What a state-setting command sets: a later one for the same key supersedes it.
    private enum Key: Hashable {
        case headPose, ducking, headphoneEQ, rendering
        case gain(StreamID), mode(StreamID), scene(StreamID), drain(StreamID)
        case placeScene(Int), sceneLowpass(Int)

        init?(_ command: EngineCommand) {
            switch command {
            case .addStream, .removeStream, .resetScene, .switchHRTF: return nil
            case .notifyWhenDrained(let id, _): self = .drain(id)  // targets only grow
            case .setGain(let id, _): self = .gain(id)
            case .setMode(let id, _): self = .mode(id)
            case .setScene(let id, _): self = .scene(id)
            case .placeScene(let index, _, _): self = .placeScene(index)
            case .setSceneLowpass(let index, _, _): self = .sceneLowpass(index)
            case .setHeadPose: self = .headPose
            case .setDucking: self = .ducking
            case .setHeadphoneEQ: self = .headphoneEQ
            case .setRendering: self = .rendering
            }
        }
    }
}
