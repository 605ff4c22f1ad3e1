import SceneSoundDSP

/// Plain stereo (`SpatialMode.off`, and every stream when the device's spatial mode is off).
extension SpatialRenderer {
    /// `.off`: straight to the bus; exactly the input when the gain is 1. Surround folds down
    /// to stereo (ChannelLayout.foldDownWeights).
    func renderPlain(_ source: RenderSource, offset: Int, frames: Int) {
        renderPlain(source, offset: offset, frames: frames, left: left, right: right)
    }

    /// `.off` into the given pair (a speaker rendering's FL and FR).
    func renderPlain(_ source: RenderSource, offset: Int, frames: Int,
                     left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>) {
        let start = source.appliedGain, end = source.gain
        source.appliedGain = end
        if source.layout.placement == .speakers {
            let step = (end - start) / Float(frames)
            for c in 0..<source.channelCount {
                let (wl, wr) = source.foldDownWeights[c]
                guard wl != 0 || wr != 0 else { continue }
                let x = source.planar[c] + offset
                for n in 0..<frames {
                    let v = x[n] * (start + step * Float(n + 1))
                    left[offset + n] += v * wl
                    right[offset + n] += v * wr
                }
            }
            return
        }
        let l = source.planar[0] + offset
        let r = source.planar[source.channelCount - 1] + offset
        if start == 1 && end == 1 {
            Mixing.add(l, into: left + offset, frames: frames)
            Mixing.add(r, into: right + offset, frames: frames)
            return
        }
        let step = (end - start) / Float(frames)
        for n in 0..<frames {
            let g = start + step * Float(n + 1)
            left[offset + n] += l[n] * g
            right[offset + n] += r[n] * g
        }
    }
}
