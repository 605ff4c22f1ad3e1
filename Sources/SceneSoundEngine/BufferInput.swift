/// A source input that plays a decoded buffer once (or looping), for offline renders and
/// tests. Planar storage, allocated before rendering starts.
public final class BufferInput: SourceInput {
    public let channels: [[Float]]
    public let loops: Bool
    @exclusivity(unchecked) private var position = 0

    public init(channels: [[Float]], loops: Bool = false) {
        precondition(!channels.isEmpty && channels.allSatisfy { $0.count == channels[0].count })
        self.channels = channels
        self.loops = loops
    }

    public convenience init(interleaved: [Float], channelCount: Int, loops: Bool = false) {
        let frames = interleaved.count / channelCount
        self.init(channels: (0..<channelCount).map { c in (0..<frames).map { interleaved[$0 * channelCount + c] } },
                  loops: loops)
    }

    public var frameCount: Int { channels[0].count }
    public var isFinished: Bool { !loops && position >= frameCount }

    public func read(into output: UnsafeMutablePointer<UnsafeMutablePointer<Float>>, frames: Int) -> Int {
        var written = 0
        while written < frames {
            if position >= frameCount {
                guard loops, frameCount > 0 else { break }
                position = 0
            }
            let n = min(frames - written, frameCount - position)
            for c in 0..<channels.count {
                channels[c].withUnsafeBufferPointer { (output[c] + written).update(from: $0.baseAddress! + position, count: n) }
            }
            written += n
            position += n
        }
        return written
    }
}
