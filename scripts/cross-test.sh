#!/usr/bin/env bash
# Usage: scripts/cross-test.sh <aarch64|s390x|armhf> [builddir]
# Cross-builds embd (Release, tests on) with cmake/toolchain-<triple>.cmake and runs the
# suite under qemu-user through ctest (CMAKE_CROSSCOMPILING_EMULATOR).
#   aarch64  little-endian, the NEON tier: CRC32+PMULL, CRC32 only and scalar are each
#            run (qemu's CPUs all report CRC32 and PMULL, so the lower ones are reached
#            by masking with EMBD_ISA: the suite's per-tier ctest entries).
#   s390x    big-endian, scalar only; built with UBSan (-static-libubsan: the runtime
#            then needs nothing from the target's libs). ASan does not run under
#            qemu-s390x.
#   armhf    arm-linux-gnueabihf, 32-bit little-endian: the suite with a 32-bit size_t
#            (the frame/batch size arithmetic must not overflow). Scalar only (the NEON
#            and CRC kernels are aarch64-only); UBSan as for s390x. Runs under qemu-arm.
# Expects the cross compilers and qemu-user (scripts/install-deps.sh installs them).
# Target cmocka and zlib come from a private sysroot (scripts/cross-sysroot.sh), kept in
# $EMBD_CROSS_SYSROOT or <builddir>/../sysroot-<arch>, reused across runs.
# Environment: EMBD_JOBS (default: nproc), EMBD_TEST_SCALE (forwarded to the suite's
# cache variable; default: the suite's own emulator default), EMBD_CROSS_SANITIZE
# (overrides the sanitizer list; "none" for none).
set -euo pipefail

arch=${1:-}
case "$arch" in
  aarch64) san_default="" triple=aarch64-linux-gnu qemu=qemu-aarch64 ;;
  s390x) san_default="undefined" triple=s390x-linux-gnu qemu=qemu-s390x ;;
  armhf) san_default="undefined" triple=arm-linux-gnueabihf qemu=qemu-arm ;;
  *)
    echo "usage: $0 <aarch64|s390x|armhf> [builddir]" >&2
    exit 2
    ;;
esac
root=$(cd "$(dirname "$0")/.." && pwd)
build=${2:-${EMBD_BUILD_ROOT:-$root/build}/$arch}
mkdir -p "$build"
build=$(cd "$build" && pwd)
sysroot=${EMBD_CROSS_SYSROOT:-$(dirname "$build")/sysroot-$arch}
jobs=${EMBD_JOBS:-$(nproc 2>/dev/null || echo 2)}

for tool in "$triple-gcc" "$qemu" cmake ctest; do
  command -v "$tool" >/dev/null ||
    { echo "cross-test: $tool not found (scripts/install-deps.sh installs it)" >&2; exit 1; }
done
[[ -d /usr/$triple/lib ]] || { echo "cross-test: /usr/$triple (target libc) missing" >&2; exit 1; }

bash "$root/scripts/cross-sysroot.sh" "$arch" "$sysroot"

san=${EMBD_CROSS_SANITIZE:-$san_default}
[[ $san == none ]] && san=""
args=(
  -S "$root" -B "$build"
  -DCMAKE_TOOLCHAIN_FILE="$root/cmake/toolchain-$triple.cmake"
  -DEMBD_SYSROOT="$sysroot"
  -DCMAKE_BUILD_TYPE=Release
  -DEMBD_BUILD_TESTS=ON
  -DEMBD_SANITIZE="$san"
  -DEMBD_TEST_SCALE="${EMBD_TEST_SCALE:-}"
)
if [[ -n $san ]]; then
  # The sanitizer runtimes are linked statically: qemu -L /usr/<triple> has the target
  # libc but not libubsan.so. UBSan has no ASan-style shadow memory and runs under qemu.
  args+=(-DCMAKE_EXE_LINKER_FLAGS=-static-libubsan -DCMAKE_SHARED_LINKER_FLAGS=-static-libubsan)
else
  args+=(-DCMAKE_EXE_LINKER_FLAGS= -DCMAKE_SHARED_LINKER_FLAGS=)
fi
command -v ninja >/dev/null && [[ ! -f $build/Makefile ]] && args+=(-G Ninja)

log=$build/cross-test
echo "cross-test: $arch: configure${san:+ (sanitize=$san)}"
cmake "${args[@]}" >"$log.configure.log" 2>&1 || { cat "$log.configure.log"; exit 1; }
grep -E "kernels built" "$log.configure.log" || true
echo "cross-test: $arch: build"
cmake --build "$build" -j "$jobs" >"$log.build.log" 2>&1 || { tail -60 "$log.build.log"; exit 1; }
grep -E "warning:" "$log.build.log" || true

echo "cross-test: $arch: ctest (through $qemu)"
ctest --test-dir "$build" --output-on-failure -j "$jobs"

if [[ $arch == aarch64 ]]; then
  # Every qemu aarch64 CPU has CRC32 and PMULL: without the EMBD_ISA-masked entries only
  # the PMULL kernel would have run. They must exist (and ran, and passed, above).
  listed=$(ctest --test-dir "$build" -N)
  missing=()
  for t in crc32.isa.neon crc32.isa.neon-nopmull crc32.isa.scalar; do
    grep -qE "Test +#[0-9]+: $t\$" <<<"$listed" || missing+=("$t")
  done
  if ((${#missing[@]})); then
    # Older or placeholder suites: run what exists once per tier with EMBD_ISA from the
    # environment (ctest passes it on unless a test sets its own).
    echo "cross-test: no per-tier entries (${missing[*]}); rerunning the suite per tier"
    for spec in "neon,-pmull" "scalar"; do
      echo "cross-test: EMBD_ISA=$spec"
      EMBD_ISA=$spec ctest --test-dir "$build" --output-on-failure -j "$jobs"
    done
  fi
fi
echo "cross-test: $arch: ok"
