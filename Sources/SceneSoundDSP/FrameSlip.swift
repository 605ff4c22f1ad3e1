/// Lengthens or shortens a span of interleaved audio by one frame, smoothly: the span is read
/// at positions spread evenly from its first frame to its last (four-point Lagrange
/// interpolation, FractionalDelay's), so both ends stay where they were and the frame gained
/// or lost is spread over the whole span. Over a capture fragment of 5 ms that is a change of
/// rate of 0.4 % for 5 ms (7 cents), where dropping or repeating a frame would be a click.
/// Used to follow a clock that runs apart from ours (CapturedAppStreams.Feed).
public enum FrameSlip {
    /// Writes `frames + change` frames (`change` −1 or +1) to `output` from `frames` (at least 4)
    /// of `input`, both interleaved in `channels`. `before`: the frame that came before the span
    /// (its first reading leans on it).
    public static func resample(_ input: UnsafePointer<Float>, frames: Int, channels: Int, before: UnsafePointer<Float>,
                                change: Int, into output: UnsafeMutablePointer<Float>) {
        precondition(frames >= 4 && (change == 1 || change == -1))
        let outputFrames = frames + change
        let step = Double(frames - 1) / Double(outputFrames - 1)
        for j in 0..<outputFrames {
            let position = Double(j) * step
            let i = min(Int(position), frames - 2)
            let t = Float(position - Double(i))
            // The reading at i + t is the one at i + 1 delayed by 1 − t: x[i + 2] … x[i − 1].
            let c = FractionalDelay.coefficients(1 - t)
            for channel in 0..<channels {
                func x(_ k: Int) -> Float {
                    if k < 0 { return before[channel] }
                    if k >= frames {
                        // Past the span's end: continued in a straight line (t < 1 there, and
                        // the last frame itself is read exactly).
                        return 2 * input[(frames - 1) * channels + channel] - input[(frames - 2) * channels + channel]
                    }
                    return input[k * channels + channel]
                }
                output[j * channels + channel] = c.0 * x(i + 2) + c.1 * x(i + 1) + c.2 * x(i) + c.3 * x(i - 1)
            }
        }
    }
}
