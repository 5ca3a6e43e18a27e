// swift-tools-version: 6.3
// 6.3: the ABI layer implements the C header with `@c @implementation` (SE-0495, Swift 6.3).
import PackageDescription

// No unsafeFlags, so another SwiftPM package can depend on CaptureKitCore (or CaptureKit). The
// shipping link flags of libcapturekit.so (the version script exporting only ck_*, -z nodelete,
// the static Swift runtime and the SONAME) are given by `make lib` on the command line.

let package = Package(
    name: "capturekit",
    products: [
        .library(name: "capturekit", type: .dynamic, targets: ["CaptureKit"]),  // -> libcapturekit.so
    ],
    targets: [
        .systemLibrary(name: "CZlib", path: "Sources/CZlib",
                       pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CJSONC", path: "Sources/CJSONC",
                       pkgConfig: "json-c", providers: [.apt(["libjson-c-dev"])]),
        .systemLibrary(name: "CZstd", path: "Sources/CZstd",
                       pkgConfig: "libzstd", providers: [.apt(["libzstd-dev"])]),
        .systemLibrary(name: "CTurboJPEG", path: "Sources/CTurboJPEG",
                       pkgConfig: "libturbojpeg", providers: [.apt(["libturbojpeg0-dev"])]),
        // The hand-written public header, imported so that `@c @implementation` is checked against it.
        .systemLibrary(name: "CCaptureKitAPI", path: "include"),
        // Pure Swift, no Foundation: geometry, guidance, depth, datasets ... (C pointers only where a
        // caller's buffer is borrowed without a copy: codecs, conversions, images).
        // Kernels compiled for wider instruction sets than the baseline (AVX2 via a per-function
        // target attribute, so no compiler flags), chosen at run time by SIMDDispatch.
        .target(name: "CCaptureKitSIMD", path: "Sources/CCaptureKitSIMD"),
        .target(name: "CaptureKitCore", dependencies: ["CZlib", "CJSONC", "CZstd", "CTurboJPEG", "CCaptureKitSIMD"]),
        // The C ABI: validates, converts, calls the core, maps errors to status codes.
        .target(
            name: "CaptureKit",
            dependencies: ["CaptureKitCore", "CCaptureKitAPI"],
            exclude: ["capturekit.exports"]
        ),
        // Core-level benchmarks (`make bench`); not shipped.
        .executableTarget(name: "CaptureKitBench", dependencies: ["CaptureKitCore"], path: "benchmarks/swift"),
        .testTarget(name: "CaptureKitCoreTests", dependencies: ["CaptureKitCore", "CaptureKit", "CCaptureKitAPI"],
                    exclude: ["Fixtures"]),
    ]
)
