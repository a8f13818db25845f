#!/usr/bin/env bash
# Installs the Debian 12 packages embd needs to build, test, cross-test, fuzz and
# benchmark. Idempotent and quiet: does nothing (and needs no network) when everything
# is already there. Runs apt-get as root, or through sudo when not root.
set -euo pipefail

pkgs=(
  build-essential cmake ninja-build pkg-config python3
  clang libclang-rt-14-dev
  libsimde-dev libcmocka-dev libbenchmark-dev zlib1g-dev
  libisal-dev libdeflate-dev
  libfast-float-dev libcjson-dev
  # the Codec stream modes' test oracles and benchmark contenders (the library needs neither)
  libmsgpack-dev libprotobuf-c-dev protobuf-c-compiler
  gcc-aarch64-linux-gnu g++-aarch64-linux-gnu gcc-s390x-linux-gnu g++-s390x-linux-gnu
  gcc-arm-linux-gnueabihf g++-arm-linux-gnueabihf
  qemu-user binutils
  abigail-tools
)
# Contenders and oracles only, never linked into the library (it reads JSON and hashes
# maps itself): OpenSSL's base64 and sha256 (bench/, tests/test_base64.c), simdjson (bench/).
pkgs+=(libssl-dev libsimdjson-dev)
# node runs the seed TypeScript codec for the interop test (tests/interop). A node already
# on PATH (nvm, NodeSource, a tarball) is kept: Debian's nodejs is only installed without one.
command -v node >/dev/null 2>&1 || pkgs+=(nodejs)
# npm installs PGlite (pgvector) from tests/pglite's lock file for the writers' tests; Debian's
# nodejs comes without it.
command -v npm >/dev/null 2>&1 || pkgs+=(npm)
# numpy loads and writes the .npy files of the CLI tests (tests/cli; they skip those checks without it).
pkgs+=(python3-numpy)
# The Python package (python/, scripts/test-python.sh): built offline with Debian's
# setuptools into a venv over Debian's python3; its tests use pytest, hypothesis, ujson (the
# benchmark's baseline), msgpack (the token stream oracle), dask.distributed (the
# LocalCluster example) and psycopg 3 (PgCopyWriter into a real PostgreSQL's COPY).
# The writers' real-database tests (tests/pg, label pg): a private PostgreSQL 15 cluster.
pkgs+=(postgresql-15)
# The JavaScript package (js/, scripts/build-wasm.sh, scripts/test-js.sh): clang-19 and
# wasm-ld-19 with wasi-libc and libc++ for wasm32 build the WebAssembly modules; Debian's
# chromium runs the browser test headless.
pkgs+=(clang-19 lld-19 wasi-libc libc++-19-dev-wasm32 libc++abi-19-dev-wasm32
  libclang-rt-19-dev-wasm32 chromium)
pkgs+=(python3-dev python3-venv python3-setuptools python3-pip python3-pytest python3-hypothesis
  python3-ujson python3-msgpack python3-distributed python3-psycopg)
# embd serve (serve/: embd-serve is built when libmicrohttpd and libcurl are found) and its
# tests (tests/serve: curl for 413 and binary downloads); wrk for bench/serve_bench.py's load
# run; Starlette and uvicorn for embd.asgi's tests (python/tests/test_asgi.py).
pkgs+=(libmicrohttpd-dev libcurl4-openssl-dev curl wrk python3-starlette python3-uvicorn)

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
((${#missing[@]})) || exit 0

sudo=()
[[ $(id -u) -eq 0 ]] || sudo=(sudo)
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# apt-get update exits 100 when any one index fails to download (with armhf registered
# for the cross sysroot, bookworm-security's armhf list is often out of sync); the lists
# that did download are used, and apt-get install below fails loudly if it lacks anything.
"${sudo[@]}" apt-get update -qq || echo "install-deps: apt-get update reported errors; going on" >&2
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
