import CCPUFeatures
import Testing
import SceneSoundDSP
import SceneSoundDSPAVX2
import SceneSoundKernelConformance

/// The AVX2 build of the render kernels against the scalar references (or the portable
/// build), through the checks every kernel table shares, on CPUs that have it (the suite
/// fails, rather than passes empty, on one that does not: there is nothing to test).
@Suite struct AVX2KernelTests {
    typealias Check = KernelConformance

    func requireAVX2() throws { try #require(scenesound_cpu_has_avx2_fma() != 0) }

    @Test func thisCPURunsAVX2() {
        #expect(scenesound_cpu_has_avx2_fma() != 0, "no AVX2 + FMA here: the AVX2 kernels are not exercised")
    }

    @Test(arguments: Check.convolutionCases)
    func convolutionMatchesScalar(frames: Int, taps: Int) throws {
        try requireAVX2()
        Check.convolutionMatchesScalar(.avx2, frames: frames, taps: taps)
    }

    @Test(arguments: Check.encodingCases)
    func encodingMatchesScalar(frames: Int, sources: Int) throws {
        try requireAVX2()
        Check.encodingMatchesScalar(.avx2, frames: frames, sources: sources)
    }

    @Test(arguments: Check.rotationFrames)
    func rotationMatchesScalar(frames: Int) throws {
        try requireAVX2()
        Check.rotationMatchesScalar(.avx2, frames: frames)
    }

    @Test(arguments: Check.fftSizes)
    func fftMatchesPortable(size: Int) throws {
        try requireAVX2()
        Check.fftMatchesPortable(.avx2, size: size)
    }

    @Test(arguments: Check.spectralAccumulationCases)
    func spectralAccumulationMatchesPortable(crossfading: Bool, pair: Bool) throws {
        try requireAVX2()
        Check.spectralAccumulationMatchesPortable(.avx2, crossfading: crossfading, pair: pair)
    }

    @Test func delayFoldingMatchesPortable() throws {
        try requireAVX2()
        Check.delayFoldingMatchesPortable(.avx2)
    }

    @Test func spectralBlendMatchesPortable() throws {
        try requireAVX2()
        Check.spectralBlendMatchesPortable(.avx2)
    }

    @Test(arguments: Check.measuredCopyFrames)
    func measuredCopyMatchesPortable(frames: Int) throws {
        try requireAVX2()
        Check.measuredCopyMatchesPortable(.avx2, frames: frames)
    }
}
