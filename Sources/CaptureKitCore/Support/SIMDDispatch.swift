import CCaptureKitSIMD
import Glibc

/// The instruction set a batched kernel runs with.
public enum SIMDKernel: Sendable, Equatable, CustomStringConvertible {
    /// The baseline x86-64 build (SSE2): the Swift kernels.
    case baseline
    /// AVX2 (eight float lanes): the C twins in CCaptureKitSIMD, bit-identical to the baseline.
    case avx2

    public var description: String { self == .avx2 ? "avx2" : "baseline" }
}

/// Run-time choice of kernels (cpuid), made once per process.
///
/// How to give another kernel an AVX2 twin (the surface-coverage fusion, the cell mapping ...):
/// 1. write the twin in C in Sources/CCaptureKitSIMD (declared in include/ck_simd.h, marked
///    `CKS_AVX2`, i.e. `__attribute__((target("avx2")))`: only that function uses AVX2, the rest of the
///    package stays baseline and no compiler flag is needed) with the same operations in the same
///    order as the Swift kernel, so the results are bit-identical;
/// 2. give the Swift entry point a `kernel: SIMDKernel = SIMDDispatch.kernel` parameter and call the
///    twin when `SIMDDispatch.resolve(kernel) == .avx2`, the Swift code otherwise;
/// 3. compare both kernels bit for bit in a test (`SIMDDispatch.avx2Supported` says whether the
///    twin can run here) and measure both in `make bench` (CaptureKitBench calls each explicitly).
public enum SIMDDispatch {
    /// The CPU has AVX2 and the OS saves its registers (CPUID and XGETBV).
    public static let avx2Supported: Bool = cks_cpu_has_avx2() != 0

    /// What the library uses: `.avx2` where supported, unless the environment variable
    /// `CAPTUREKIT_NO_AVX2` is set to anything but "" or "0" when the first kernel runs (read once).
    public static let kernel: SIMDKernel = avx2Supported && !disabledByEnvironment() ? .avx2 : .baseline

    /// The kernel that will actually run for a request: `.avx2` only where the CPU has it, so a
    /// caller (or a test) asking for AVX2 on a CPU without it gets the baseline, never SIGILL.
    @inline(__always)
    public static func resolve(_ requested: SIMDKernel) -> SIMDKernel {
        requested == .avx2 && avx2Supported ? .avx2 : .baseline
    }

    private static func disabledByEnvironment() -> Bool {
        guard let v = getenv("CAPTUREKIT_NO_AVX2") else { return false }
        return v.pointee != 0 && !(v.pointee == 0x30 && v[1] == 0)  // not "" and not "0"
    }
}
