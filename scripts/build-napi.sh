#!/usr/bin/env bash
# Builds the optional Node-API addon (js/native/embd_napi.c, issue 34) against the static
# library of a native CMake build: one .node that stands alone (libembd.a inside, its
# symbols hidden; the system libraries it needs - simdjson, libdeflate, zlib, libcrypto,
# msgpack-c, libstdc++ - linked as shared ones, as the build's embd.pc lists them).
# Node-API version 8: the same file loads in Node 20 and Node 24. gcc and Node's headers
# (/usr/include/node) only; no node-gyp. The result is checked by loading it in Node.
#   scripts/build-napi.sh NATIVE_BUILD_DIR [OUT]     default OUT: js/dist/embd-napi.node
# js/src/embd.js finds js/dist/embd-napi.node by itself (load({backend: 'auto'|'native'}));
# another place is given with load({backend: 'native', addon: PATH}).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[[ $# -ge 1 ]] || { echo "usage: scripts/build-napi.sh NATIVE_BUILD_DIR [OUT]" >&2; exit 2; }
build=$(cd "$1" && pwd)
out=$(realpath -m "${2:-$root/js/dist/embd-napi.node}")  # absolute: require() below
nodeinc=${EMBD_NODE_INCLUDE:-/usr/include/node}
lib=$build/libembd.a
pc=$build/embd.pc
[[ -f $nodeinc/node_api.h ]] || { echo "build-napi: $nodeinc/node_api.h missing (Debian: libnode-dev / nodejs headers)" >&2; exit 2; }
[[ -f $lib ]] || { echo "build-napi: $lib missing (build the target embd_static: ninja -C $build libembd.a)" >&2; exit 2; }
[[ -f $pc ]] || { echo "build-napi: $pc missing" >&2; exit 2; }
# What the static library needs, in the build's own words (embd.pc): Requires.private
# through pkg-config, Libs.private as they are.
requires=$(sed -n 's/^Requires.private:[[:space:]]*//p' "$pc")
libs_private=$(sed -n 's/^Libs.private:[[:space:]]*//p' "$pc")
# shellcheck disable=SC2086
deps=$( [[ -z $requires ]] || pkg-config --libs $requires )
grep -q 'EMBD_WITH_OPENAI:BOOL=ON' "$build/CMakeCache.txt" ||
  { echo "build-napi: $build was configured with EMBD_WITH_OPENAI=OFF: the addon's decoders would only say UNAVAILABLE" >&2; exit 2; }
mkdir -p "$(dirname "$out")"
tmp=${out%.node}.tmp$$.node  # require() picks its loader by the extension
# shellcheck disable=SC2086
gcc -std=c11 -O2 -fPIC -shared -fvisibility=hidden -Wall -Wextra -Werror \
  -I"$nodeinc" -I"$root/include" -DEMBD_STATIC \
  "$root/js/native/embd_napi.c" "$lib" $deps $libs_private \
  -Wl,--exclude-libs,ALL -Wl,--as-needed -o "$tmp"
# An undefined symbol shows only at load time: load it now (napi_* come from node itself).
node -e "const m = require(process.argv[1]); for (const f of ['setup', 'openai', 'base64', 'openaiAsync']) if (typeof m[f] !== 'function') throw new Error('no ' + f)" "$tmp"
mv -f "$tmp" "$out"
echo "build-napi: $out"
