import CCPUFeatures
import Testing
import SceneSoundDSP
import SceneSoundDSPAVX512
import SceneSoundKernelConformance

/// The AVX-512 build of the render kernels against the scalar references (or the portable
/// build), through the checks every kernel table shares, on CPUs that have it. Many x86-64
/// CPUs do not (they run the AVX2 kernels, which AVX2KernelTests checks): there the suite is
/// reported skipped, with the reason, so that `make test` passes on a user's machine without
/// claiming these kernels were tested.
@Suite(.enabled(if: scenesound_cpu_has_avx512() != 0, "this CPU has no AVX-512: its kernels cannot run here"))
struct AVX512KernelTests {
    typealias Check = KernelConformance

    @Test func theAVX512KernelTableIsNamed() {
        #expect(RenderKernels.avx512.name == "avx512")
    }

    @Test(arguments: Check.convolutionCases)
    func convolutionMatchesScalar(frames: Int, taps: Int) {
        Check.convolutionMatchesScalar(.avx512, frames: frames, taps: taps)
    }

    @Test(arguments: Check.encodingCases)
    func encodingMatchesScalar(frames: Int, sources: Int) {
        Check.encodingMatchesScalar(.avx512, frames: frames, sources: sources)
    }

    @Test(arguments: Check.rotationFrames)
    func rotationMatchesScalar(frames: Int) {
        Check.rotationMatchesScalar(.avx512, frames: frames)
    }

    @Test(arguments: Check.fftSizes)
    func fftMatchesPortable(size: Int) {
        Check.fftMatchesPortable(.avx512, size: size)
    }

    @Test(arguments: Check.spectralAccumulationCases)
    func spectralAccumulationMatchesPortable(crossfading: Bool, pair: Bool) {
        Check.spectralAccumulationMatchesPortable(.avx512, crossfading: crossfading, pair: pair)
    }

    @Test func delayFoldingMatchesPortable() {
        Check.delayFoldingMatchesPortable(.avx512)
    }

    @Test func spectralBlendMatchesPortable() {
        Check.spectralBlendMatchesPortable(.avx512)
    }

    @Test(arguments: Check.measuredCopyFrames)
    func measuredCopyMatchesPortable(frames: Int) {
        Check.measuredCopyMatchesPortable(.avx512, frames: frames)
    }
}
