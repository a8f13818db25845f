#!/usr/bin/env bash
# Installs a build tree into a temporary prefix and builds tests/consumer against it twice:
# with find_package(embd) (shared and static targets) and with pkg-config; runs all three.
#   scripts/check-install.sh <configured-and-built-build-dir>
set -euo pipefail
cd "$(dirname "$0")/.."
build=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
cmake -S tests/consumer -B "$tmp/cmake" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/cmake" >/dev/null
"$tmp/cmake/cons"
"$tmp/cmake/cons_static"
export PKG_CONFIG_PATH=$tmp/prefix/lib/pkgconfig
# shellcheck disable=SC2046
cc tests/consumer/main.c $(pkg-config --cflags --libs embd) -Wl,-rpath,"$tmp/prefix/lib" -o "$tmp/pc"
"$tmp/pc"
echo "check-install: find_package (shared, static) and pkg-config consumers ok"
# the command-line tool and its man page (EMBD_BUILD_CLI)
if [[ -x $tmp/prefix/bin/embd || -f $build/embd ]]; then
  "$tmp/prefix/bin/embd" --version
  test -f "$tmp/prefix/share/man/man1/embd.1" || { echo "check-install: share/man/man1/embd.1 missing" >&2; exit 1; }
  echo "check-install: bin/embd and share/man/man1/embd.1 ok"
fi
