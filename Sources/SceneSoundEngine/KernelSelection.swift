import CCPUFeatures
#if canImport(Glibc)
import Glibc
#endif
import SceneSoundDSP
import SceneSoundDSPAVX2

extension RenderKernels {
    /// The fastest kernels this CPU runs, chosen once (cpuid): AVX2 + FMA, else portable.
    /// SCENESOUND_KERNELS=portable forces the portable ones (to compare, or to rule them out).
    public static let fastest: RenderKernels = {
        if let forced = getenv("SCENESOUND_KERNELS"), String(cString: forced) == "portable" { return .portable }
        return scenesound_cpu_has_avx2_fma() != 0 ? .avx2 : .portable
    }()
}
