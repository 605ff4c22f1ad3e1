/// On PipeWire, when SceneSound's output is its own node of the graph: what the capture asks of
/// that node. The daemon implements it with the output's graph node (this module knows nothing
/// of it): an app's output ports linked by channel into one of the node's input sets, whose
/// audio the node hands to the consumer in the same graph cycle, before the engine renders.
/// Called on the capture's thread.
public protocol CaptureGraph: AnyObject, Sendable {
    /// Links the app node of that `object.serial` (a sink input's index on pipewire-pulse) into
    /// a free input set, only `channels` (set channels 0 FL … 7 SR, in the order the stream's
    /// audio is handed on); from then on its audio reaches the consumer as `streamIndex`'s.
    func link(streamIndex: UInt32, nodeSerial: UInt64, channels: [Int]) -> CaptureGraphLink
    /// Frees the set: its links destroyed, its audio no longer handed on. Returns once the server
    /// has destroyed the links, so that moving the app afterwards comes after (see docs/CAPTURE.md).
    func unlink(set: Int)
    /// The node's quantum (frames per graph cycle it asks for).
    var quantumFrames: Int { get }
    /// Whether the node is connected (its sets can be linked, its park sink made).
    var isConnected: Bool { get }
    /// Whether a set is free for the next app (else the app plays on the real sink).
    var hasFreeSet: Bool { get }
    /// Frames of the set's app that carried sound so far (a paused app's port holds zeros).
    func framesReceived(set: Int) -> Int
    /// Links from the app node of that serial to an audio sink other than the one of
    /// `parkSinkSerial` (and other than our node): the app heard dry beside its capture.
    func strayLinks(nodeSerial: UInt64, parkSinkSerial: UInt64) -> [UInt32]
    func destroyLink(_ linkID: UInt32)
    /// Makes the sink apps are parked on, of the node's own connection (it goes with it), named
    /// `name` with `properties` beside its own: a sink that never runs, so an app linked to it
    /// alone waits for our link, on every PipeWire version. False if it cannot now (then the
    /// capture loads a null sink instead).
    func makeParkSink(named name: String, properties: [String: String]) -> Bool
    func destroyParkSink()
    /// The default sink as the graph's `default` metadata names it (nil: none known). Fresher
    /// than pipewire-pulse's answer to our connection, whose copy of the metadata misses for good
    /// a choice made while another client connects (docs/CAPTURE.md).
    var defaultSinkName: String? { get }
    /// `changed` runs on another thread, never under a lock of the capture's, whenever
    /// `defaultSinkName` changes; nil stops it.
    func watchDefaultSink(_ changed: (@Sendable () -> Void)?)
}

public enum CaptureGraphLink: Equatable, Sendable {
    case linked(set: Int)
    /// The graph does not show that node yet (its registry lags pipewire-pulse's events).
    case noSuchNode
    /// Every set is taken.
    case noFreeSet
    case failed(String)
}

/// Records a stream by linking its app's node into an input set of SceneSound's graph node
/// (`CaptureGraph`): no recording stream at all; the audio reaches the consumer on the node's
/// data thread in the cycle the app played it. The node may show the app a moment after
/// pipewire-pulse did: the link is tried again every 20 ms for 2 s.
final class GraphRecorder: StreamRecorder {
    let streamIndex: UInt32?
    private let graph: any CaptureGraph
    private let channels: [Int]
    private weak var delegate: StreamRecorderDelegate?
    private let after: (Double, @escaping () -> Void) -> Void
    private var linkedSet: Int?
    private var isClosed = false
    private var triesLeft = 100
    private(set) var failure: String?

    init(graph: any CaptureGraph, streamIndex: UInt32, channels: CaptureChannels, delegate: StreamRecorderDelegate,
         after: @escaping (Double, @escaping () -> Void) -> Void) {
        self.streamIndex = streamIndex
        self.graph = graph
        self.channels = channels.sinkIndexes
        self.delegate = delegate
        self.after = after
        tryLink()
    }

    deinit { close() }

    private func tryLink() {
        guard !isClosed, let streamIndex else { return }
        switch graph.link(streamIndex: streamIndex, nodeSerial: UInt64(streamIndex), channels: channels) {
        case .linked(let set):
            linkedSet = set
        case .noSuchNode where triesLeft > 0:
            triesLeft -= 1
            after(0.02) { [weak self] in self?.tryLink() }
        case .noSuchNode:
            end("its node never appeared in SceneSound's view of the PipeWire graph")
        case .noFreeSet:
            end("every input set of SceneSound's PipeWire node is taken")
        case .failed(let why):
            end(why)
        }
    }

    private func end(_ why: String) {
        failure = why
        delegate?.recorderDidEnd(self)
    }

    var framesRecorded: Int { linkedSet.map(graph.framesReceived(set:)) ?? 0 }

    func close() {
        guard !isClosed else { return }
        isClosed = true
        if let linkedSet { graph.unlink(set: linkedSet) }
        linkedSet = nil
    }
}
