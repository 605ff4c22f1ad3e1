import Foundation
import SceneSoundCapture
import SceneSoundCaptureGraph
import SceneSoundPipeWire

// A process that captures apps and can be killed, stopped or hung by the capture tests:
// the tests cannot do that to themselves. Prints one line per event on stdout (flushed):
//   state capturing SINK | start INDEX BINARY | end INDEX | left INDEX WHY | frames INDEX COUNT (once a second)
// Usage: scenesound-capture-test-host --server ADDRESS [--guard PATH] [--exclude BINARY]...
// Stops cleanly (undoing the capture) on SIGTERM, as the daemon does.

final class PrintingConsumer: AppCaptureConsumer, @unchecked Sendable {
    private let lock = NSLock()
    private var frames: [UInt32: Int] = [:]

    func say(_ line: String) {
        lock.lock()
        defer { lock.unlock() }
        // write(2) on fd 1: unbuffered, so the test reads each line as it is said.
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
    }

    /// On PipeWire, the graph the apps are linked into: it hands their audio here.
    var graph: GraphCapture?

    /// A linked app's frames, counted on the node's data thread (locks: a test host only).
    final class Counter: CapturedAudioWriter {
        let streamIndex: UInt32, channels: Int
        unowned let consumer: PrintingConsumer
        init(streamIndex: UInt32, channels: Int, consumer: PrintingConsumer) {
            self.streamIndex = streamIndex; self.channels = channels; self.consumer = consumer
        }
        func write(interleaved samples: UnsafeBufferPointer<Float>) { consumer.count(streamIndex, frames: samples.count / channels) }
    }

    func count(_ streamIndex: UInt32, frames count: Int) {
        lock.lock()
        frames[streamIndex, default: 0] += count
        lock.unlock()
    }

    func captureDidStart(_ stream: CapturedStreamIdentity) {
        say("start \(stream.streamIndex) \(stream.binary ?? "-")")
        graph?.feedDidStart(streamIndex: stream.streamIndex, feed: Counter(
            streamIndex: stream.streamIndex, channels: stream.isMono ? 1 : stream.channels.channelCount, consumer: self), isMono: stream.isMono)
    }
    func captureDidUpdate(_ stream: CapturedStreamIdentity) {}
    func captureDidReceive(streamIndex: UInt32, interleaved samples: UnsafeBufferPointer<Float>) {
        count(streamIndex, frames: samples.count / 2)
    }
    func captureDidEnd(streamIndex: UInt32) {
        graph?.feedDidEnd(streamIndex: streamIndex)
        say("end \(streamIndex)")
    }
    func captureDidLeave(_ stream: CapturedStreamIdentity, reason: String) { say("left \(stream.streamIndex) \(reason)") }

    func reportFrames() {
        lock.lock()
        let totals = frames
        lock.unlock()
        for (index, count) in totals.sorted(by: { $0.key < $1.key }) { say("frames \(index) \(count)") }
    }
    func captureDidChooseRealSink(_ sinkName: String) { say("real-sink \(sinkName)") }
    func captureDidRest(_ isResting: Bool) { say(isResting ? "rest" : "awake") }
    func captureDidRepair(_ message: String) { say("repaired \(message)") }
    func captureStateDidChange(_ state: AppCapture.State) {
        switch state {
        case .capturing(let sink): say("state capturing \(sink)")
        case .connecting: say("state connecting")
        case .interrupted(let reason): say("state interrupted \(reason)")
        case .stopped: say("state stopped")
        }
    }
}

var configuration = AppCapture.Configuration()
var arguments = CommandLine.arguments.dropFirst()
while let flag = arguments.popFirst() {
    let value = arguments.popFirst() ?? ""
    switch flag {
    case "--server": configuration.serverAddress = value
    case "--guard": configuration.guardExecutable = value
    case "--exclude": configuration.excludedBinaries.insert(value)
    default:
        FileHandle.standardError.write(Data("unknown option \(flag)\n".utf8))
        exit(2)
    }
}
let consumer = PrintingConsumer()
// On PipeWire the apps are linked into a node of the graph, as the daemon does.
let captureNode = PipeWireSession.socketPath(environment: ["PULSE_SERVER": configuration.serverAddress ?? ""]).map {
    CaptureNode(remote: $0, rateHz: 48_000, quantumFrames: 256)
}
if let captureNode {
    let graph = GraphCapture()
    graph.nodeSource = { captureNode.node }
    do { try captureNode.start(capture: graph) } catch {
        FileHandle.standardError.write(Data("\(error)\n".utf8))
        exit(1)
    }
    configuration.graph = graph
    consumer.graph = graph
}
let capture = AppCapture(configuration: configuration, consumer: consumer)
do { try capture.start() } catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(1)
}
// Frames received per stream, once a second: how fast the capture delivers.
let ticker = DispatchSource.makeTimerSource(queue: .main)
ticker.schedule(deadline: .now() + 1, repeating: 1)
ticker.setEventHandler { consumer.reportFrames() }
ticker.resume()

signal(SIGTERM, SIG_IGN)
let termination = DispatchSource.makeSignalSource(signal: SIGTERM, queue: .main)
termination.setEventHandler {
    let undone = capture.stop()
    consumer.say("stopped \(undone ? "undone" : "not-undone")")
    exit(0)
}
termination.resume()
dispatchMain()
