"""Arrow output speed (issue 39), not a test: run by hand, pinned, on a quiet machine if you
have one:

    taskset -c 1 python bench/arrow_bench.py [--n 1000] [--dims 1536] [--repeat 15]

with a venv that has embd and pyarrow (scripts/test-python.sh makes one: <build>/python/venv).
The contenders run interleaved in one process, each repeat timing all of them in turn, and
the medians are compared as ratios:
  1. embd.decode_openai_arrow(base64 body) against embd.decode_openai(same body): the export
     should cost nothing (target: <= 1.1x);
  2. embd.decode_openai_arrow(float-array body) against what users write today,
     pyarrow.array([item["embedding"] for item in json.loads(body)["data"]],
     type=pa.list_(pa.float32())) (target: >= 20x), and against the base64 loop
     (json.loads + base64.b64decode + np.frombuffer per item, then one FixedSizeListArray).
"""
import argparse
import base64
import json
import os
import statistics
import time

import numpy as np
import pyarrow as pa

import embd
from benchutil import cpu_model




def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--dims", type=int, default=1536)
    ap.add_argument("--repeat", type=int, default=15)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    v = rng.standard_normal((a.n, a.dims)).astype(np.float32)
    b64 = json.dumps({"object": "list", "data": [
        {"object": "embedding", "index": i, "embedding": base64.b64encode(v[i].tobytes()).decode()}
        for i in range(a.n)]}).encode()
    flt = json.dumps({"object": "list", "data": [
        {"object": "embedding", "index": i, "embedding": [float(x) for x in v[i]]} for i in range(a.n)]}).encode()

    def users_float():
        return pa.array([d["embedding"] for d in json.loads(flt)["data"]], type=pa.list_(pa.float32()))

    def users_b64():
        rows = [np.frombuffer(base64.b64decode(d["embedding"]), np.float32) for d in json.loads(b64)["data"]]
        return pa.FixedSizeListArray.from_arrays(pa.array(np.concatenate(rows)), a.dims)

    runs = {
        "embd.decode_openai (base64)": lambda: embd.decode_openai(b64),
        "embd.decode_openai_arrow (base64)": lambda: embd.decode_openai_arrow(b64),
        "embd.decode_openai_arrow (floats)": lambda: embd.decode_openai_arrow(flt),
        "json.loads + pa.array(lists) (floats)": users_float,
        "json.loads + b64decode + frombuffer (base64)": users_b64,
    }
    # the same values out of each (a benchmark of wrong answers is worth nothing)
    ref = v.reshape(-1)
    for name, f in runs.items():
        out = f()
        flat = out.reshape(-1) if isinstance(out, np.ndarray) else np.asarray(out.flatten())
        assert np.array_equal(flat, ref), name
    times = {k: [] for k in runs}
    for _ in range(a.repeat):
        for name, f in runs.items():
            t = time.perf_counter()
            f()
            times[name].append(time.perf_counter() - t)
    med = {k: statistics.median(t) for k, t in times.items()}
    print("CPU: %s; affinity %s of %d; load average %s" % (
        cpu_model(), sorted(os.sched_getaffinity(0)), os.cpu_count(), os.getloadavg()))
    print("%d x %d float32: base64 body %.1f MB, float body %.1f MB; %d repeats, medians" % (
        a.n, a.dims, len(b64) / 1e6, len(flt) / 1e6, a.repeat))
    for k, m in med.items():
        print("  %-48s %9.2f ms" % (k, m * 1e3))
    r1 = med["embd.decode_openai_arrow (base64)"] / med["embd.decode_openai (base64)"]
    r2 = med["json.loads + pa.array(lists) (floats)"] / med["embd.decode_openai_arrow (floats)"]
    r3 = med["json.loads + b64decode + frombuffer (base64)"] / med["embd.decode_openai_arrow (base64)"]
    print("decode_openai_arrow / decode_openai (base64): %.3fx (target <= 1.1x: %s)" % (r1, "holds" if r1 <= 1.1 else "MISSED"))
    print("pa.array(json lists) / decode_openai_arrow (floats): %.1fx (target >= 20x: %s)" % (r2, "holds" if r2 >= 20 else "MISSED"))
    print("json + b64decode + frombuffer / decode_openai_arrow (base64): %.1fx" % r3)


if __name__ == "__main__":
    main()
