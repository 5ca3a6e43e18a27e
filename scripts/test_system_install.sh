#!/usr/bin/env bash
# `make install PREFIX=/usr/local` the way root does it on a real machine, without touching the
# machine: in a private mount namespace, /usr/local and /etc get throwaway overlays (writes land in
# a temporary folder), so the install and its ldconfig change nothing outside. A consumer built
# with pkg-config alone (no rpath, no LD_LIBRARY_PATH) must then start and resolve the SONAME to
# /usr/local/lib: true only because `make install` ran ldconfig (/usr/local/lib is searched through
# the loader's cache, never by default). Needs root, unshare --mount and overlayfs; skipped (exit 0)
# with the reason otherwise.
# Usage: test_system_install.sh MAKE "CC FLAGS" SONAME
set -euo pipefail
make_cmd=$1 cc=$2 soname=$3
here=$(cd "$(dirname "$0")/.." && pwd)

skip() { echo "test_system_install: skipped: $1"; exit 0; }
[ "$(id -u)" = 0 ] || skip "needs root (ldconfig and the mount namespace)"
command -v unshare >/dev/null 2>&1 || skip "unshare is missing"
scratch=$(mktemp -d /tmp/ck-sysinstall.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch"/{local,etc}/{up,work}
probe="mount -t overlay overlay -o lowerdir=/etc,upperdir=$scratch/etc/up,workdir=$scratch/etc/work /etc"
unshare --mount --propagation private bash -c "$probe" 2>/dev/null || skip "cannot mount an overlay in a private namespace"
rm -rf "$scratch"/etc/{up,work} && mkdir -p "$scratch"/etc/{up,work}

unshare --mount --propagation private bash -euo pipefail -c '
  s=$1 make_cmd=$2 cc=$3 soname=$4 here=$5
  mount -t overlay overlay -o lowerdir=/usr/local,upperdir=$s/local/up,workdir=$s/local/work /usr/local
  mount -t overlay overlay -o lowerdir=/etc,upperdir=$s/etc/up,workdir=$s/etc/work /etc
  cd "$here"
  $make_cmd --no-print-directory install PREFIX=/usr/local | grep -q "^ldconfig" \
    || { echo "test_system_install: make install PREFIX=/usr/local did not run ldconfig" >&2; exit 1; }
  export PKG_CONFIG_PATH=/usr/local/lib/pkgconfig
  $cc examples/c/box_and_rays.c $(pkg-config --cflags --libs capturekit) -lm -o "$s/box_and_rays"
  if readelf -d "$s/box_and_rays" | grep -qE "R(UN)?PATH"; then echo "test_system_install: consumer has an rpath" >&2; exit 1; fi
  resolved=$(env -u LD_LIBRARY_PATH ldd "$s/box_and_rays" | sed -n "s/^[[:space:]]*$soname => \([^ ]*\).*/\1/p")
  [ "$resolved" = "/usr/local/lib/$soname" ] \
    || { echo "test_system_install: $soname resolves to \"$resolved\", want /usr/local/lib/$soname" >&2; exit 1; }
  env -u LD_LIBRARY_PATH "$s/box_and_rays" > /dev/null
' _ "$scratch" "$make_cmd" "$cc" "$soname" "$here"
echo "test_system_install: make install PREFIX=/usr/local ran ldconfig; a pkg-config-only consumer (no rpath) starts, $soname from /usr/local/lib (overlays: the machine is unchanged)"
