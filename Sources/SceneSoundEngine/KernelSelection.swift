import CCPUFeatures
#if canImport(Glibc)
import Glibc
#endif
import SceneSoundDSP
import SceneSoundDSPAVX2
import SceneSoundDSPAVX512

extension RenderKernels {
    /// The fastest kernels this CPU runs, chosen once (cpuid): AVX-512, else AVX2 + FMA, else
    /// portable. SCENESOUND_KERNELS=portable or =avx2 caps the choice there (to compare, or to
    /// rule the wider ones out).
    public static let fastest: RenderKernels = {
        let cap = getenv("SCENESOUND_KERNELS").map { String(cString: $0) }
        if cap == "portable" { return .portable }
        if cap != "avx2" && scenesound_cpu_has_avx512() != 0 { return .avx512 }
        return scenesound_cpu_has_avx2_fma() != 0 ? .avx2 : .portable
    }()
}
