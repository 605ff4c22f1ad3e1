/// Adapts PulseAudio's write requests, which come in any number of frames, to the engine's
/// fixed render quantum: `render` is always called for exactly `blockFrames` frames, and the
/// part of a block that did not fit is kept for the next request.
///
/// Real-time safe: the block buffer is allocated once in `init`; `fill` only renders and copies.
/// Not thread-safe: used by one PulseAudio thread at a time. Kept across reconnections, so the
/// frames already rendered before the server went away are the first ones the next server gets.
final class BlockRenderer {
    static let channelCount = 2
    static let bytesPerFrame = channelCount * MemoryLayout<Float>.size

    let blockFrames: Int
    private let render: (UnsafeMutablePointer<Float>, Int) -> Void
    private let block: UnsafeMutablePointer<Float>
    /// The rendered frames of `block` not handed out yet: `block[pendingStart ..< blockFrames]`.
    @exclusivity(unchecked) private var pendingStart: Int

    init(blockFrames: Int, render: @escaping (UnsafeMutablePointer<Float>, Int) -> Void) {
        precondition(blockFrames > 0)
        self.blockFrames = blockFrames
        self.render = render
        let sampleCount = blockFrames * Self.channelCount
        block = .allocate(capacity: sampleCount)
        block.initialize(repeating: 0, count: sampleCount)
        pendingStart = blockFrames
    }

    deinit {
        block.deallocate()
    }

    /// Frames rendered but not yet handed out.
    var pendingFrames: Int { blockFrames - pendingStart }

    /// Writes `frameCount` interleaved stereo Float32 frames to `destination`, which need not
    /// be aligned for Float (PulseAudio's buffers make no promise).
    func fill(_ destination: UnsafeMutableRawPointer, frameCount: Int) {
        var written = 0
        while written < frameCount {
            if pendingStart == blockFrames {
                render(block, blockFrames)
                pendingStart = 0
            }
            let count = min(blockFrames - pendingStart, frameCount - written)
            (destination + written * Self.bytesPerFrame).copyMemory(
                from: block + pendingStart * Self.channelCount,
                byteCount: count * Self.bytesPerFrame)
            pendingStart += count
            written += count
        }
    }
}
