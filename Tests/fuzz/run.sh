#!/usr/bin/env bash
# Runs fuzz targets: `Tests/fuzz/run.sh SECONDS [TARGET...]` (default: every target, one after the
# other: never two fuzzers at once). Each run starts from Tests/fuzz/corpus/<target>/, works in
# .build-fuzz/work/<target>/ and, unless FUZZ_MERGE=0, then merges (-merge=1: the smallest set of
# inputs keeping all coverage) back into Tests/fuzz/corpus/<target>/. Crashes, timeouts and
# sanitizer reports land in .build-fuzz/artifacts/<target>/ (copy real ones into
# Tests/fuzz/crashers/<target>/ once fixed, so `swift test` replays them for ever).
# Stats per target (executions, time, exec/s) go to .build-fuzz/logs/summary.txt.
set -uo pipefail
cd "$(dirname "$0")/../.."
SECONDS_PER_TARGET=${1:?usage: run.sh SECONDS [TARGET...]}
shift
BIN=${FUZZ_BUILD:-.build-fuzz}/ckfuzz
[ -x "$BIN" ] || { echo "build it first: Tests/fuzz/build.sh (make fuzz-build)"; exit 2; }
if [ $# -gt 0 ]; then targets=("$@"); else targets=($(ls Tests/fuzz/corpus)); fi
B=${FUZZ_BUILD:-.build-fuzz}
mkdir -p "$B/logs"
status=0
for t in "${targets[@]}"; do
    mkdir -p "$B/work/$t" "$B/artifacts/$t" "Tests/fuzz/corpus/$t"
    log="$B/logs/$t.log"
    CK_FUZZ_TARGET=$t SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=1 "$BIN" -max_total_time="$SECONDS_PER_TARGET" -timeout=10 -rss_limit_mb=3072 \
        -max_len=65536 ${FUZZ_RUNS:+-runs=$FUZZ_RUNS} -print_final_stats=1 -artifact_prefix="$B/artifacts/$t/" "$B/work/$t" "Tests/fuzz/corpus/$t" > "$log" 2>&1
    rc=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
    secs=$(grep -oE 'Done [0-9]+ runs in [0-9]+ second' "$log" | grep -oE '[0-9]+ second' | grep -oE '[0-9]+')
    line="$t: rc=$rc runs=${runs:-?} seconds=${secs:-?} exec/s=${eps:-?} ($(date -u +%FT%TZ))"
    echo "$line" | tee -a "$B/logs/summary.txt"
    if [ $rc -ne 0 ]; then status=1; grep -E "ERROR|INVARIANT|SUMMARY|Test unit written" "$log" | head -5; fi
    if [ "${FUZZ_MERGE:-1}" = 1 ] && [ $rc -eq 0 ]; then
        rm -rf "$B/merged/$t"; mkdir -p "$B/merged/$t"
        CK_FUZZ_TARGET=$t SWIFT_BACKTRACE=enable=no "$BIN" -merge=1 -timeout=10 -max_len=65536 "$B/merged/$t" "Tests/fuzz/corpus/$t" "$B/work/$t" > "$B/logs/$t.merge.log" 2>&1 \
            && rm -rf "Tests/fuzz/corpus/$t" && mv "$B/merged/$t" "Tests/fuzz/corpus/$t"
    fi
done
exit $status
