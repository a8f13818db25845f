#!/usr/bin/env bash
# Builds the library for WebAssembly: js/dist/embd-simd128.wasm (the wasm-simd128 kernels
# of src/arch/wasm beside the scalar ones) and js/dist/embd-scalar.wasm (scalar only, for
# engines without SIMD128). Debian's clang-19 + wasm-ld + wasi-libc + libc++ for wasm32
# (scripts/install-deps.sh installs them); nothing is downloaded. The C++ OpenAI decoder
# (src/json/openai.cc, fast_float from libfast-float-dev), Codec HELLO/READY JSON, tokenizer
# maps and detokenization (embd's own JSON reading and sha256) and the msgpack and protobuf
# stream modes (embd's own decoders) come along; zlib payloads do not (js/wasm/shim/zlib.h
# says why: in JavaScript they go through node:zlib or the Compression Streams). The modules import six
# WASI functions (stdio, getenv, abort) that js/src/embd.js stubs: no WASI runtime needed.
#   scripts/build-wasm.sh [OUTDIR]     default js/dist; objects in build/wasm-obj
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/js/dist}
obj=${EMBD_WASM_OBJ:-$root/build/wasm-obj}
llvm=${EMBD_WASM_LLVM:-/usr/lib/llvm-19/bin}
cc=$llvm/clang
cxx=$llvm/clang++
for t in "$cc" "$cxx" "$llvm/wasm-ld"; do
  [[ -x $t ]] || { echo "build-wasm: $t missing (scripts/install-deps.sh installs clang-19, lld-19, wasi-libc, libc++-19-dev-wasm32)" >&2; exit 2; }
done
[[ -f /usr/include/wasm32-wasi/stdlib.h ]] || { echo "build-wasm: wasi-libc missing" >&2; exit 2; }
mkdir -p "$out" "$obj"

cd "$root"
c_srcs=(src/core/common.c src/core/cpu.c src/core/dispatch.c src/core/crc32.c src/core/bswap.c
  src/core/convert.c src/core/base64.c src/core/base64_tables.c
  src/wire/frame.c src/wire/batch.c src/wire/stream.c src/wire/framer.c
  src/codec/codec.c src/codec/codec_handshake.c src/codec/codec_proto.c src/codec/codec_msgpack.c
  src/core/sha256.c src/codec/tokmap.c src/codec/detok.c
  src/json/json_strict.c js/wasm/glue.c)
# The JSON float-array kernel family (its scalar reference; the x86 rows are not built here).
[[ -f src/json/floatarray.c ]] && c_srcs+=(src/json/floatarray.c)
cxx_srcs=(src/json/openai.cc src/json/decimal.cc src/json/tokmap_json.cc src/json/codec_json.cc)
simd_srcs=(src/arch/wasm/crc32_wasm.c src/arch/wasm/bswap_wasm.c src/arch/wasm/base64_wasm.c
  src/arch/wasm/convert_wasm.c js/wasm/memchr_simd128.c)

common=(--target=wasm32-wasi --sysroot=/usr -O2 -fno-exceptions -fvisibility=hidden
  -DEMBD_BUILDING_LIBRARY -DNDEBUG -I"$root/js/wasm/shim" -I"$root/include" -I"$root/src/core"
  -I"$root/src/wire" -I"$root/src/codec" -I"$root/src/json" -I"$root/src")
cflags=(-std=c11 -D_DEFAULT_SOURCE -Wall -Wextra -Wno-unused-parameter -Wno-pass-failed)
cxxflags=(-std=c++17 -fno-rtti -isystem /usr/include/wasm32-wasi/c++/v1 -Wall -Wextra)
# wasi-libc lays out the heap after the stack; 1 MiB of stack (the decoders use a few KiB).
ldflags=(-mexec-model=reactor -Wl,--no-entry -Wl,-z,stack-size=1048576 -Wl,--export-dynamic
  -Wl,--export=malloc -Wl,--export=free)
# Function names stay in the modules with EMBD_WASM_NAMES=1 (profiles: node --cpu-prof).
[[ ${EMBD_WASM_NAMES:-0} == 1 ]] || ldflags+=(-Wl,--strip-all)

cd "$root"
build() { # variant extra-flags...
  local v=$1; shift
  local objs=() f o
  local flags=("$@")
  mkdir -p "$obj/$v"
  for f in "${c_srcs[@]}"; do
    o=$obj/$v/$(echo "$f" | tr / _).o; objs+=("$o")
    "$cc" "${common[@]}" "${cflags[@]}" "${flags[@]}" -c "$f" -o "$o" &
  done
  if [[ $v == simd128 ]]; then
    for f in "${simd_srcs[@]}"; do
      o=$obj/$v/$(echo "$f" | tr / _).o; objs+=("$o")
      "$cc" "${common[@]}" "${cflags[@]}" "${flags[@]}" -I/usr/include -c "$f" -o "$o" &
    done
  fi
  for f in "${cxx_srcs[@]}"; do
    o=$obj/$v/$(echo "$f" | tr / _).o; objs+=("$o")
    "$cxx" "${common[@]}" "${cxxflags[@]}" "${flags[@]}" -c "$f" -o "$o" &
  done
  local rc=0
  for j in $(jobs -p); do wait "$j" || rc=1; done
  ((rc == 0)) || { echo "build-wasm: compile failed ($v)" >&2; exit 1; }
  "$cxx" --target=wasm32-wasi --sysroot=/usr "${flags[@]}" "${ldflags[@]}" "${objs[@]}" \
    -o "$out/embd-$v.wasm"
  echo "build-wasm: $out/embd-$v.wasm ($(stat -c %s "$out/embd-$v.wasm") bytes)"
}
build simd128 -msimd128 -DEMBD_HAVE_WASM_SIMD128
build scalar
