// RenderKernels compiled for AVX2 and FMA (this target's -target-cpu): the DSP module's
// inlinable kernels, inlined here, so that the same source runs on eight lanes. Nothing in
// this module may run on a CPU without AVX2: the engine checks (CCPUFeatures) before it
// touches `avx2`.

import SceneSoundDSP

extension RenderKernels {
    public static let avx2 = RenderKernels(
        name: "avx2",
        convolve: { FIRKernel.convolve(input: $0, reversedTaps: $1, taps: $2, output: $3, frames: $4, wideRegisters: true,
                                       fusedMultiplyAdd: true) },
        encodeSum: { AmbisonicEncoderKernel.encodeSum(inputs: $0, gains: $1, count: $2, frames: $3, bus: $4,
                                                      channelStride: $5, wideRegisters: true, fusedMultiplyAdd: true) },
        rotate: { AmbisonicRotationKernel.rotate(input: $0, inputStride: $1, output: $2, outputStride: $3, frames: $4,
                                                 from: $5, to: $6) },
        fft: { SplitComplexFFT.forward(size: $0, twiddles: $1, inputReal: $2, inputImag: $3, outputReal: $4, outputImag: $5,
                                       scratchReal: $6, scratchImag: $7) },
        accumulateSpectra: { SpectralKernel.accumulate(spectrum: $0, size: $1, currentA: $2, nextA: $3, currentB: $4, nextB: $5,
                                                       sums: $6, binStride: $7) },
        foldDelay: { SpectralKernel.foldDelay(ear: $0, delayRow: $1, fractionRows: $2, binStride: $3, t: $4) },
        blendSpectra: { SpectralKernel.blend($0, $1, $2, $3, $4, $5, $6, $7, into: $8, count: $9) },
        copySummingSquares: { Mixing.copySummingSquares($0, to: $1, frames: $2) })
}
