#!/usr/bin/env bash
# ABI guard: the header's functions == the .so's exported symbols == Tests/capi/symbols.txt;
# the header compiles as strict C99 and as C++; the .so needs no Swift runtime; the SONAME follows
# the header's version.
set -euo pipefail
lib=$1 header=$2
here=$(cd "$(dirname "$0")/.." && pwd)
fail=0

declared=$("${CC:-cc}" -E -P "$header" | grep -oE '\bck_[A-Za-z0-9_]+[[:space:]]*\(' | tr -d ' (' | sort -u)
exported=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[A-Z]$/ {print $3}' | sed 's/@.*//' \
           | grep -vE '^(_edata|_end|__bss_start|_init|_fini|CAPTUREKIT_[0-9]+)$' | sort -u)
if ! diff <(echo "$declared") <(echo "$exported"); then
  echo "check_abi: header declarations (<) and exported symbols (>) differ" >&2; fail=1
fi
if ! diff <(echo "$exported") "$here/Tests/capi/symbols.txt"; then
  echo "check_abi: exported symbols (<) differ from the committed Tests/capi/symbols.txt (>)" >&2
  echo "           append new functions there on purpose; never remove one within a major version" >&2
  fail=1
fi
for h in "$header" "$(dirname "$header")"/capturekit/*.h; do  # each area header also stands alone
  "${CC:-cc}" -std=c99 -Wall -Wextra -Werror -pedantic -fsyntax-only -x c "$h" || fail=1
  "${CXX:-c++}" -std=c++11 -Wall -Wextra -Werror -pedantic -fsyntax-only -x c++ "$h" || fail=1
done
if ldd "$lib" | grep -E 'swift|Foundation|dispatch|BlocksRuntime|not found'; then
  echo "check_abi: $lib must not need the Swift runtime" >&2; fail=1
fi
# The SONAME follows the ABI: libcapturekit.so.MAJOR.MINOR while the major is 0 (a 0.x minor may
# break the ABI, so a program built against 0.1 must not load 0.2), libcapturekit.so.MAJOR after.
soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
version() { printf '#include "%s"\n%s\n' "$(readlink -f "$header")" "$1" | "${CC:-cc}" -E -P - | tail -n 1 | tr -d ' '; }
major=$(version CK_VERSION_MAJOR) minor=$(version CK_VERSION_MINOR)
if [ "$major" = 0 ]; then want="libcapturekit.so.0.$minor"; else want="libcapturekit.so.$major"; fi
[ "$soname" = "$want" ] || { echo "check_abi: SONAME is '$soname', want $want" >&2; fail=1; }
# One version number: every copy agrees with ck_base.h.
"${PYTHON:-python3}" "$here/scripts/check_version.py" --self-test || fail=1
# -z nodelete (set by `make lib`): dlclose must not unmap the code a thread-local destructor runs.
readelf -d "$lib" | grep -q 'FLAGS_1.*NODELETE' || { echo "check_abi: $lib is not linked with -z nodelete" >&2; fail=1; }
[ $fail -eq 0 ] && echo "check_abi: $(echo "$declared" | wc -l) functions; header, exports and symbols.txt match; C99 + C++ clean; no Swift runtime; SONAME $soname"
exit $fail
