#!/usr/bin/env bash
# The main job: installs what is missing (Debian 12), builds embd (Release) and runs
# `embd bench`, pinned to one core: what each wire format costs per embedding and per
# token, and every kernel implementation's throughput beside memcpy; then the Python
# package's benchmark (`python -m embd bench`, in a venv made by scripts/python-venv.sh).
#   scripts/bench.sh                 embd bench (a minute or less)
#   scripts/bench.sh --svg k.svg     ... and the kernel chart (any `embd bench` option)
#   scripts/bench.sh --full          then the google-benchmark suites beside the anchors
#                                    (zlib, ISA-L, libdeflate, OpenSSL, cJSON, memcpy),
#                                    with ratio tables for CRC-32 and base64
# Environment: EMBD_BENCH_CPU (core to pin to, default the last one), EMBD_BENCH_REPS
# (google-benchmark repetitions for --full, default 3; medians), EMBD_BUILD_ROOT (default
# ./build), EMBD_ISA (force a tier, see README). Numbers only mean something on an
# otherwise idle machine; compare ratios within one run.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${EMBD_BUILD_ROOT:-$(pwd)/build}
full=0
args=()
for a in "$@"; do
  if [[ $a == --full ]]; then full=1; else args+=("$a"); fi
done
mkdir -p "$out"
bash scripts/install-deps.sh
cmake -S . -B "$out/bench" -G Ninja -DCMAKE_BUILD_TYPE=Release -DEMBD_BUILD_BENCH=ON \
  -DEMBD_BUILD_TESTS=OFF >"$out/bench.configure.log" 2>&1 || { cat "$out/bench.configure.log"; exit 1; }
cmake --build "$out/bench" >"$out/bench.build.log" 2>&1 || { tail -40 "$out/bench.build.log"; exit 1; }
cpu=${EMBD_BENCH_CPU:-$(($(nproc) - 1))}
taskset -c "$cpu" "$out/bench/embd" bench "${args[@]}"
# The Python package beside what Python users run today (json, base64, numpy, ujson).
echo
bash scripts/python-venv.sh "$out/bench-venv"
taskset -c "$cpu" "$out/bench-venv/bin/python" -m embd bench
((full)) || exit 0

reps=${EMBD_BENCH_REPS:-3}
gb() { # name, extra flags...
  local name=$1
  shift
  echo
  echo "=== $name"
  taskset -c "$cpu" "$out/bench/bench/$name" --benchmark_min_time=0.2 \
    --benchmark_repetitions="$reps" --benchmark_report_aggregates_only=true \
    --benchmark_enable_random_interleaving=true \
    --benchmark_out="$out/bench/$name.json" --benchmark_out_format=json "$@"
}
gb bench_crc32
python3 scripts/bench_ratios.py "$out/bench/bench_crc32.json"
gb bench_bswap
gb bench_frame
gb bench_base64 >/dev/null
python3 scripts/bench_base64_ratios.py "$out/bench/bench_base64.json"
for b in bench_openai bench_tokens bench_codec_modes; do
  [[ -x "$out/bench/bench/$b" ]] && gb "$b"
done
