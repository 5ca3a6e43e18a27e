// swift-tools-version: 6.0
import PackageDescription

// unsafeFlags reach the linker from the build directory, so give the version script an absolute path.
let exportsMap = "\(Context.packageDirectory)/Sources/CaptureKit/capturekit.exports"

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
        // The hand-written public header, imported so that `@c @implementation` is checked against it.
        .systemLibrary(name: "CCaptureKitAPI", path: "include"),
        // Pure Swift: geometry, box, raycast, ... (no C pointers in signatures, no Foundation).
        .target(name: "CaptureKitCore", dependencies: ["CZlib", "CJSONC", "CZstd"]),
        // The C ABI: validates, converts, calls the core, maps errors to status codes.
        .target(
            name: "CaptureKit",
            dependencies: ["CaptureKitCore", "CCaptureKitAPI"],
            exclude: ["capturekit.exports"],
            linkerSettings: [
                .unsafeFlags([
                    "-Xlinker", "--version-script=\(exportsMap)",  // export ck_* only
                    "-Xlinker", "-z", "-Xlinker", "nodelete",       // dlclose must not unmap (TLS destructor)
                ]),
            ]
        ),
        // Core-level benchmarks (`make bench`); not shipped.
        .executableTarget(name: "CaptureKitBench", dependencies: ["CaptureKitCore"], path: "benchmarks/swift"),
        .testTarget(name: "CaptureKitCoreTests", dependencies: ["CaptureKitCore", "CaptureKit", "CCaptureKitAPI"],
                    exclude: ["Fixtures"]),
    ]
)
