// Headphone equalization on the master bus: a cascade of biquads per ear, and the stage that
// switches between cascades while audio plays.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One equalization's cascade for both ears: coefficients and the filter state, allocated off the
/// render thread (built by the server from a `ParametricEQ`, handed over in a command) and used
/// by exactly one `HeadphoneEqualizer`, which hands it back to be freed off the render thread.
public final class HeadphoneEQFilter: @unchecked Sendable {
    public let sectionCount: Int
    public let preampGain: Double
    /// What it was made from, for status.
    public let parametricEQ: ParametricEQ
    public let sourcePath: String
    /// b0, b1, b2, a1, a2 per section.
    private let coefficients: UnsafeMutablePointer<Double>
    /// Per ear, per section: the transposed direct form II's two state values.
    private let state: UnsafeMutablePointer<Double>

    public init(_ eq: ParametricEQ, sampleRateHz: Double, sourcePath: String = "") throws(ParametricEQError) {
        let sections = try eq.coefficients(sampleRateHz: sampleRateHz)
        sectionCount = sections.count
        preampGain = pow(10, eq.preampDecibels / 20)
        parametricEQ = eq
        self.sourcePath = sourcePath
        coefficients = .allocate(capacity: max(1, 5 * sections.count))
        for (i, c) in sections.enumerated() {
            (coefficients + 5 * i).initialize(from: [c.b0, c.b1, c.b2, c.a1, c.a2], count: 5)
        }
        state = .allocate(capacity: max(1, 4 * sections.count))
        state.initialize(repeating: 0, count: max(1, 4 * sections.count))
    }

    deinit {
        coefficients.deallocate()
        state.deallocate()
    }

    /// Filters one ear's samples in place. Real-time safe.
    public func process(_ samples: UnsafeMutablePointer<Float>, ear: Int, frames: Int) {
        let g = preampGain
        for n in 0..<frames {
            var x = Double(samples[n]) * g
            for s in 0..<sectionCount {
                let c = coefficients + 5 * s, z = state + 4 * s + 2 * ear
                let y = c[0] * x + z[0]
                z[0] = c[1] * x - c[3] * y + z[1]
                z[1] = c[2] * x - c[4] * y
                x = y
            }
            samples[n] = Float(x)
        }
    }
}

/// The stage after the binaural mix: the equalization in use, switched without a click — a new
/// one fades in while the old one fades out (both run over the fade, from the same input), for
/// `fadeFrames`. Without one the audio passes untouched (bit-exact). Owned by the render thread;
/// it never allocates or frees: filters that leave it wait in `retired` for the owner to hand
/// them back off the thread.
public final class HeadphoneEqualizer {
    public let fadeFrames: Int
    public private(set) var current: HeadphoneEQFilter?
    /// While fading: the one fading out (nil: the dry signal).
    private var outgoing: HeadphoneEQFilter?
    private var fadePosition = 0
    private var fading = false
    /// A switch asked for while a fade ran: it starts when that one ends.
    private var pending: HeadphoneEQFilter?
    private var hasPending = false
    /// Filters no longer used, for the owner to take (`takeRetired`) and free elsewhere.
    private var retired: ContiguousArray<HeadphoneEQFilter?>
    private var retiredCount = 0
    private let scratchLeft: UnsafeMutablePointer<Float>
    private let scratchRight: UnsafeMutablePointer<Float>

    public static let retiredCapacity = 8

    public init(sampleRateHz: Double, maximumFrames: Int, fadeSeconds: Double = 0.01) {
        fadeFrames = max(1, Int((fadeSeconds * sampleRateHz).rounded()))
        retired = ContiguousArray(repeating: nil, count: Self.retiredCapacity)
        scratchLeft = .allocate(capacity: maximumFrames)
        scratchRight = .allocate(capacity: maximumFrames)
    }

    deinit {
        scratchLeft.deallocate()
        scratchRight.deallocate()
    }

    /// True when a switch can be taken now: room for all it may retire (a pending one it
    /// supersedes now; later the one fading out, and the one the pending switch replaces).
    public var canSwitch: Bool { retiredCount <= Self.retiredCapacity - 3 }

    /// Switches to `filter` (nil: none) through a fade. The caller checks `canSwitch` first.
    public func use(_ filter: HeadphoneEQFilter?) {
        precondition(canSwitch)
        if fading {
            if hasPending, let superseded = pending { retire(superseded) }
            pending = filter
            hasPending = true
            return
        }
        start(filter)
    }

    private func start(_ filter: HeadphoneEQFilter?) {
        outgoing = current
        current = filter
        fadePosition = 0
        fading = true
    }

    private func retire(_ filter: HeadphoneEQFilter) {
        for i in 0..<retired.count where retired[i] == nil {
            retired[i] = filter
            retiredCount += 1
            return
        }
    }

    /// A filter that left the stage, to be released off the render thread; nil when none.
    public func takeRetired() -> HeadphoneEQFilter? {
        guard retiredCount > 0 else { return nil }
        for i in 0..<retired.count {
            if let filter = retired[i] {
                retired[i] = nil
                retiredCount -= 1
                return filter
            }
        }
        return nil
    }

    /// Equalizes a block of both ears in place. Real-time safe.
    public func process(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, frames: Int) {
        guard fading else {
            if let current {
                current.process(left, ear: 0, frames: frames)
                current.process(right, ear: 1, frames: frames)
            }
            return
        }
        // The old rendering from a copy of the input, the new one in place; then mixed.
        scratchLeft.update(from: left, count: frames)
        scratchRight.update(from: right, count: frames)
        outgoing?.process(scratchLeft, ear: 0, frames: frames)
        outgoing?.process(scratchRight, ear: 1, frames: frames)
        current?.process(left, ear: 0, frames: frames)
        current?.process(right, ear: 1, frames: frames)
        let length = Float(fadeFrames)
        for n in 0..<frames {
            let x = min(1, Float(fadePosition + n + 1) / length)
            let w = x * x * (3 - 2 * x)  // smoothstep: no corner at either end
            left[n] = scratchLeft[n] + w * (left[n] - scratchLeft[n])
            right[n] = scratchRight[n] + w * (right[n] - scratchRight[n])
        }
        fadePosition += frames
        if fadePosition >= fadeFrames {
            fading = false
            if let old = outgoing { retire(old) }
            outgoing = nil
            if hasPending {
                hasPending = false
                let next = pending
                pending = nil
                start(next)
            }
        }
    }
}
