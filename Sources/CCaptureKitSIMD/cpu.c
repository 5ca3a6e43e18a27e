/* Run-time CPU feature checks for the kernels of ck_simd.h. */
#include "ck_simd.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

int cks_cpu_has_avx2(void)
{
    unsigned a, b, c, d, xcr0_lo, xcr0_hi;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    /* AVX, and the OS enabled XSAVE (else XGETBV faults and YMM state is not preserved). */
    if (!(c & bit_OSXSAVE) || !(c & bit_AVX)) return 0;
    __asm__ volatile("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
    (void)xcr0_hi;
    if ((xcr0_lo & 0x6) != 0x6) return 0; /* XMM and YMM state saved by the OS */
    if (__get_cpuid_max(0, 0) < 7) return 0;
    __cpuid_count(7, 0, a, b, c, d);
    return (b & bit_AVX2) != 0;
}
#else
int cks_cpu_has_avx2(void) { return 0; }
#endif
