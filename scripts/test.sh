#!/usr/bin/env bash
# The whole embd test suite, as CI runs it (.ci/run calls this):
#   1. Release build: every unit test, every implementation the CPU runs, the suite once
#      per forced tier, the dispatcher under qemu-x86_64 -cpu qemu64/Westmere/Haswell,
#      the fuzz corpora as tests, the exported-symbol check; then the per-tier suites
#      again with every test under qemu-x86_64 -cpu Haswell and -cpu Westmere (tiers the
#      CPU lacks skip);
#      (the release tree also runs embd serve's tests against a fake upstream, label serve,
#      and the batch-file CLI tests with their memory bound, cli.batch_*);
#   1b. the Python package (python/): built offline into a venv as the README says, its
#      pytest suite (numpy, hypothesis, a Dask LocalCluster, the seed codec under node, the
#      ASGI middleware under uvicorn), the Arrow stores and the Spark and Ray engines from
#      python/requirements-engines.lock, and a build over the installed library
#      (scripts/test-python.sh);
#   1c. the JavaScript package (js/): the WebAssembly build, node --test on Node 20 and 24,
#      npm pack + a TypeScript consumer, headless Chromium (scripts/test-js.sh);
#   2. the same suite built with ASan + UBSan, without the optional parts (no C++ or
#      libdeflate: their functions report EMBD_ERR_*UNAVAILABLE), and the tests
#      that start threads with TSan;
#   3. the suite cross-built for aarch64, big-endian s390x and 32-bit armhf (32-bit
#      size_t), run under qemu-user;
#   4. every libFuzzer target for a short time (EMBD_FUZZ_SECONDS, default 15 each: 21 targets,
#      one per core at a time, about 4 minutes with the build; 15 s keeps CI under 40 min).
# Installs missing Debian packages first. Build trees go to $EMBD_BUILD_ROOT (default
# ./build). Ends with one line "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
out=${EMBD_BUILD_ROOT:-$root/build}
fuzz_seconds=${EMBD_FUZZ_SECONDS:-15}
jobs=$(nproc 2>/dev/null || echo 2)

bash scripts/install-deps.sh || { echo "install-deps failed"; exit 1; }

passed=0
failed=0
failures=()
step() {
  local name=$1
  shift
  local t0=$SECONDS
  echo "=== $name"
  if "$@"; then
    passed=$((passed + 1))
    echo "=== $name: ok ($((SECONDS - t0)) s)"
  else
    failed=$((failed + 1))
    failures+=("$name")
    echo "=== $name: FAILED ($((SECONDS - t0)) s)"
  fi
}

build_and_test() {
  local dir=$1
  shift
  cmake -S "$root" -B "$dir" -G Ninja -DEMBD_BUILD_TESTS=ON "$@" >"$dir.configure.log" 2>&1 ||
    { cat "$dir.configure.log"; return 1; }
  cmake --build "$dir" -j "$jobs" >"$dir.build.log" 2>&1 || { tail -50 "$dir.build.log"; return 1; }
  ctest --test-dir "$dir" --output-on-failure -j "$jobs" ${EMBD_CTEST_ARGS:-}
}

mkdir -p "$out"
step "release (+ benchmarks built, not run)" build_and_test "$out/release" -DCMAKE_BUILD_TYPE=Release -DEMBD_BUILD_BENCH=ON
step "install: find_package + pkg-config consumers" bash scripts/check-install.sh "$out/release"
step "python package (pip install ./python offline, pytest, EMBD_PYTHON_LIBEMBD=system)" \
  bash scripts/test-python.sh "$out/release"
# The JavaScript package (js/): the WebAssembly build, node --test on Node 20 and 24, npm
# pack + a TypeScript consumer, headless Chromium, golden files against the release tree.
step "javascript package (wasm build, node 20 + 24, tsc consumer, chromium)" \
  bash scripts/test-js.sh "$out/release"
step "asan+ubsan" build_and_test "$out/asan" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DEMBD_SANITIZE=address,undefined
# Without the optional parts the kernels are the same code as in the release tree, whose
# step already runs them under qemu-x86_64 CPU models: those reruns are left out here.
EMBD_CTEST_ARGS="-LE qemu-x86" step "minimal (EMBD_WITH_OPENAI/TOKMAP/CODEC_MODES/LIBDEFLATE=OFF: no C++, no libdeflate)" \
  build_and_test "$out/minimal" -DCMAKE_BUILD_TYPE=Release -DEMBD_WITH_OPENAI=OFF \
  -DEMBD_WITH_TOKMAP=OFF -DEMBD_WITH_CODEC_MODES=OFF -DEMBD_WITH_LIBDEFLATE=OFF
# TSan sees races only between threads, and the library starts none: the tests that start
# threads (label "threads": the dispatcher under concurrent embd_isa_set, the per-thread
# libdeflate decompressor, the parallel number walk) are the ones it can judge. The
# single-threaded unit tests took 200 s here and could not fail under it.
EMBD_CTEST_ARGS="-L threads" step "tsan (dispatch under concurrent embd_isa_set)" build_and_test \
  "$out/tsan" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEMBD_SANITIZE=thread -DEMBD_TEST_SCALE=0.25
# Any x86-64 CPU: the per-tier suites on CPUs without AVX-512 (Haswell: AVX2, no
# VPCLMULQDQ) and without AVX (Westmere: SSE4.2 + PCLMULQDQ). Every test of a tier the CPU
# lacks must skip (exit 77), every other pass. (The plain "unit" runs are the "auto" tier,
# which the tier list already holds under another name: left out to keep CI short.)
# One build tree for both models: its emulator (scripts/qemu-x86-cpu.sh) reads the model
# from EMBD_QEMU_CPU when ctest runs.
for cpu in Haswell Westmere; do
  EMBD_QEMU_CPU=$cpu EMBD_CTEST_ARGS="-L tier|isa-env" step "qemu-x86_64 -cpu $cpu (per-tier suites)" \
    build_and_test "$out/qemu-x86" -DCMAKE_BUILD_TYPE=Release \
    "-DCMAKE_CROSSCOMPILING_EMULATOR=$root/scripts/qemu-x86-cpu.sh"
done
step "aarch64 (qemu)" bash scripts/cross-test.sh aarch64 "$out/aarch64"
step "s390x big-endian (qemu)" bash scripts/cross-test.sh s390x "$out/s390x"
step "armhf 32-bit (qemu)" bash scripts/cross-test.sh armhf "$out/armhf"
step "fuzz (${fuzz_seconds}s per target)" bash scripts/fuzz.sh "$fuzz_seconds" "$out/fuzz"

echo
((failed)) && printf 'failed: %s\n' "${failures[@]}"
echo "suite: $passed passed, $failed failed"
((failed == 0))
