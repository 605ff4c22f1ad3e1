import SceneSoundDSP
import SceneSoundEngine
import SceneSoundPlatform

/// `scenesound bench --floor`: the least N sources can cost in this design, measured beside
/// the engine so that the engine is judged against it on the same host, in the same load. Per
/// source and block, only what no rendering of N independent streams on the engine's two paths
/// can skip: its block read out of its stream's ring (the same rings, fed as BenchScene feeds
/// them), then — split as the engine splits them, `voiceCount` sources on HRTF voices and the
/// rest on the bus — either a plain partitioned FFT convolution with one fixed pair of ear
/// filters (SpectralVoiceMix: two voices per transform, both ears' sums transformed back once
/// per span, the engine's own transform size and kernels), or the bus's 16 harmonics per ear,
/// 32 multiply-adds a sample (RenderKernels.fastest.encodeSum, 64 sources per sum as the bus
/// takes them). Nothing else: no filter interpolation, delays, glides, level corrections, near
/// field, rotation, decoding, limiter or governor, whose costs are what the engine adds.
final class BenchFloor {
    let blockFrames: Int
    let sampleRateHz: Double
    private let feeder: BenchRings
    /// Each ear's 16 gains per source (a ring of directions, as in the bench's scene).
    private let gains: (left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>)
    /// One group's inputs, then the two fields (16 channels of a block each).
    private let inputs: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    private let fields: (left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>)
    private let kernels = RenderKernels.fastest
    static let sourcesPerSum = 64
    private var renderedFrames = 0
    /// The first `voiceCount` sources: each one's input window (the transform's size − span of
    /// history, then the block) and its four rows of ear filters; the two ears' output.
    let voiceCount: Int
    private let voiceMix: SpectralVoiceMix
    private let windows: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    private let voiceFilters: UnsafeMutablePointer<Float>
    private let windowHistory: Int
    private let ears: (left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>)

    init(hrtf: HRTFSet, sourceCount: Int, voiceCount: Int, blockFrames: Int, sampleRateHz: Double, spanFrames: Int) {
        self.blockFrames = blockFrames
        self.sampleRateHz = sampleRateHz
        feeder = BenchRings(count: sourceCount, blockFrames: blockFrames, sampleRateHz: sampleRateHz)
        self.voiceCount = min(max(voiceCount, 0), sourceCount)
        voiceMix = SpectralVoiceMix(taps: hrtf.filterTaps, maximumDelaySamples: hrtf.maximumDelaySamples,
                                    partitionFrames: spanFrames, kernels: .fastest)
        windowHistory = voiceMix.size - spanFrames
        windows = .allocate(capacity: max(self.voiceCount, 1))
        for v in 0..<self.voiceCount {
            windows[v] = .allocate(capacity: windowHistory + blockFrames)
            windows[v].initialize(repeating: 0, count: windowHistory + blockFrames)
        }
        // Each voice its own filters (a source's direction is its own): a smooth low-pass, the
        // same arithmetic whatever the values.
        let floats = voiceMix.filterFloats, bins = voiceMix.binStride
        voiceFilters = .allocate(capacity: max(self.voiceCount, 1) * floats)
        for v in 0..<self.voiceCount {
            for row in 0..<4 {
                for k in 0..<bins {
                    voiceFilters[v * floats + row * bins + k] = row % 2 == 0 ? 0.5 / Float(1 + k + v % 7) : 0
                }
            }
        }
        ears = (.allocate(capacity: blockFrames), .allocate(capacity: blockFrames))
        let channels = SphericalHarmonics.channelCount
        gains = (.allocate(capacity: sourceCount * channels), .allocate(capacity: sourceCount * channels))
        let gain = Float(0.3 / Double(sourceCount).squareRoot())
        for index in 0..<sourceCount {
            let azimuth = 360.0 * Double(index) / Double(sourceCount)
            let direction = SphericalPosition(azimuthDegrees: azimuth, distanceMetres: 1).cartesian
            let harmonics = SphericalHarmonics.sn3d(direction) * gain
            for a in 0..<channels {
                gains.left[index * channels + a] = harmonics[a]
                gains.right[index * channels + a] = harmonics[a] * 0.9
            }
        }
        inputs = .allocate(capacity: Self.sourcesPerSum)
        for i in 0..<Self.sourcesPerSum {
            inputs[i] = .allocate(capacity: blockFrames)
            inputs[i].initialize(repeating: 0, count: blockFrames)
        }
        fields = (.allocate(capacity: channels * blockFrames), .allocate(capacity: channels * blockFrames))
        fields.left.initialize(repeating: 0, count: channels * blockFrames)
        fields.right.initialize(repeating: 0, count: channels * blockFrames)
        renderBlock()
    }

    deinit {
        for i in 0..<Self.sourcesPerSum { inputs[i].deallocate() }
        for p in [gains.left, gains.right, fields.left, fields.right, voiceFilters, ears.left, ears.right] { p.deallocate() }
        inputs.deallocate()
        for v in 0..<voiceCount { windows[v].deallocate() }
        windows.deallocate()
    }

    func measure(seconds: Double) -> BenchScene.Measurement {
        let blocks = max(1, Int((seconds * sampleRateHz / Double(blockFrames)).rounded()))
        var cpuNanoseconds = 0
        let wallStart = MonotonicClock.nowNanoseconds()
        for _ in 0..<blocks {
            feeder.feed(renderedFrames: renderedFrames)
            let start = MonotonicClock.threadCPUNanoseconds()
            renderBlock()
            cpuNanoseconds += MonotonicClock.threadCPUNanoseconds() - start
        }
        let wall = Double(MonotonicClock.nowNanoseconds() - wallStart) * 1e-9
        return BenchScene.Measurement(audioSeconds: Double(blocks * blockFrames) / sampleRateHz,
                                      renderCPUSeconds: Double(cpuNanoseconds) * 1e-9, wallSeconds: wall,
                                      peakBlockLoad: 0)
    }

    /// Every ring's block read; the voices' convolved span by span, the others added into both
    /// fields `sourcesPerSum` at a time.
    private func renderBlock() {
        let channels = SphericalHarmonics.channelCount, block = blockFrames
        let span = voiceMix.partitionFrames, floats = voiceMix.filterFloats
        fields.left.update(repeating: 0, count: channels * block)
        fields.right.update(repeating: 0, count: channels * block)
        ears.left.update(repeating: 0, count: block)
        ears.right.update(repeating: 0, count: block)
        feeder.rings.withUnsafeBufferPointer { rings in
            for v in 0..<voiceCount {
                let window = windows[v]
                window.update(from: window + block, count: windowHistory)
                var input = window + windowHistory
                Unmanaged.passUnretained(rings[v])._withUnsafeGuaranteedRef { ring in
                    if ring.read(into: &input, frames: block) < block { input.update(repeating: 0, count: block) }
                }
            }
            var offset = 0
            while offset < block {
                voiceMix.beginSpan()
                for v in 0..<voiceCount {
                    // The last `size` samples up to the span's end.
                    voiceMix.accumulate(window: windows[v] + offset, current: voiceFilters + v * floats, next: nil)
                }
                voiceMix.finishSpan(left: ears.left + offset, right: ears.right + offset)
                offset += span
            }
            var first = voiceCount
            while first < rings.count {
                let count = min(Self.sourcesPerSum, rings.count - first)
                for i in 0..<count {
                    Unmanaged.passUnretained(rings[first + i])._withUnsafeGuaranteedRef { ring in
                        if ring.read(into: inputs + i, frames: block) < block {
                            (inputs[i]).update(repeating: 0, count: block)
                        }
                    }
                }
                inputs.withMemoryRebound(to: UnsafePointer<Float>.self, capacity: count) { sources in
                    kernels.encodeSum(sources, gains.left + first * channels, count, block, fields.left, block)
                    kernels.encodeSum(sources, gains.right + first * channels, count, block, fields.right, block)
                }
                first += count
            }
        }
        renderedFrames += block
    }
}
