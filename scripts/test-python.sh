#!/usr/bin/env bash
# The Python package's tests, as a user gets it (README "Python"):
#   1. a venv over Debian's python3 (--system-site-packages: its numpy, pytest,
#      hypothesis, ujson, dask), then `pip install --no-index --no-build-isolation ./python`
#      offline: the extension with libembd built from this checkout (bundled mode);
#   2. pytest over python/tests against the installed package ("no tests collected",
#      pytest's exit 5, is a failure);
#   2b. the installed module under qemu-x86_64 -cpu qemu64 / Westmere / Haswell (scalar,
#      sse42, avx2 chosen at run time from one build);
#   3. the package linked against a libembd installed from <release-build-dir>
#      (EMBD_PYTHON_LIBEMBD=system, the distributions' way) in a second venv: built, then a
#      smoke test (version, a decode, an error's code).
#   scripts/test-python.sh <release-build-dir> [<work-dir>]
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
release=${1:?usage: scripts/test-python.sh <release-build-dir> [<work-dir>]}
release=$(cd "$release" && pwd) # absolute: the steps below change directory
work=${2:-$release/python}
mkdir -p "$work" && work=$(cd "$work" && pwd)
rm -rf "$work"
mkdir -p "$work"

echo "--- bundled: venv + pip install --no-index --no-build-isolation ./python"
bash scripts/python-venv.sh "$work/venv"
"$work/venv/bin/python" -c 'import embd, sys; print("embd", embd.__version__, embd.__file__)'
# pgvector for the writers' tests: PGlite from the npm registry, exactly the versions in
# tests/pglite/package-lock.json (npm ci); without node or npm those tests skip loudly.
if command -v npm >/dev/null; then
  (cd tests/pglite && npm ci --no-audit --no-fund --loglevel=error) || { echo "test-python: npm ci in tests/pglite failed" >&2; exit 1; }
fi
# The Arrow consumers and engines (pyarrow, DuckDB, Polars, LanceDB, pyspark, Ray: issue
# 39) from PyPI, exactly the versions and hashes of python/requirements-engines.lock, into
# this venv only. Without the index (offline) their tests skip loudly; EMBD_PYTHON_ENGINES=0
# leaves them all out on purpose, =stores installs all but pyspark, py4j and ray (whose
# tests then skip loudly: the JVM engine and Ray cost most of the install and test time).
if [[ ${EMBD_PYTHON_ENGINES:-1} != 0 ]]; then
  echo "--- engines: pip install --require-hashes --no-deps -r python/requirements-engines.lock (EMBD_PYTHON_ENGINES=${EMBD_PYTHON_ENGINES:-1})"
  lock=python/requirements-engines.lock
  if [[ ${EMBD_PYTHON_ENGINES:-1} == stores ]]; then
    lock=$work/requirements-stores.lock
    # the excluded pins and their hash lines out
    awk '/^(pyspark|py4j|ray)==/{skip=1; next} skip && /^ *--hash/{skip=0; next} {skip=0; print}' \
      python/requirements-engines.lock >"$lock"
  fi
  t0=$SECONDS
  if "$work/venv/bin/pip" install -q --require-hashes --no-deps --no-build-isolation \
      -r "$lock" >"$work/engines.pip.log" 2>&1; then
    echo "test-python: engines installed in $((SECONDS - t0)) s"
  else
    tail -5 "$work/engines.pip.log"
    echo "test-python: SKIPPED LOUDLY: python/requirements-engines.lock did not install (log: $work/engines.pip.log); the Arrow, store and engine tests skip"
  fi
fi
# pytest from the tests' directory so that `import embd` is the installed package, not
# python/src (which has no extension module).
rc=0
(cd "$root/python/tests" && "$work/venv/bin/python" -m pytest -p no:cacheprovider -q -rs .) || rc=$?
if ((rc == 5)); then
  echo "test-python: pytest collected no tests" >&2
  exit 1
fi
((rc == 0)) || exit "$rc"

# One build runs on any x86-64 CPU: the installed module under qemu CPU models without
# the build machine's features picks the tier each has (runtime dispatch).
if [[ $(uname -m) == x86_64 ]] && command -v qemu-x86_64 >/dev/null; then
  for m in qemu64:scalar Westmere:sse42 Haswell:avx2; do
    echo "--- qemu-x86_64 -cpu ${m%%:*}"
    qemu-x86_64 -cpu "${m%%:*}" "$work/venv/bin/python" "$root/python/tests/any_cpu.py" "${m##*:}"
  done
else
  echo "test-python: SKIPPED LOUDLY: the any-CPU check needs qemu-x86_64 on an x86-64 host"
fi

echo "--- system: the package over an installed libembd (EMBD_PYTHON_LIBEMBD=system)"
cmake --install "$release" --prefix "$work/prefix" >/dev/null
PKG_CONFIG_PATH=$work/prefix/lib/pkgconfig EMBD_PYTHON_LIBEMBD=system \
  bash scripts/python-venv.sh "$work/venv-system"
LD_LIBRARY_PATH=$work/prefix/lib "$work/venv-system/bin/python" - <<'PY'
import embd, embd._embd as ext, numpy as np
so = open("/proc/self/maps").read()
assert "libembd.so" in so, "the system build did not load the installed libembd.so"
assert embd.__version__
assert embd.decode_openai('{"data":[{"index":0,"embedding":"AACAPwAAAEA="}]}').tolist() == [[1.0, 2.0]]
try:
    embd.b64decode("AB*=")
except embd.Error as e:
    assert e.code == "EMBD_ERR_BASE64_CHAR" and e.offset == 2
else:
    raise SystemExit("no error")
print("system build ok: embd", embd.__version__, "over the installed libembd.so")
PY
