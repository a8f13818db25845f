#!/usr/bin/env bash
# Moves the ABI baseline (abi/libembd.abi) to the library a build dir holds, after an
# intended ABI change:
#   scripts/abi-baseline.sh <build-dir>      # a native x86-64 build with EMBD_ABI_CHECK on
# An incompatible change (a struct's layout, a removed function, a changed signature or enum
# value) is refused while the SONAME stays: bump EMBD_VERSION_MINOR in
# include/embd/common.h first (0.x; the major from 1.0 on), rebuild, run this again.
# Compatible changes (a function added) move the baseline within the same SONAME.
# Commit abi/libembd.abi together with the change and the version.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: scripts/abi-baseline.sh <build-dir>}
command -v abidw >/dev/null && command -v abidiff >/dev/null ||
  { echo "abi-baseline: abidw/abidiff not found (Debian: abigail-tools; scripts/install-deps.sh)" >&2; exit 1; }
grep -q '^EMBD_ABI_CHECK:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null ||
  { echo "abi-baseline: $build is not a build with EMBD_ABI_CHECK=ON (native x86-64, tests on, abigail found)" >&2; exit 1; }
cmake --build "$build" --target embd_shared
lib=$(cat "$build/abi-lib.txt") # the shared library's path, written by CMake
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
cmake -DMODE=write -DABIDW="$(command -v abidw)" -DABIDIFF="$(command -v abidiff)" \
  -DLIB="$lib" -DINCLUDE_DIR="$PWD/include" -DBASELINE="$PWD/abi/libembd.abi" -DOUT="$tmp" \
  -P tests/check_abi.cmake
