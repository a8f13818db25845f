#!/usr/bin/env bash
# Makes a venv with the embd Python package installed the README's way, offline:
#   scripts/python-venv.sh <venv-dir>
# Debian's python3 (its numpy and python3-* packages seen through --system-site-packages),
# then `pip install --no-index --no-build-isolation ./python` (Debian's setuptools; libembd
# built from this checkout, or an installed one with EMBD_PYTHON_LIBEMBD=system).
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${1:?usage: scripts/python-venv.sh <venv-dir>}
py=/usr/bin/python3 # Debian's: the one with python3-numpy (a pyenv python3 on PATH has none)
"$py" -m venv --system-site-packages "$venv"
"$venv/bin/pip" install -q --no-index --no-build-isolation ./python >"$venv.pip.log" 2>&1 ||
  { tail -40 "$venv.pip.log"; echo "python-venv: pip install ./python failed (log: $venv.pip.log)" >&2; exit 1; }
