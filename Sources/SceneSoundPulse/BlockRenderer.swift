/// Adapts PulseAudio's write requests, which come in any number of frames, to the engine's
/// fixed render quantum: `render` is always called for exactly `blockFrames` frames, and the
/// part of a block that did not fit is kept for the next request.
///
/// Real-time safe: the block buffer is allocated once in `init`, for the most channels a stream
/// may have; `fill` only renders and copies. Not thread-safe: used by one PulseAudio thread at a
/// time. Kept across reconnections, so the frames already rendered before the server went away
/// are the first ones the next server gets.
final class BlockRenderer {
    static let maximumChannelCount = 8
    static let bytesPerSample = MemoryLayout<Float>.size

    let blockFrames: Int
    private let render: (UnsafeMutablePointer<Float>, _ frames: Int, _ channels: Int) -> Void
    /// Told, on the PulseAudio thread, that the stream's buffer grew by `frames`, which the
    /// next requests take at once: the engine's captured streams stretch rather than run dry.
    let bufferGrew: (_ frames: Int) -> Void
    private let block: UnsafeMutablePointer<Float>
    /// The rendered frames of `block` not handed out yet: `block[pendingStart ..< blockFrames]`.
    @exclusivity(unchecked) private var pendingStart: Int
    /// Interleaved channels per frame, the playing stream's.
    @exclusivity(unchecked) private(set) var channelCount = 2

    init(blockFrames: Int, render: @escaping (UnsafeMutablePointer<Float>, _ frames: Int, _ channels: Int) -> Void,
         bufferGrew: @escaping (_ frames: Int) -> Void = { _ in }) {
        precondition(blockFrames > 0)
        self.blockFrames = blockFrames
        self.render = render
        self.bufferGrew = bufferGrew
        let sampleCount = blockFrames * Self.maximumChannelCount
        block = .allocate(capacity: sampleCount)
        block.initialize(repeating: 0, count: sampleCount)
        pendingStart = blockFrames
    }

    deinit {
        block.deallocate()
    }

    var bytesPerFrame: Int { channelCount * Self.bytesPerSample }

    /// From the next frame on, `count` channels per frame; what was rendered for the old count
    /// and not handed out is dropped (the stream it was for has gone).
    func useChannels(_ count: Int) {
        precondition((1...Self.maximumChannelCount).contains(count))
        guard count != channelCount else { return }
        channelCount = count
        pendingStart = blockFrames
    }

    /// Frames rendered but not yet handed out.
    var pendingFrames: Int { blockFrames - pendingStart }

    /// Writes `frameCount` interleaved Float32 frames of `channelCount` channels to
    /// `destination`, which need not be aligned for Float (PulseAudio's buffers make no promise).
    func fill(_ destination: UnsafeMutableRawPointer, frameCount: Int) {
        let bytesPerFrame = bytesPerFrame
        var written = 0
        while written < frameCount {
            if pendingStart == blockFrames {
                render(block, blockFrames, channelCount)
                pendingStart = 0
            }
            let count = min(blockFrames - pendingStart, frameCount - written)
            (destination + written * bytesPerFrame).copyMemory(
                from: block + pendingStart * channelCount,
                byteCount: count * bytesPerFrame)
            pendingStart += count
            written += count
        }
    }
}
