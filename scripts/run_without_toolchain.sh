#!/usr/bin/env bash
# Runs a command with the Swift toolchain hidden (an empty directory mounted over it in a private
# mount namespace), proving the shipped .so needs no Swift runtime. Needs root and unshare; where
# they are missing it says so and runs nothing (exit 0), since `ldd` in check_abi.sh still guards.
set -euo pipefail
toolchain=$(dirname "$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")")
if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null 2>&1 || ! unshare --mount true 2>/dev/null; then
  echo "run_without_toolchain: needs root and unshare --mount; skipped (ldd check still applies)"
  exit 0
fi
empty=$(mktemp -d)
trap 'rmdir "$empty"' EXIT
unshare --mount --propagation private bash -c '
  mount --bind "$1" "$2" && shift 2 && exec env -i PATH=/usr/bin:/bin HOME=/tmp "$@"' _ "$empty" "$toolchain" "$@"
