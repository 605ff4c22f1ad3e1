import SceneSoundPipeWire

/// `--capture-apps` on PipeWire with an output other than the graph node (`--output pulse`,
/// `wav:`, `null`): a node of the graph for the capture alone — the input sets, no output
/// linked — so that apps are taken as on the output's node, linked into it rather than
/// recorded through pipewire-pulse, and handed to their feeds on its data thread in the cycle
/// they play. The output renders on its own clock and reads the feeds as it reads any
/// recording's (they follow the other clock: `ClockFollower`).
public final class CaptureNode: Sendable {
    public let node: PipeWireGraphNode

    /// `problem`: a line for the log, on the node's loop thread (a lost connection, a refusal).
    public init(remote: String?, rateHz: Int, quantumFrames: Int, problem: @escaping @Sendable (String) -> Void = { _ in }) {
        node = PipeWireGraphNode(configuration: .init(
            remote: remote, nodeName: "scenesound-capture", inputSetCount: GraphCapture.inputSets,
            quantumFrames: quantumFrames, rateHz: rateHz,
            stream: .init(applicationName: "SceneSound", iconName: "audio-headphones",
                          description: "SceneSound app capture", mediaRole: "Production"),
            retrySeconds: (0.050, 1.0))) { event in
            switch event {
            case .disconnected(let reason): problem("disconnected (\(reason)); reconnecting")
            case .failed(let reason): problem(reason)
            case .refused(_, let reason): problem("refused: \(reason)")
            default: break
            }
        }
    }

    /// Hands each cycle's sets to `capture`. Its outputs are linked nowhere: the node gives
    /// such ports a scratch buffer no one reads, so nothing is written to them.
    public func start(capture: GraphCapture) throws {
        try node.start { cycle in _ = capture.deliver(cycle) }
    }

    public func stop() { node.stop() }
}
