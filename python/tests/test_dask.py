"""examples/python/dask_decode.py on a real Dask LocalCluster (two worker processes,
started and stopped by the example itself, offline) equals the one-process decode and
openai-python's rule."""
import base64
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import embd
import oracles

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "python", "dask_decode.py")

try:
    import dask.distributed  # noqa: F401
    HAVE_DASK = True
except ImportError:
    HAVE_DASK = False


@pytest.mark.skipif(not HAVE_DASK, reason="SKIPPED LOUDLY: dask.distributed not installed "
                                          "(Debian: python3-distributed; scripts/install-deps.sh)")
def test_dask_example(tmp_path):
    rng = np.random.default_rng(9)
    bodies = tmp_path / "bodies"
    bodies.mkdir()
    want = []
    for k in range(12):
        n = int(rng.integers(1, 20))
        v = rng.standard_normal((n, 256)).astype(np.float32)
        order = rng.permutation(n)
        items = [{"index": int(i), "embedding": base64.b64encode(v[i].tobytes()).decode()} for i in order]
        body = json.dumps({"data": items, "model": "m"}).encode()
        (bodies / ("part-%03d.json" % k)).write_bytes(body)
        want.append(oracles.openai_python_decode(body))
    out = tmp_path / "out.npy"
    env = dict(os.environ, DASK_DISTRIBUTED__WORKER__DAEMON="False")
    r = subprocess.run([sys.executable, EXAMPLE, str(bodies), str(out), "--workers", "2"],
                       capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "on 2 workers" in r.stdout
    got = np.load(out)
    one = np.concatenate([embd.decode_openai((bodies / p).read_bytes()) for p in sorted(os.listdir(bodies))])
    assert got.dtype == np.float32 and np.array_equal(got, one)
    assert np.array_equal(got, np.concatenate(want))
