// RenderKernels compiled for AVX-512 (F, CD, BW, DQ, VL: this target's -target-cpu), as
// SceneSoundDSPAVX2 compiles them for AVX2: the DSP module's inlinable kernels, inlined here.
// The encoder keeps the whole field's sixteen channels in the 32 vector registers. Nothing in
// this module may run on a CPU without AVX-512: the engine checks (CCPUFeatures) before it
// touches `avx512`.

import SceneSoundDSP

extension RenderKernels {
    public static let avx512 = RenderKernels(
        name: "avx512",
        convolve: { FIRKernel.convolve(input: $0, reversedTaps: $1, taps: $2, output: $3, frames: $4, wideRegisters: true,
                                       fusedMultiplyAdd: true) },
        encodeSum: { AmbisonicEncoderKernel.encodeSum(inputs: $0, gains: $1, count: $2, frames: $3, bus: $4,
                                                      channelStride: $5, wideRegisters: true, everyChannelInRegisters: true,
                                                      fusedMultiplyAdd: true) },
        rotate: { AmbisonicRotationKernel.rotate(input: $0, inputStride: $1, output: $2, outputStride: $3, frames: $4,
                                                 from: $5, to: $6) },
        fft: { SplitComplexFFT.forward(size: $0, twiddles: $1, inputReal: $2, inputImag: $3, outputReal: $4, outputImag: $5,
                                       scratchReal: $6, scratchImag: $7) },
        accumulateSpectra: { SpectralKernel.accumulate(spectrum: $0, size: $1, currentA: $2, nextA: $3, currentB: $4, nextB: $5,
                                                       sums: $6, binStride: $7) },
        foldDelay: { SpectralKernel.foldDelay(ear: $0, delayRow: $1, fractionRows: $2, binStride: $3, t: $4) },
        blendSpectra: { SpectralKernel.blend($0, $1, $2, $3, $4, $5, $6, $7, into: $8, count: $9) },
        copySummingSquares: { Mixing.copySummingSquares($0, to: $1, frames: $2, in: SIMD16<Float>.self) })
}
