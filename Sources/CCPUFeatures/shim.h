// The CPU settings the render path needs from C: which instruction sets this CPU (and the
// kernel's saved state) supports, for choosing render kernels at run time, and denormal
// flushing. Swift has neither cpuid nor the MXCSR; these are header-only.
#pragma once
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

/// 1 when AVX2 and FMA can run: the CPU has them and the OS saves the YMM registers.
static inline int scenesound_cpu_has_avx2_fma(void) {
#if defined(__x86_64__) || defined(__i386__)
    unsigned int a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    const unsigned int fma = 1u << 12, osxsave = 1u << 27, avx = 1u << 28;
    if ((c & (fma | osxsave | avx)) != (fma | osxsave | avx)) return 0;
    unsigned int xcr0_low, xcr0_high;
    __asm__ volatile("xgetbv" : "=a"(xcr0_low), "=d"(xcr0_high) : "c"(0));
    if ((xcr0_low & 6) != 6) return 0;   // XMM and YMM state enabled
    if (__get_cpuid_max(0, 0) < 7) return 0;
    __cpuid_count(7, 0, a, b, c, d);
    return (b >> 5) & 1;                 // AVX2
#else
    return 0;
#endif
}

/// 1 when AVX-512 F, CD, BW, DQ and VL can run (Skylake-server's set, x86-64-v4): the CPU has
/// them, with AVX2 and FMA, and the OS saves the mask and ZMM registers.
static inline int scenesound_cpu_has_avx512(void) {
#if defined(__x86_64__) || defined(__i386__)
    if (!scenesound_cpu_has_avx2_fma()) return 0;
    unsigned int a, b, c, d;
    unsigned int xcr0_low, xcr0_high;
    __asm__ volatile("xgetbv" : "=a"(xcr0_low), "=d"(xcr0_high) : "c"(0));
    if ((xcr0_low & 0xE6) != 0xE6) return 0;   // XMM, YMM, opmask, ZMM_Hi256, Hi16_ZMM
    __cpuid_count(7, 0, a, b, c, d);
    const unsigned int f = 1u << 16, dq = 1u << 17, cd = 1u << 28, bw = 1u << 30, vl = 1u << 31;
    return (b & (f | dq | cd | bw | vl)) == (f | dq | cd | bw | vl);
#else
    return 0;
#endif
}

/// Sets this thread's floating-point unit to flush denormal results and operands to zero (or
/// not): a decaying filter tail otherwise slows every operation on it by ~100× (x86 microcode
/// assists) just as a stream goes quiet. Per thread (a new thread inherits its creator's);
/// cheap enough to call every block.
static inline void scenesound_set_denormal_flushing(int enabled) {
#if defined(__x86_64__) || defined(__i386__)
    const unsigned int bits = 0x8040;   // FTZ (bit 15), DAZ (bit 6)
    unsigned int csr = __builtin_ia32_stmxcsr();
    __builtin_ia32_ldmxcsr(enabled ? (csr | bits) : (csr & ~bits));
#elif defined(__aarch64__)
    unsigned long fpcr;
    __asm__ volatile("mrs %0, fpcr" : "=r"(fpcr));
    fpcr = enabled ? (fpcr | (1ul << 24)) : (fpcr & ~(1ul << 24));   // FZ
    __asm__ volatile("msr fpcr, %0" : : "r"(fpcr));
#else
    (void)enabled;
#endif
}

/// 1 when this thread flushes denormals (see scenesound_set_denormal_flushing).
static inline int scenesound_denormal_flushing(void) {
#if defined(__x86_64__) || defined(__i386__)
    return (__builtin_ia32_stmxcsr() & 0x8040u) == 0x8040u;
#elif defined(__aarch64__)
    unsigned long fpcr;
    __asm__ volatile("mrs %0, fpcr" : "=r"(fpcr));
    return (int)((fpcr >> 24) & 1);
#else
    return 0;
#endif
}

/// Asks the caches for the lines of [address, address + bytes) ahead of use: a hint (no
/// fault, no effect on any result), for the render loop's walk over a thousand sources whose
/// objects and buffers are scattered over memory that the block's own traffic evicts.
static inline void scenesound_prefetch(const void *address, long bytes) {
    const char *p = (const char *)address;
    for (long offset = 0; offset < bytes; offset += 64) __builtin_prefetch(p + offset, 0, 3);
}
