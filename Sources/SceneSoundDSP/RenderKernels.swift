// The inner loops the render path spends its time in, as a table of C function pointers so
// that a build of the same loops for a wider instruction set can stand in when the CPU has
// one. Swift has no per-function target attributes; instead the kernels are inlinable and
// SceneSoundDSPAVX2 compiles them again with AVX2 and FMA enabled. The engine picks the
// table once (RenderKernels.portable here, or the AVX2 one) and hands it to its voices.

public struct RenderKernels: @unchecked Sendable {
    /// FIRKernel.convolve.
    public typealias Convolve = @convention(c) (_ input: UnsafePointer<Float>, _ reversedTaps: UnsafePointer<Float>,
                                                _ taps: Int, _ output: UnsafeMutablePointer<Float>, _ frames: Int) -> Void
    /// AmbisonicEncoderKernel.encodeSum.
    public typealias EncodeSum = @convention(c) (_ inputs: UnsafePointer<UnsafePointer<Float>>, _ gains: UnsafePointer<Float>,
                                                 _ count: Int, _ frames: Int, _ bus: UnsafeMutablePointer<Float>,
                                                 _ channelStride: Int) -> Void
    /// AmbisonicRotationKernel.rotate.
    public typealias Rotate = @convention(c) (_ input: UnsafePointer<Float>, _ inputStride: Int,
                                              _ output: UnsafeMutablePointer<Float>, _ outputStride: Int, _ frames: Int,
                                              _ from: UnsafePointer<Float>, _ to: UnsafePointer<Float>) -> Void

    /// SplitComplexFFT.forward (and, with real and imaginary swapped, the inverse).
    public typealias Transform = @convention(c) (_ size: Int, _ twiddles: UnsafePointer<Float>,
                                                 _ inputReal: UnsafePointer<Float>, _ inputImag: UnsafePointer<Float>,
                                                 _ outputReal: UnsafeMutablePointer<Float>, _ outputImag: UnsafeMutablePointer<Float>,
                                                 _ scratchReal: UnsafeMutablePointer<Float>, _ scratchImag: UnsafeMutablePointer<Float>) -> Void
    /// SpectralKernel.accumulate.
    public typealias AccumulateSpectra = @convention(c) (_ spectrum: UnsafePointer<Float>, _ size: Int,
                                                         _ currentA: UnsafePointer<Float>, _ nextA: UnsafePointer<Float>?,
                                                         _ currentB: UnsafePointer<Float>?, _ nextB: UnsafePointer<Float>?,
                                                         _ sums: UnsafeMutablePointer<Float>, _ binStride: Int) -> Void
    /// SpectralKernel.foldDelay.
    public typealias FoldDelay = @convention(c) (_ ear: UnsafeMutablePointer<Float>, _ delayRow: UnsafePointer<Float>,
                                                 _ fractionRows: UnsafePointer<Float>, _ binStride: Int, _ t: Float) -> Void
    /// SpectralKernel.blend.
    public typealias BlendSpectra = @convention(c) (_ p0: UnsafePointer<Float>, _ w0: Float, _ p1: UnsafePointer<Float>, _ w1: Float,
                                                    _ p2: UnsafePointer<Float>, _ w2: Float, _ p3: UnsafePointer<Float>, _ w3: Float,
                                                    _ out: UnsafeMutablePointer<Float>, _ count: Int) -> Void

    /// Mixing.copySummingSquares.
    public typealias CopySummingSquares = @convention(c) (_ input: UnsafePointer<Float>, _ output: UnsafeMutablePointer<Float>,
                                                          _ frames: Int) -> Float

    /// What they were built for ("portable", "avx2", "avx512"); shown in status.
    public let name: String
    public let convolve: Convolve
    public let encodeSum: EncodeSum
    public let rotate: Rotate
    public let fft: Transform
    public let accumulateSpectra: AccumulateSpectra
    public let foldDelay: FoldDelay
    public let blendSpectra: BlendSpectra
    public let copySummingSquares: CopySummingSquares

    public init(name: String, convolve: Convolve, encodeSum: EncodeSum, rotate: Rotate, fft: Transform,
                accumulateSpectra: AccumulateSpectra, foldDelay: FoldDelay, blendSpectra: BlendSpectra,
                copySummingSquares: CopySummingSquares) {
        self.name = name
        self.convolve = convolve
        self.encodeSum = encodeSum
        self.rotate = rotate
        self.fft = fft
        self.accumulateSpectra = accumulateSpectra
        self.foldDelay = foldDelay
        self.blendSpectra = blendSpectra
        self.copySummingSquares = copySummingSquares
    }

    /// The unscaled inverse transform: `fft` with real and imaginary parts swapped.
    @inline(__always)
    public func inverseFFT(_ size: Int, _ twiddles: UnsafePointer<Float>,
                           _ inputReal: UnsafePointer<Float>, _ inputImag: UnsafePointer<Float>,
                           _ outputReal: UnsafeMutablePointer<Float>, _ outputImag: UnsafeMutablePointer<Float>,
                           _ scratchReal: UnsafeMutablePointer<Float>, _ scratchImag: UnsafeMutablePointer<Float>) {
        fft(size, twiddles, inputImag, inputReal, outputImag, outputReal, scratchImag, scratchReal)
    }

    /// The kernels as this module is built (any x86-64, SSE2).
    public static let portable = RenderKernels(
        name: "portable",
        convolve: { FIRKernel.convolve(input: $0, reversedTaps: $1, taps: $2, output: $3, frames: $4) },
        encodeSum: { AmbisonicEncoderKernel.encodeSum(inputs: $0, gains: $1, count: $2, frames: $3, bus: $4, channelStride: $5) },
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
