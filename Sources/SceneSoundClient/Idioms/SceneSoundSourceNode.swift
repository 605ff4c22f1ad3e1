import SceneSoundProtocol
import Synchronization

/// A pull-mode source, the counterpart of `AVAudioSourceNode`: the library's thread calls the
/// render block whenever the server has room for more (its credit paces the block at the
/// output's speed), and sends what the block wrote.
///
/// ```swift
/// var phase = 0.0
/// let tone = try SceneSoundSourceNode(sampleRateHz: 48000, channels: 1,
///                                     spatialExperience: .headTracked(.front)) { frames, buffer in
///     for frame in 0..<frames {
///         buffer[frame] = Float(sin(phase)) * 0.2
///         phase += 2 * .pi * 440 / 48000
///     }
///     return frames
/// }
/// try tone.start()
/// ```
///
/// The block runs on the library's thread, one call at a time; it should return promptly and
/// must not call `stop()` or `waitUntilFinished` of its own node.
public final class SceneSoundSourceNode: Sendable {
    /// Fills `frames` audio frames into `buffer` — `frames × channels` samples, interleaved, in
    /// [−1, 1] — and returns how many frames it wrote. Returning fewer than `frames` ends the
    /// source: what it wrote plays to the end, and the block is not called again.
    ///
    /// The block is handed over (`sending`): it may keep its state in variables it captures,
    /// since only the library's thread calls it, one call at a time.
    public typealias RenderBlock = (_ frames: Int, _ buffer: UnsafeMutableBufferPointer<Float>) -> Int

    public let sampleRateHz: Int
    /// 1 to 8 (up to 7.1, WAVE order: virtual speakers around the scene).
    public let channels: Int
    public let spatialExperience: SpatialExperience
    /// Frames the block fills per call.
    public let periodFrames: Int
    private let format: AudioFormat
    private let renderBlock: HandedOverBlock
    private let connection: ClientConnection?
    private let running = Mutex<Running?>(nil)

    private struct Running: Sendable {
        let stream: ClientStream
        let renderer: PullRenderer
    }

    /// `periodFrames`: frames per call of the block (default 10 ms). `connection`: nil for the
    /// default connection (`SceneSound.defaultConnection()`), made when `start()` first needs it.
    public init(sampleRateHz: Int, channels: Int, spatialExperience: SpatialExperience = .headTracked(.automatic),
                periodFrames: Int? = nil, connection: ClientConnection? = nil,
                renderBlock: sending @escaping RenderBlock) throws(ClientError) {
        let rates = ProtocolLimits.rateHzRange, channelCounts = ProtocolLimits.channelsRange
        guard let rate = UInt32(exactly: sampleRateHz), rates.contains(rate) else {
            throw .invalidArgument("sampleRateHz \(sampleRateHz) is not supported (accepted: \(rates.lowerBound) to \(rates.upperBound))")
        }
        guard let channelCount = UInt8(exactly: channels), channelCounts.contains(channelCount) else {
            throw .invalidArgument("channels \(channels) is not supported (accepted: \(channelCounts.lowerBound) to \(channelCounts.upperBound))")
        }
        let period = periodFrames ?? sampleRateHz / 100
        guard (1...sampleRateHz).contains(period) else {
            throw .invalidArgument("periodFrames \(period) is not supported (accepted: 1 to one second, \(sampleRateHz))")
        }
        self.sampleRateHz = sampleRateHz
        self.channels = channels
        self.spatialExperience = spatialExperience
        self.periodFrames = period
        self.format = AudioFormat(sampleFormat: .f32le, rateHz: rate, channels: channelCount)
        self.renderBlock = HandedOverBlock(call: renderBlock)
        self.connection = connection
    }

    deinit { stop() }

    /// Whether the block is being called: from `start()` until it ends the source or `stop()`.
    public var isRunning: Bool {
        running.withLock { $0.map { $0.renderer.finished.wait(timeoutSeconds: 0) == nil } ?? false }
    }

    /// Opens the server's stream and starts calling the block. Does nothing while running.
    public func start() throws(ClientError) {
        try running.withLock { (running) throws(ClientError) in
            if let finished = running {
                guard finished.renderer.finished.wait(timeoutSeconds: 0) != nil else { return }
                finished.renderer.join()
                try? finished.stream.close()
                running = nil
            }
            let connection = try SharedConnection.given(self.connection)
            let stream = try connection.openStream(StreamOpen(kind: .playback, format: format, spatialExperience: spatialExperience))
            let channels = self.channels, block = renderBlock
            do {
                let renderer = try PullRenderer(stream: stream, periodFrames: periodFrames) { buffer, frames in
                    let samples = buffer.bindMemory(to: Float.self, capacity: frames * channels)
                    return block.call(frames, UnsafeMutableBufferPointer(start: samples, count: frames * channels))
                }
                running = Running(stream: stream, renderer: renderer)
            } catch {
                try? stream.close()
                throw .invalidArgument("cannot start the source's thread: \(error)")
            }
        }
    }

    /// Stops calling the block and ends the stream at once (what the server buffered is
    /// dropped). Returns when the block is no longer running.
    public func stop() {
        guard let current = running.withLock({ $0.take() }) else { return }
        current.renderer.requestStop()
        try? current.stream.close()
        current.renderer.join()
    }

    /// Blocks until the block has ended the source and what it wrote has played, or `stop()`
    /// was called; at most `timeoutSeconds` (nil: as long as it takes). Returns false on
    /// timeout, true at once when not started. Throws when the stream failed.
    @discardableResult
    public func waitUntilFinished(timeoutSeconds: Double? = nil) throws(ClientError) -> Bool {
        guard let current = running.withLock({ $0 }) else { return true }
        guard let outcome = current.renderer.finished.wait(timeoutSeconds: timeoutSeconds) else { return false }
        switch outcome {
        case .success, .failure(.streamClosed): return true
        case .failure(let error): throw error
        }
    }
}

/// The render block, which the caller handed over and only one thread at a time calls.
private struct HandedOverBlock: @unchecked Sendable {
    let call: SceneSoundSourceNode.RenderBlock
}
