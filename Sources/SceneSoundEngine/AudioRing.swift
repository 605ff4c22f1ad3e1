import SceneSoundDSP
import Synchronization

/// A single-producer, single-consumer ring of interleaved Float frames: the server's event
/// loop writes a stream's audio, the render thread reads it. Lock-free and wait-free; the
/// indices are running frame counts, so full and empty are never ambiguous.
public final class AudioRing: @unchecked Sendable {
    public let capacityFrames: Int
    public let channelCount: Int
    private let storage: UnsafeMutablePointer<Float>
    private let written = Atomic<Int>(0)
    private let read = Atomic<Int>(0)

    public init(capacityFrames: Int, channelCount: Int) {
        precondition(capacityFrames > 0 && channelCount > 0)
        self.capacityFrames = capacityFrames
        self.channelCount = channelCount
        storage = .allocate(capacity: capacityFrames * channelCount)
        storage.initialize(repeating: 0, count: capacityFrames * channelCount)
    }

    deinit { storage.deallocate() }

    /// Frames written so far (producer's count).
    public var framesWritten: Int { written.load(ordering: .acquiring) }
    /// Frames read so far (consumer's count).
    public var framesRead: Int { read.load(ordering: .acquiring) }
    public var availableFrames: Int { framesWritten - framesRead }
    public var freeFrames: Int { capacityFrames - availableFrames }

    /// Producer: appends up to `frames` interleaved frames; returns how many fitted.
    @discardableResult
    public func write(_ source: UnsafePointer<Float>, frames: Int) -> Int {
        let w = written.load(ordering: .relaxed)
        let r = read.load(ordering: .acquiring)
        let count = min(frames, capacityFrames - (w - r))
        guard count > 0 else { return 0 }
        let start = w % capacityFrames
        let first = min(count, capacityFrames - start)
        (storage + start * channelCount).update(from: source, count: first * channelCount)
        if first < count {
            storage.update(from: source + first * channelCount, count: (count - first) * channelCount)
        }
        written.store(w + count, ordering: .releasing)
        return count
    }

    /// Consumer: reads up to `frames` frames, de-interleaved into `channels` buffers
    /// (`channelCount` of them), and when `sumsOfSquares` is given, sets each channel's sum of
    /// squares over what it read (measured in the same pass: a second pass over a thousand
    /// streams' blocks costs the render thread several per cent). Real-time safe.
    public func read(into channels: UnsafeMutablePointer<UnsafeMutablePointer<Float>>, frames: Int,
                     sumsOfSquares: UnsafeMutablePointer<Float>? = nil) -> Int {
        if let sumsOfSquares { sumsOfSquares.update(repeating: 0, count: channelCount) }
        let r = read.load(ordering: .relaxed)
        let w = written.load(ordering: .acquiring)
        let count = min(frames, w - r)
        guard count > 0 else { return 0 }
        // At most two runs (the ring wraps once); a mono run is one copy.
        let start = r % capacityFrames
        let first = min(count, capacityFrames - start)
        deinterleave(from: start, frames: first, into: channels, at: 0, sumsOfSquares: sumsOfSquares)
        if first < count {
            deinterleave(from: 0, frames: count - first, into: channels, at: first, sumsOfSquares: sumsOfSquares)
        }
        read.store(r + count, ordering: .releasing)
        return count
    }

    /// Consumer: the sample of `channel` in the frame `offset` frames after the next one to be
    /// read (`offset` < `availableFrames`), leaving it to be read.
    @inline(__always)
    public func peek(frame offset: Int, channel: Int) -> Float {
        storage[((read.load(ordering: .relaxed) + offset) % capacityFrames) * channelCount + channel]
    }

    /// Consumer: passes over up to `frames` frames unread; returns how many.
    @discardableResult
    public func skip(_ frames: Int) -> Int {
        let r = read.load(ordering: .relaxed)
        let count = max(0, min(frames, written.load(ordering: .acquiring) - r))
        read.store(r + count, ordering: .releasing)
        return count
    }

    private func deinterleave(from index: Int, frames: Int, into channels: UnsafeMutablePointer<UnsafeMutablePointer<Float>>,
                              at offset: Int, sumsOfSquares: UnsafeMutablePointer<Float>?) {
        let frame = storage + index * channelCount
        if channelCount == 1 {
            if let sumsOfSquares {
                sumsOfSquares[0] += RenderKernels.fastest.copySummingSquares(frame, channels[0] + offset, frames)
            } else {
                (channels[0] + offset).update(from: frame, count: frames)
            }
            return
        }
        for c in 0..<channelCount {
            let out = channels[c] + offset, source = frame + c
            var sum: Float = 0
            for n in 0..<frames {
                let x = source[n &* channelCount]
                out[n] = x
                sum += x * x
            }
            sumsOfSquares?[c] += sum
        }
    }
}
