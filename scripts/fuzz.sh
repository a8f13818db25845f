#!/usr/bin/env bash
# Builds the libFuzzer targets with clang, ASan and UBSan, and runs each fuzz_* target for
# N seconds (default 30) on a temporary copy of its seed corpus fuzz/corpus/<name>/.
# Fails if any target crashes, leaks, trips a sanitizer or finds a mismatch.
# Targets: every fuzz/fuzz_<name>.c (crc32, frame, stream, batch, base64, openai, the codec ones, tokmap), as listed in
# EMBD_FUZZ_TARGETS in fuzz/CMakeLists.txt.
#
#   scripts/fuzz.sh [seconds]
#
# Environment:
#   EMBD_FUZZ_BUILD_DIR  build directory (default: <repo>/build/fuzz)
#   CC                   clang to use (default: clang; needs libclang-rt-<ver>-dev)
#   CXX                  clang++ for src/json/openai.cc (default: CC with clang -> clang++)
#   EMBD_FUZZ_JOBS       parallel build jobs (default: 2)
#   EMBD_FUZZ_PARALLEL   targets fuzzed at once (default: nproc), each for its full time
#   EMBD_FUZZ_ARGS       extra libFuzzer arguments, e.g. "-max_len=65536"
#   EMBD_FUZZ_KEEP=1     keep the temporary corpora and crash artifacts directory
# Crash inputs are copied to <build dir>/artifacts/ before the script fails; reproduce
# one with <build dir>/fuzz/fuzz_<name> <file>, or without libFuzzer with
# fuzz_replay_<name> <file>.
set -euo pipefail

secs=${1:-30}
if ! [[ $secs =~ ^[0-9]+$ ]] || ((secs < 1)); then
  echo "usage: $0 [seconds >= 1]" >&2
  exit 2
fi

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${EMBD_FUZZ_BUILD_DIR:-$root/build/fuzz}
cc=${CC:-clang}
cxx=${CXX:-${cc/clang/clang++}}
jobs=${EMBD_FUZZ_JOBS:-2}

if ! "$cc" --version 2>/dev/null | grep -qi clang; then
  echo "fuzz.sh: CC=$cc is not clang; libFuzzer needs clang (apt-get install clang libclang-rt-14-dev)" >&2
  exit 2
fi

# A build directory configured earlier with another compiler keeps it: refuse that.
if [[ -f $build/CMakeCache.txt ]]; then
  cached_cc=$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")
  if ! "$cached_cc" --version 2>/dev/null | grep -qi clang; then
    echo "fuzz.sh: $build was configured with $cached_cc, not clang; remove it or set EMBD_FUZZ_BUILD_DIR" >&2
    exit 1
  fi
fi

gen=()
command -v ninja >/dev/null 2>&1 && [[ ! -f $build/CMakeCache.txt ]] && gen=(-G Ninja)

# RelWithDebInfo: optimised like the real thing (kernels behave as shipped) with symbols
# for the sanitizer reports. Tests and benchmarks are not needed here.
mkdir -p "$build"
CC=$cc CXX=$cxx cmake -S "$root" -B "$build" "${gen[@]}" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DEMBD_BUILD_FUZZ=ON -DEMBD_BUILD_TESTS=OFF -DEMBD_BUILD_BENCH=OFF -DEMBD_INSTALL=OFF \
  -DEMBD_SANITIZE=address,undefined >"$build/configure.log" 2>&1 || {
  cat "$build/configure.log" >&2
  echo "fuzz.sh: configure failed" >&2
  exit 1
}
cmake --build "$build" -j "$jobs"

shopt -s nullglob
targets=()
for src in "$root"/fuzz/fuzz_*.c; do
  name=$(basename "$src" .c)
  [[ $name == fuzz_replay_main ]] && continue
  targets+=("${name#fuzz_}")
done
if ((${#targets[@]} == 0)); then
  echo "fuzz.sh: no fuzz targets in $root/fuzz" >&2
  exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/embd-fuzz.XXXXXX")
cleanup() {
  if [[ ${EMBD_FUZZ_KEEP:-0} == 1 ]]; then echo "fuzz.sh: kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT

# ASan: report leaks too; abort (not exit) so libFuzzer writes the crash input. UBSan is
# built with -fno-sanitize-recover=all, so any report is fatal.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:abort_on_error=1}

# One target: its run, then its lines of the report in $tmp/report_$t and, when it failed,
# its name in $tmp/failed_$t (the targets run in parallel, so nothing is shared but files).
fuzz_one() {
  local t=$1 exe=$build/fuzz/fuzz_$1 out=$tmp/report_$1
  if [[ ! -x $exe ]]; then
    echo "fuzz.sh: $exe was not built" >"$out"
    touch "$tmp/failed_$t"
    return
  fi
  local corpus=$tmp/corpus_$t
  mkdir -p "$corpus" "$tmp/artifacts_$t"
  [[ -d $root/fuzz/corpus/$t ]] && cp -R "$root/fuzz/corpus/$t/." "$corpus/"
  echo "== fuzz_$t: ${secs}s, corpus $(find "$corpus" -type f | wc -l) files" >"$out"
  # shellcheck disable=SC2086  # EMBD_FUZZ_ARGS is a list of flags
  if "$exe" -max_total_time="$secs" -print_final_stats=1 \
      -artifact_prefix="$tmp/artifacts_$t/" ${EMBD_FUZZ_ARGS:-} "$corpus" \
      >"$tmp/log_$t" 2>&1; then
    grep -E '^(Done|stat::number_of_executed_units|stat::peak_rss_mb)' "$tmp/log_$t" >>"$out" || true
    echo "== fuzz_$t: clean" >>"$out"
  else
    local rc=$?
    tail -n 60 "$tmp/log_$t" >>"$out"
    mkdir -p "$build/artifacts"
    cp "$tmp/artifacts_$t/"* "$build/artifacts/" 2>/dev/null || true
    cp "$tmp/log_$t" "$build/artifacts/log_$t"
    echo "== fuzz_$t: FAILED (exit $rc); inputs and log in $build/artifacts/" >>"$out"
    touch "$tmp/failed_$t"
  fi
}

# EMBD_FUZZ_PARALLEL targets at a time (default: one per core): each still gets its full
# ${secs}s, and CI's two cores finish the set in half the time.
par=${EMBD_FUZZ_PARALLEL:-$(nproc 2>/dev/null || echo 1)}
for t in "${targets[@]}"; do
  while (($(jobs -rp | wc -l) >= par)); do wait -n || true; done
  fuzz_one "$t" &
done
wait
failed=()
for t in "${targets[@]}"; do
  cat "$tmp/report_$t"
  [[ -e $tmp/failed_$t ]] && failed+=("$t")
done

if ((${#failed[@]})); then
  echo "fuzz.sh: failed: ${failed[*]}" >&2
  exit 1
fi
echo "fuzz.sh: all ${#targets[@]} target(s) ran ${secs}s clean"
