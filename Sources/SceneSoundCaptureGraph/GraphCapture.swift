import Foundation
import SceneSoundCapture
import SceneSoundPipeWire
import Synchronization

/// Where a linked app's audio goes, written on the node's data thread under its rules: the
/// daemon's captured stream feed, or a test's consumer.
public protocol CapturedAudioWriter: AnyObject {
    func write(interleaved samples: UnsafeBufferPointer<Float>)
}

/// The app capture's `CaptureGraph` on SceneSound's PipeWire node (the output's, or with
/// another output the capture's own, `CaptureNode`): apps' output ports linked into the node's
/// input sets, and each cycle's sets handed to the captured streams' feeds on the node's data
/// thread (`deliver`) — on the output's node before the engine renders, so an app is heard in
/// the cycle it played.
///
/// The data thread finds each set's stream in a fixed table of atomics, one slot per set: a
/// slot holds a `Delivery` (the feed, the channels to take, a scratch buffer allocated up
/// front) published with a releasing store, and is cleared before the delivery is freed once
/// the data thread is seen outside a cycle that could have read it. Nothing on the data thread
/// allocates, locks, logs or waits. Everything else runs on the capture's thread.
public final class GraphCapture: CaptureGraph, @unchecked Sendable {
    /// Sets made on the node: 32 apps sounding at once (`SCENESOUND_CAPTURE_GRAPH_SETS`, 1 to 64,
    /// lets the tests run out of them); an app beyond them plays on the real sink.
    public static let inputSets: Int = {
        let asked = ProcessInfo.processInfo.environment["SCENESOUND_CAPTURE_GRAPH_SETS"].flatMap { Int($0) }
        return min(max(asked ?? 32, 1), PipeWireGraphNode.maximumInputSets)
    }()
    /// The largest quantum handed on in one piece (PipeWire's default maximum is 8192).
    static let maximumFrames = 8192

    /// One set's stream, as the data thread reads it.
    final class Delivery {
        let streamIndex: UInt32
        let feed: any CapturedAudioWriter
        /// The set's channels to interleave, in the stream's order (a mono app: FL and FR, averaged).
        let channels: [Int]
        let isMono: Bool
        let scratch: UnsafeMutablePointer<Float>
        /// The set has carried sound (data thread only). Until then its cycles are not handed
        /// on: an app linked before it plays fills its first cycle (at the old quantum) with
        /// zeros, which would start the stream and leave the next, smaller, cycle short of a
        /// block, a hole after the app's first cycle (`RingInput`'s start hold).
        var hasSounded = false

        init(streamIndex: UInt32, feed: any CapturedAudioWriter, channels: [Int], isMono: Bool) {
            self.streamIndex = streamIndex
            self.feed = feed
            self.channels = channels
            self.isMono = isMono
            scratch = .allocate(capacity: GraphCapture.maximumFrames * PipeWireGraphNode.channelsPerSet)
            scratch.initialize(repeating: 0, count: GraphCapture.maximumFrames * PipeWireGraphNode.channelsPerSet)
        }
        deinit { scratch.deallocate() }
    }

    /// The output's node (nil until it runs); set once, before the capture starts.
    public var nodeSource: () -> PipeWireGraphNode? = { nil }
    private func node() -> PipeWireGraphNode? { nodeSource() }
    /// One per set, made up front.
    final class Slot {
        /// An unretained `Delivery` pointer, 0 when none.
        let delivery = Atomic<UInt>(0)
        /// Frames that carried sound (read by the capture's pause check).
        let soundFrames = Atomic<Int>(0)
    }
    private let slots: [Slot]
    /// The data thread is inside a cycle; cycles it finished.
    private let inCycle = Atomic<Int>(0)
    private let cycles = Atomic<Int>(0)

    // The capture's thread only.
    private var setStream: [UInt32?]
    private var setChannels: [[Int]]
    private var published: [Unmanaged<Delivery>?]
    private var feeds: [UInt32: (feed: any CapturedAudioWriter, isMono: Bool)] = [:]
    /// Deliveries the data thread never let go of in time: kept, not freed.
    private var abandoned: [Unmanaged<Delivery>] = []

    public init() {
        slots = (0 ..< Self.inputSets).map { _ in Slot() }
        setStream = Array(repeating: nil, count: Self.inputSets)
        setChannels = Array(repeating: [], count: Self.inputSets)
        published = Array(repeating: nil, count: Self.inputSets)
    }

    // MARK: The data thread

    /// Every cycle, before the engine renders; whether any set carried sound.
    public func deliver(_ cycle: PipeWireGraphNode.Cycle) -> Bool {
        inCycle.store(1, ordering: .sequentiallyConsistent)
        defer {
            cycles.add(1, ordering: .sequentiallyConsistent)
            inCycle.store(0, ordering: .sequentiallyConsistent)
        }
        var sounding = false
        for set in 0 ..< min(cycle.inputSetCount, Self.inputSets) {
            let bits = slots[set].delivery.load(ordering: .sequentiallyConsistent)
            guard bits != 0, let pointer = UnsafeMutableRawPointer(bitPattern: bits) else { continue }
            let delivery = Unmanaged<Delivery>.fromOpaque(pointer).takeUnretainedValue()
            if deliver(delivery, set: set, cycle: cycle) { sounding = true }
        }
        return sounding
    }

    private func deliver(_ delivery: Delivery, set: Int, cycle: PipeWireGraphNode.Cycle) -> Bool {
        // No link of ours yet (the session manager has not linked the app): nothing to hand on.
        var linked = false
        for channel in delivery.channels where cycle.input(set: set, channel: channel) != nil { linked = true }
        guard linked else { return false }
        let width = delivery.isMono ? 1 : delivery.channels.count
        var done = 0
        var sounding = false
        while done < cycle.frames {
            let frames = min(Self.maximumFrames, cycle.frames - done)
            let scratch = delivery.scratch
            if delivery.isMono {
                let left = cycle.input(set: set, channel: 0), right = cycle.input(set: set, channel: 1)
                for frame in 0 ..< frames {
                    let sum = (left?[done + frame] ?? 0) + (right?[done + frame] ?? 0)
                    scratch[frame] = 0.5 * sum
                }
            } else {
                for (position, channel) in delivery.channels.enumerated() {
                    if let input = cycle.input(set: set, channel: channel) {
                        for frame in 0 ..< frames { scratch[frame * width + position] = input[done + frame] }
                    } else {
                        for frame in 0 ..< frames { scratch[frame * width + position] = 0 }
                    }
                }
            }
            if !sounding {
                for sample in 0 ..< frames * width where scratch[sample] != 0 {
                    sounding = true
                    break
                }
            }
            delivery.hasSounded = delivery.hasSounded || sounding
            if delivery.hasSounded { delivery.feed.write(interleaved: UnsafeBufferPointer(start: scratch, count: frames * width)) }
            done += frames
        }
        if sounding { slots[set].soundFrames.add(cycle.frames, ordering: .relaxed) }
        return sounding
    }

    // MARK: CaptureGraph (the capture's thread)

    public var quantumFrames: Int { node()?.configuration.quantumFrames ?? 256 }

    public var isConnected: Bool { node()?.isConnected == true }

    /// A set is free and the node connected (while it reconnects, apps that start play on the real sink).
    public var hasFreeSet: Bool { setStream.contains { $0 == nil } && isConnected }

    public func link(streamIndex: UInt32, nodeSerial: UInt64, channels: [Int]) -> CaptureGraphLink {
        guard let node = node() else { return .failed("SceneSound's PipeWire node is not running") }
        guard let app = node.nodes(mediaClass: "Stream/Output/Audio").first(where: { $0.serial == nodeSerial }) else {
            return .noSuchNode
        }
        guard let set = setStream.firstIndex(where: { $0 == nil }) else { return .noFreeSet }
        // The delivery first: the link starts the app, and its first cycle must find it.
        setStream[set] = streamIndex
        setChannels[set] = channels
        publish(set)
        let result = node.link(set: set, toApp: app.id, channels: channels)
        guard result == 0 else {
            retire(set)
            setStream[set] = nil
            return result == ENOENT ? .noSuchNode : .failed("linking it into SceneSound's node failed (error \(result))")
        }
        return .linked(set: set)
    }

    public func unlink(set: Int) {
        guard set < Self.inputSets, setStream[set] != nil else { return }
        retire(set)
        setStream[set] = nil
        node()?.unlink(set: set)
    }

    public func framesReceived(set: Int) -> Int { set < Self.inputSets ? slots[set].soundFrames.load(ordering: .relaxed) : 0 }

    public func strayLinks(nodeSerial: UInt64, parkSinkSerial: UInt64) -> [UInt32] {
        guard let node = node(), let own = node.nodeID,
              let app = node.nodes(mediaClass: "Stream/Output/Audio").first(where: { $0.serial == nodeSerial }) else { return [] }
        let sinks = Dictionary(node.nodes(mediaClass: "Audio/Sink").map { ($0.id, $0.serial) }) { first, _ in first }
        return node.links(ofNode: app.id).filter { link in
            link.outputNodeID == app.id && link.inputNodeID != own
                && sinks[link.inputNodeID].map { $0 != parkSinkSerial } == true
        }.map(\.id)
    }

    public func destroyLink(_ linkID: UInt32) { node()?.destroyLink(linkID) }

    public func makeParkSink(named name: String, properties: [String: String]) -> Bool {
        node()?.createParkSink(named: name, properties: properties) == 0
    }

    public func destroyParkSink() { node()?.destroyParkSink() }

    public var defaultSinkName: String? { node()?.defaultSinkName }

    /// Passed on from the node's loop thread to another: the node calls its watcher under its
    /// loop's lock, which the capture's thread takes, under its own, to link and unlink.
    public func watchDefaultSink(_ changed: (@Sendable () -> Void)?) {
        guard let changed else {
            node()?.watchDefaultSink(nil)
            return
        }
        node()?.watchDefaultSink { DispatchQueue.global().async { changed() } }
    }

    // MARK: The feeds (from the bridge, on the capture's thread)

    /// The stream's feed exists (the consumer was told it started): its set, if linked, hands on to it.
    public func feedDidStart(streamIndex: UInt32, feed: any CapturedAudioWriter, isMono: Bool) {
        feeds[streamIndex] = (feed, isMono)
        if let set = setStream.firstIndex(where: { $0 == streamIndex }) { publish(set) }
    }

    public func feedDidEnd(streamIndex: UInt32) {
        feeds[streamIndex] = nil
        if let set = setStream.firstIndex(where: { $0 == streamIndex }) { retire(set) }
    }

    private func publish(_ set: Int) {
        guard let streamIndex = setStream[set], let entry = feeds[streamIndex], published[set] == nil else { return }
        slots[set].soundFrames.store(0, ordering: .relaxed)
        let delivery = Unmanaged.passRetained(Delivery(
            streamIndex: streamIndex, feed: entry.feed, channels: setChannels[set], isMono: entry.isMono))
        published[set] = delivery
        slots[set].delivery.store(UInt(bitPattern: delivery.toOpaque()), ordering: .sequentiallyConsistent)
    }

    /// Cleared, then freed once the data thread has left any cycle that may have read it (at
    /// most one quantum's wait); one it never leaves within 100 ms is kept rather than freed.
    private func retire(_ set: Int) {
        guard let delivery = published[set] else { return }
        published[set] = nil
        slots[set].delivery.store(0, ordering: .sequentiallyConsistent)
        let seen = cycles.load(ordering: .sequentiallyConsistent)
        let deadline = Date().addingTimeInterval(0.1)
        while inCycle.load(ordering: .sequentiallyConsistent) != 0, cycles.load(ordering: .sequentiallyConsistent) == seen {
            guard Date() < deadline else { return abandoned.append(delivery) }
            usleep(200)
        }
        delivery.release()
    }
}
