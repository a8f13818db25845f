#!/usr/bin/env bash
# The main job: installs what is missing, builds embd with its benchmarks (Release), runs
# every kernel implementation beside the anchors (zlib, ISA-L, libdeflate, memcpy) in one
# google-benchmark run pinned to one core, and prints the ratios.
#   scripts/bench.sh [extra google-benchmark flags, e.g. --benchmark_filter=crc32/.*/65536]
# Environment: EMBD_BENCH_CPU (core to pin to, default the last one), EMBD_BENCH_REPS
# (repetitions, default 3; the ratios use the medians), EMBD_BUILD_ROOT (default ./build),
# EMBD_ISA (force a tier, see README). Raw JSON goes to $EMBD_BUILD_ROOT/bench/crc32.json.
# Numbers only mean something on an otherwise idle machine.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${EMBD_BUILD_ROOT:-$(pwd)/build}
mkdir -p "$out"
bash scripts/install-deps.sh
cmake -S . -B "$out/bench" -G Ninja -DCMAKE_BUILD_TYPE=Release -DEMBD_BUILD_BENCH=ON \
  -DEMBD_BUILD_TESTS=OFF >"$out/bench.configure.log" 2>&1 || { cat "$out/bench.configure.log"; exit 1; }
cmake --build "$out/bench" >/dev/null
cpu=${EMBD_BENCH_CPU:-$(($(nproc) - 1))}
json=$out/bench/crc32.json
taskset -c "$cpu" "$out/bench/bench/bench_crc32" --benchmark_min_time=0.2 \
  --benchmark_repetitions="${EMBD_BENCH_REPS:-3}" --benchmark_report_aggregates_only=true \
  --benchmark_format=console --benchmark_out="$json" --benchmark_out_format=json "$@"
echo
python3 scripts/bench_ratios.py "$json"
