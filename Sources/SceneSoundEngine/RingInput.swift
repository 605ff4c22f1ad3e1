import Synchronization

/// A stream's audio as the render thread sees it: frames from an AudioRing, filled by the
/// server's event loop. A stream never ends by itself (the client may always send more); the
/// server closes it. Counts the frames it was short of while the client was behind.
public final class RingInput: SourceInput, @unchecked Sendable {
    public let ring: AudioRing
    private let starvedFrames = Atomic<Int>(0)
    /// Set by the server while the stream has no data to come (drained, waiting): running dry
    /// then is not starvation.
    private let idle = Atomic<Bool>(true)

    public init(ring: AudioRing) { self.ring = ring }

    public var starvedFrameCount: Int { starvedFrames.load(ordering: .relaxed) }
    public func setIdle(_ value: Bool) { idle.store(value, ordering: .relaxed) }

    public var isFinished: Bool { false }

    public func read(into channels: UnsafeMutablePointer<UnsafeMutablePointer<Float>>, frames: Int) -> Int {
        let got = ring.read(into: channels, frames: frames)
        if got < frames && !idle.load(ordering: .relaxed) { starvedFrames.add(frames - got, ordering: .relaxed) }
        return got
    }
}
