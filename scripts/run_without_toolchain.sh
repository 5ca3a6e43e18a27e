#!/usr/bin/env bash
# Runs a command with the Swift toolchain hidden (an empty directory mounted over it in a private
# mount namespace), proving the shipped .so needs no Swift runtime. Needs root and unshare; where
# they are missing it says so and runs nothing (exit 0), since `ldd` in check_abi.sh still guards.
#
# CK_HIDE_LIBS="libzstd.so.1 libturbojpeg.so.0 ..." also hides those system libraries: each
# folder holding one gets a throwaway overlay in which the library's files (the SONAME link and
# the file it points to) are deleted, so the loader finds them neither through its cache nor in
# the default folders, as on a machine without the package. Nothing outside the namespace changes.
set -euo pipefail
toolchain=$(dirname "$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")")
if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null 2>&1 || ! unshare --mount true 2>/dev/null; then
  echo "run_without_toolchain: needs root and unshare --mount; skipped (ldd check still applies)"
  exit 0
fi
empty=$(mktemp -d)
overlays=$(mktemp -d)
trap 'rmdir "$empty"; rm -rf "$overlays"' EXIT
hide=()
for so in ${CK_HIDE_LIBS:-}; do
  for path in $(ldconfig -p | sed -n "s|^[[:space:]]*$so (.*) => ||p" | sort -u); do
    hide+=("$(readlink -f "$(dirname "$path")")/$so" "$(readlink -f "$path")")
  done
done
unshare --mount --propagation private bash -c '
  set -euo pipefail
  empty=$1 toolchain=$2 overlays=$3 n=$4; shift 4
  mount --bind "$empty" "$toolchain"
  files=("${@:1:$n}"); shift "$n"
  for dir in $(for f in "${files[@]}"; do dirname "$f"; done | sort -u); do
    o=$overlays/$(echo "$dir" | tr / _) && mkdir -p "$o/up" "$o/work"
    mount -t overlay overlay -o "lowerdir=$dir,upperdir=$o/up,workdir=$o/work" "$dir"
  done
  for f in "${files[@]}"; do rm -f "$f"; done
  exec env -i PATH=/usr/bin:/bin HOME=/tmp "$@"' _ "$empty" "$toolchain" "$overlays" "${#hide[@]}" "${hide[@]}" "$@"
