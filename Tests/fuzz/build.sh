#!/usr/bin/env bash
# Builds the libFuzzer binary .build-fuzz/ckfuzz (every target in one binary; CK_FUZZ_TARGET picks
# one): CaptureKitCore and the CaptureKit C-ABI module compiled with swiftc -sanitize=fuzzer,address
# (coverage instrumentation + ASan), then the target bodies of Tests/CaptureKitCoreTests/Fuzz/ and
# the driver. Release optimisation (-O) keeps Swift's overflow and bounds traps, as shipped.
# The harness (target bodies + driver) is built at -Onone. Rebuilds only what changed (by file time stamps).
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${FUZZ_BUILD:-.build-fuzz}
SWIFTC=${SWIFTC:-swiftc}
mkdir -p "$OUT"
FLAGS=(-swift-version 6 -O -g -sanitize=fuzzer,address -parse-as-library -I Sources/CZlib -I Sources/CJSONC -I Sources/CZstd -I Sources/CTurboJPEG -I Sources/CCaptureKitSIMD/include -I include
       -Xcc -I/usr/include/json-c -I "$OUT")
core_src=$(find Sources/CaptureKitCore -name '*.swift' | sort)
abi_src=$(find Sources/CaptureKit -name '*.swift' | sort)
fuzz_src="Tests/fuzz/driver.swift Tests/fuzz/seeds.swift $(find Tests/CaptureKitCoreTests/Fuzz -name '*.swift' ! -name '*Tests.swift' | sort)"

newer() {  # newer TARGET SOURCES...: true when TARGET is missing or older than a source
    local t=$1; shift
    [ -e "$t" ] || return 0
    for s in "$@"; do [ "$s" -nt "$t" ] && return 0; done
    return 1
}

# The C kernels of CCaptureKitSIMD (AVX2 twins, chosen at run time), with the same instrumentation.
CLANG=${CLANG:-$(dirname "$(command -v "$SWIFTC")")/clang}
simd_src=$(find Sources/CCaptureKitSIMD -name '*.c' | sort)
if newer "$OUT/libCCaptureKitSIMD.a" $simd_src Sources/CCaptureKitSIMD/include/ck_simd.h; then
    echo "fuzz build: CCaptureKitSIMD"
    rm -f "$OUT"/cks_*.o "$OUT/libCCaptureKitSIMD.a"
    for c in $simd_src; do
        "$CLANG" -O2 -g -gdwarf-4 -fsanitize=fuzzer-no-link,address -I Sources/CCaptureKitSIMD/include -c "$c" -o "$OUT/cks_$(basename "$c" .c).o"
    done
    ar rcs "$OUT/libCCaptureKitSIMD.a" "$OUT"/cks_*.o
fi
if newer "$OUT/libCaptureKitCore.a" $core_src Sources/CCaptureKitSIMD/include/ck_simd.h; then
    echo "fuzz build: CaptureKitCore"
    "$SWIFTC" "${FLAGS[@]}" -enable-testing -module-name CaptureKitCore -emit-module -emit-module-path "$OUT/CaptureKitCore.swiftmodule" \
        -emit-library -static -o "$OUT/libCaptureKitCore.a" $core_src
fi
if newer "$OUT/libCaptureKit.a" $abi_src "$OUT/libCaptureKitCore.a" include/capturekit/*.h; then
    echo "fuzz build: CaptureKit (C ABI)"
    "$SWIFTC" "${FLAGS[@]}" -module-name CaptureKit -emit-module -emit-module-path "$OUT/CaptureKit.swiftmodule" \
        -emit-library -static -o "$OUT/libCaptureKit.a" $abi_src
fi
if newer "$OUT/ckfuzz" $fuzz_src "$OUT/libCaptureKit.a" "$OUT/libCaptureKitCore.a" "$OUT/libCCaptureKitSIMD.a"; then
    echo "fuzz build: ckfuzz"
    # The harness itself at -Onone: -O sends the optimizer into minutes on the target bodies, and
    # the code under test (above) is what must be optimised as shipped.
    "$SWIFTC" "${FLAGS[@]/-O/-Onone}" -module-name CKFuzz $fuzz_src -L "$OUT" -lCaptureKit -lCaptureKitCore -lCCaptureKitSIMD -lz -ljson-c -lzstd -lturbojpeg \
        -o "$OUT/ckfuzz"
fi
echo "fuzz build: $OUT/ckfuzz"
