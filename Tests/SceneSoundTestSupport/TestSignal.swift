import Foundation

/// Test signals: seeded noise, a different sequence on each channel so swapped channels show.
public enum TestSignal {
    /// Interleaved stereo, s16 values, `seconds` long.
    public static func stereoNoise(seconds: Double, rateHz: Int = 48_000, seed: UInt64) -> [Int16] {
        var state = seed
        return (0 ..< Int(seconds * Double(rateHz)) * 2).map { _ in
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int16(truncatingIfNeeded: Int64(state >> 33) % 16384 - 8192)  // about -12 dBFS peak
        }
    }

    /// A mono sine of whole hertz, s16 values of peak `amplitude`, `seconds` long (its phase
    /// taken within each second, so it stays exact however long).
    public static func tone(hertz: Int, amplitude: Double, seconds: Double, rateHz: Int = 48_000) -> [Int16] {
        let step = 2 * Double.pi * Double(hertz) / Double(rateHz)
        return (0 ..< Int(seconds * Double(rateHz))).map { Int16(amplitude * sin(step * Double($0 % rateHz))) }
    }

    /// A 16-bit PCM WAV file.
    public static func writeWAV(_ samples: [Int16], channels: Int = 2, rateHz: Int = 48_000, to url: URL) throws {
        var data = Data()
        func append<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) } }
        let byteCount = samples.count * 2
        data.append(contentsOf: Array("RIFF".utf8)); append(UInt32(36 + byteCount))
        data.append(contentsOf: Array("WAVEfmt ".utf8)); append(UInt32(16)); append(UInt16(1)); append(UInt16(channels))
        append(UInt32(rateHz)); append(UInt32(rateHz * channels * 2)); append(UInt16(channels * 2)); append(UInt16(16))
        data.append(contentsOf: Array("data".utf8)); append(UInt32(byteCount))
        samples.withUnsafeBufferPointer { buffer in
            data.append(contentsOf: UnsafeRawBufferPointer(buffer))  // little-endian already (x86-64, arm64)
        }
        try data.write(to: url)
    }

    /// Where `captured` (interleaved stereo float) lines up with `source` (interleaved s16),
    /// and the residual after aligning, in dB relative to the captured signal. nil if no
    /// stretch of 64 frames of the capture is found in the source.
    /// `mismatch`: for a failure's message, where the capture differs from the file (by more
    /// than the tolerance) — its first and last differing captured frame, how many, of how many,
    /// and where after the first the capture follows the file again. `breaks`: when it differs,
    /// whether that is a few breaks in an otherwise exact copy — each frames of the file skipped
    /// (`jumpFrames` > 0) or played again or held up (< 0), and from which captured frame it is
    /// exact again, the last to the end; empty when it is exact, or does not follow the file
    /// again.
    public typealias Match = (sourceFrame: Int, capturedFrame: Int, residualDecibels: Double, mismatch: String, breaks: [CopyBreak])

    public static func match(captured: [Float], source: [Int16]) -> Match? {
        let reference = source.map { Float($0) / 32768 }
        let frames = captured.count / 2, sourceFrames = reference.count / 2
        // Start in the middle of the capture, clear of where it began and ended.
        let anchor = frames / 2
        guard anchor + 64 < frames else { return nil }
        let tolerance: Float = 2e-3
        candidates: for start in 0 ..< sourceFrames - 64 {
            for frame in 0 ..< 64 {
                for channel in 0 ..< 2 {
                    let difference = reference[2 * (start + frame) + channel] - captured[2 * (anchor + frame) + channel]
                    if abs(difference) > tolerance { continue candidates }
                }
            }
            let offset = start - anchor  // source frame = captured frame + offset
            var signal = 0.0, error = 0.0
            var differing: [Int] = []
            let compared = max(0, -offset) ..< min(frames, sourceFrames - offset)
            for frame in compared {
                for channel in 0 ..< 2 {
                    let c = Double(captured[2 * frame + channel])
                    let r = Double(reference[2 * (frame + offset) + channel])
                    if c == 0 && error == 0 && signal == 0 { continue }  // leading silence before the stream was taken
                    signal += c * c
                    error += (c - r) * (c - r)
                    if abs(c - r) > Double(tolerance), differing.last != frame { differing.append(frame) }
                }
            }
            // The breaks, walked from the copy's start: at the offset its first sounding frames
            // follow (the anchor's, or another where a break came before the anchor).
            let breaks = differing.first.map { first -> [CopyBreak] in
                let sounding = compared.first { captured[2 * $0] != 0 || captured[2 * $0 + 1] != 0 } ?? first
                if let startOffset = CopyBreak.offset(following: sounding, around: offset, captured: captured, reference: reference,
                                                      tolerance: tolerance),
                   let differsFrom = (sounding ..< frames).first(where: {
                       !CopyBreak.follows($0, offset: startOffset, captured: captured, reference: reference, tolerance: tolerance)
                   }) {
                    let walked = CopyBreak.after(differsFrom, captured: captured, reference: reference, offset: startOffset,
                                                 tolerance: tolerance)
                    if !walked.isEmpty { return walked }
                }
                return CopyBreak.after(first, captured: captured, reference: reference, offset: offset, tolerance: tolerance)
            } ?? []
            let mismatch = differing.isEmpty ? "none" : "captured frames \(differing.first!)...\(differing.last!) of \(compared): "
                + "\(differing.count) differ (the match anchored at captured frame \(anchor), source frame \(start)); "
                + (!breaks.isEmpty ? CopyBreak.describe(breaks) : "the capture does not follow the file again after the first; "
                    + whereInFile(capturedFrame: differing.first!, captured: captured, reference: reference,
                                  matchedOffset: offset, tolerance: tolerance))
            return (start, anchor, 10 * log10(max(error, 1e-30) / max(signal, 1e-30)), mismatch, breaks)
        }
        return nil
    }

    /// Where the 64 captured frames from `capturedFrame` are in the file, for a failure's
    /// message: a quantum lost, played twice or taken from elsewhere reads differently.
    public static func whereInFile(capturedFrame: Int, captured: [Float], reference: [Float], matchedOffset: Int, tolerance: Float) -> String {
        let frames = min(64, captured.count / 2 - capturedFrame), sourceFrames = reference.count / 2
        let stretch = captured[(2 * capturedFrame) ..< (2 * (capturedFrame + frames))]
        if stretch.allSatisfy({ $0 == 0 }) { return "its first differing frames are silent" }
        candidates: for start in 0 ... max(0, sourceFrames - frames) {
            for index in 0 ..< 2 * frames where abs(reference[2 * start + index] - stretch[stretch.startIndex + index]) > tolerance {
                continue candidates
            }
            return "its first differing frames are the file's from frame \(start) (\(start - capturedFrame - matchedOffset) "
                + "frames from where the match puts them)"
        }
        return "its first differing frames are nowhere in the file"
    }

    /// One break in a copy: the capture differs from the file at `firstDifferingFrame`, then
    /// follows it again, exactly (to its end, or to the next break), from `exactFromFrame`,
    /// `jumpFrames` further on in the file (negative: back, or held up by silence put in; 0:
    /// the frames between replaced in place).
    public struct CopyBreak: CustomStringConvertible {
        public var firstDifferingFrame: Int
        public var exactFromFrame: Int
        public var jumpFrames: Int
        /// Whether the frames between were silence.
        public var silentBetween: Bool
        /// Breaks followed, at most: past them a copy is just wrong. (A fresh-clone run's
        /// capture on a host taking 10 % of the CPUs lost 7 quanta in its first second; ci69's,
        /// the host taking 36 %, 42 and 61 in two seconds beside a third copy past 64, the node
        /// 83 cycles late.)
        public static let maximumBreaks = 256

        public var description: String {
            let how = jumpFrames > 0 ? "\(jumpFrames) frames of the file skipped"
                : jumpFrames < 0 ? "\(-jumpFrames) frames played again or put in" : "\(exactFromFrame - firstDifferingFrame) frames not the file's"
            return "at captured frame \(firstDifferingFrame): \(how), the frames between \(silentBetween ? "silent" : "not silent"), "
                + "exact again from frame \(exactFromFrame)"
        }

        /// A copy's breaks, in order, the last followed by an exact copy to the end.
        public static func describe(_ breaks: [CopyBreak]) -> String {
            (breaks.count == 1 ? "one break " : "\(breaks.count) breaks: ") + breaks.map(\.description).joined(separator: "; ") + " to the end"
        }

        /// The offset (within a second of `around`, itself first) at which 64 frames of the
        /// capture from `frame` are the file's.
        public static func offset(following frame: Int, around: Int, captured: [Float], reference: [Float], tolerance: Float) -> Int? {
            guard frame + 64 <= captured.count / 2 else { return nil }
            return ([0] + (-48_000 ... 48_000).filter { $0 != 0 }).lazy.map { around + $0 }.first { candidate in
                (frame ..< frame + 64).allSatisfy { follows($0, offset: candidate, captured: captured, reference: reference, tolerance: tolerance) }
            }
        }

        /// Whether the captured frame is the file's frame `offset` further on, both channels.
        public static func follows(_ capturedFrame: Int, offset: Int, captured: [Float], reference: [Float], tolerance: Float) -> Bool {
            let sourceFrame = capturedFrame + offset
            guard sourceFrame >= 0, sourceFrame < reference.count / 2 else { return false }
            return (0 ..< 2).allSatisfy { abs(reference[2 * sourceFrame + $0] - captured[2 * capturedFrame + $0]) <= tolerance }
        }

        /// Looks for where, after `frame` (and any silence put in there), 64 frames of the capture
        /// are found again in the file within a second either way, and follows the capture from
        /// there: to its end, or to where it breaks again, and on (up to `maximumBreaks`). Empty
        /// when at some break the capture does not follow the file again.
        public static func after(_ frame: Int, captured: [Float], reference: [Float], offset: Int, tolerance: Float) -> [CopyBreak] {
            let frames = captured.count / 2
            func differs(at capturedFrame: Int, _ newOffset: Int) -> Bool {
                !follows(capturedFrame, offset: newOffset, captured: captured, reference: reference, tolerance: tolerance)
            }
            var breaks: [CopyBreak] = [], from = frame, currentOffset = offset
            nextBreak: while breaks.count < maximumBreaks {
                // The same offset first (frames replaced in place), where the copy was exact
                // right before: a start that is not the file is no break.
                let exactBefore = from > 0 && !differs(at: from - 1, currentOffset)
                let jumps = (exactBefore ? [0] : []) + (-48_000 ... 48_000).filter { $0 != 0 }
                // Silence put in is skipped whatever its length (an app's stream held up while
                // its server starved), then the copy is looked for within 50 ms.
                let sounding = (from ..< frames).first { captured[2 * $0] != 0 || captured[2 * $0 + 1] != 0 } ?? frames
                let searchFrom = max(from + 1, sounding)
                for resume in stride(from: searchFrom, to: min(frames - 64, searchFrom + 2_400), by: 64) {
                    for jump in jumps {
                        let newOffset = currentOffset + jump
                        guard !(0 ..< 64).contains(where: { differs(at: resume + $0, newOffset) }) else { continue }
                        var exactFrom = resume
                        while exactFrom > from, !differs(at: exactFrom - 1, newOffset) { exactFrom -= 1 }
                        let silent = captured[(2 * from) ..< (2 * exactFrom)].allSatisfy { $0 == 0 }
                        breaks.append(CopyBreak(firstDifferingFrame: from, exactFromFrame: exactFrom, jumpFrames: jump, silentBetween: silent))
                        guard let again = (resume ..< frames).first(where: { differs(at: $0, newOffset) }) else { return breaks }
                        (from, currentOffset) = (again, newOffset)
                        continue nextBreak
                    }
                }
                return []
            }
            return []
        }
    }

    public static func rmsDecibels(_ samples: ArraySlice<Float>) -> Double {
        guard !samples.isEmpty else { return -.infinity }
        let power = samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(samples.count)
        return 10 * log10(max(power, 1e-30))
    }
}
