// A light late reverb for externalisation: a four-line feedback delay network with a
// Hadamard mixing matrix, frequency-dependent decay (a one-pole damper in each loop) and a
// pre-delay. Sounds rendered only through HRTFs tend to sit inside the head; a faint,
// decorrelated diffuse tail moves them out. Fed with a mono send, returns stereo.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

public enum Room: String, CaseIterable, Sendable {
    case none, small, medium

    /// Decay time (RT60) in seconds, wet level in dB, pre-delay in seconds.
    var parameters: (decaySeconds: Double, wetDecibels: Double, preDelaySeconds: Double, lineLengthsSeconds: [Double]) {
        switch self {
        case .none: return (0, -.infinity, 0, [])
        case .small: return (0.35, -20, 0.006, [0.0297, 0.0371, 0.0411, 0.0437])
        case .medium: return (0.7, -16, 0.012, [0.0447, 0.0539, 0.0613, 0.0673])
        }
    }
}

public final class LateReverb {
    public let room: Room
    private let lineCount = 4
    private var lines: [UnsafeMutablePointer<Float>] = []
    private var lengths: [Int] = []
    private var positions: [Int] = []
    private var feedback: [Float] = []
    private var damping: [Float] = []
    private var dampState: [Float] = []
    private let preDelay: UnsafeMutablePointer<Float>
    private let preDelayLength: Int
    private var preDelayPosition = 0
    private let wetGain: Float
    /// Seconds after the input stops until the tail is 60 dB down.
    public var tailSeconds: Double { room.parameters.decaySeconds }

    public init(room: Room, sampleRateHz: Double) {
        self.room = room
        let p = room.parameters
        wetGain = room == .none ? 0 : Float(pow(10, p.wetDecibels / 20))
        preDelayLength = max(1, Int(p.preDelaySeconds * sampleRateHz))
        preDelay = .allocate(capacity: preDelayLength)
        preDelay.initialize(repeating: 0, count: preDelayLength)
        for seconds in p.lineLengthsSeconds {
            let length = max(1, Int(seconds * sampleRateHz))
            let line = UnsafeMutablePointer<Float>.allocate(capacity: length)
            line.initialize(repeating: 0, count: length)
            lines.append(line)
            lengths.append(length)
            positions.append(0)
            // Each pass through a line of length L must lose 60 dB · L / RT60.
            feedback.append(Float(pow(10, -3 * seconds / p.decaySeconds)))
            // High frequencies decay about twice as fast: a gentle loop low-pass.
            damping.append(0.35)
            dampState.append(0)
        }
    }

    deinit {
        preDelay.deallocate()
        lines.forEach { $0.deallocate() }
    }

    /// Adds the reverb of `send` (mono) to `left` and `right`. Real-time safe.
    public func process(send: UnsafePointer<Float>, left: UnsafeMutablePointer<Float>,
                        right: UnsafeMutablePointer<Float>, frames: Int) {
        guard room != .none else { return }
        lines.withUnsafeBufferPointer { lines in
            lengths.withUnsafeBufferPointer { lengths in
                positions.withUnsafeMutableBufferPointer { positions in
                    dampState.withUnsafeMutableBufferPointer { damp in
                        for n in 0..<frames {
                            let x = preDelay[preDelayPosition]
                            preDelay[preDelayPosition] = send[n]
                            preDelayPosition = preDelayPosition + 1 == preDelayLength ? 0 : preDelayPosition + 1

                            let o0 = lines[0][positions[0]], o1 = lines[1][positions[1]]
                            let o2 = lines[2][positions[2]], o3 = lines[3][positions[3]]
                            // Hadamard mix (orthogonal, scaled by 1/2).
                            let m0 = 0.5 * (o0 + o1 + o2 + o3), m1 = 0.5 * (o0 - o1 + o2 - o3)
                            let m2 = 0.5 * (o0 + o1 - o2 - o3), m3 = 0.5 * (o0 - o1 - o2 + o3)
                            let mixed = (m0, m1, m2, m3)
                            for i in 0..<4 {
                                let m: Float = i == 0 ? mixed.0 : i == 1 ? mixed.1 : i == 2 ? mixed.2 : mixed.3
                                damp[i] += (1 - damping[i]) * (m - damp[i])
                                lines[i][positions[i]] = x + feedback[i] * damp[i]
                                positions[i] = positions[i] + 1 == lengths[i] ? 0 : positions[i] + 1
                            }
                            left[n] += wetGain * (o0 - o2)
                            right[n] += wetGain * (o1 - o3)
                        }
                    }
                }
            }
        }
    }
}
