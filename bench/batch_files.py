#!/usr/bin/python3
"""Batch output files and big bodies against the I/O floor and the loop users write
(issue 38). One run, contenders interleaved, medians, the CPU named:

    bench/batch_files.py EMBD [--reps N] [--dir DIR] [--python VENV_PYTHON]

  floor      `cat` of the input to /dev/null + `dd bs=1M` of the expected output into a
             new file (what any tool must at least spend)
  embd       `embd openai IN --to npy -o NEW.npy` (the output file removed before each run)
  py-loop    per line json.loads, base64.b64decode, np.frombuffer, then np.vstack and
             np.save (what users write today), in a fresh /usr/bin/python3
  one body   the same vectors as one response body: embd, and the floor
  float      40 requests x 100 x 1536 float lines: embd and the loop (json.loads,
             np.asarray(float32))
  python     embd.decode_openai_batch (in the interpreter given by --python, the package
             installed) against the same loop in that process

Targets (issue 38): 200 x 100 x 1536 base64 -> .npy <= 1.5x the floor and >= 5x py-loop; one
body <= 2x the floor; float lines >= 12x the loop; decode_openai_batch >= 10x the loop.
Numbers mean something only on an otherwise idle machine: pin it (taskset -c N)."""
import argparse
import base64
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

from benchutil import cpu_model

LOOP = r'''
import base64, json, sys, numpy as np
rows = []
for path in sys.argv[2:]:
    with open(path, "rb") as f:
        for line in f:
            if not line.strip():
                continue
            r = json.loads(line)
            if r.get("error") or not r.get("response") or r["response"]["status_code"] >= 300:
                continue
            data = sorted(r["response"]["body"]["data"], key=lambda d: d["index"])
            for d in data:
                e = d["embedding"]
                if isinstance(e, str):
                    rows.append(np.frombuffer(base64.b64decode(e), dtype="<f4"))
                else:
                    rows.append(np.asarray(e, dtype=np.float32))
np.save(sys.argv[1], np.vstack(rows))
'''




def make_files(d, reqs, per, dims, seed=38):
    rng = np.random.default_rng(seed)
    v = rng.standard_normal((reqs * per, dims)).astype(np.float32)
    b64 = os.path.join(d, "batch_b64.jsonl")
    with open(b64, "w") as f:
        for r in range(reqs):
            data = [{"object": "embedding", "index": i,
                     "embedding": base64.b64encode(v[r * per + i].tobytes()).decode()} for i in range(per)]
            f.write(json.dumps({"id": "batch_req_%d" % r, "custom_id": "doc-%d" % r,
                                "response": {"status_code": 200, "request_id": "req_%d" % r,
                                             "body": {"object": "list", "data": data, "model": "m",
                                                      "usage": {"prompt_tokens": 1, "total_tokens": 1}}},
                                "error": None}) + "\n")
    body = os.path.join(d, "one_body.json")
    with open(body, "w") as f:
        f.write('{"object": "list", "data": [')
        for i in range(reqs * per):
            f.write((", " if i else "") + json.dumps({"object": "embedding", "index": i,
                                                      "embedding": base64.b64encode(v[i].tobytes()).decode()}))
        f.write('], "model": "m", "usage": {"prompt_tokens": 1, "total_tokens": 1}}')
    expect = os.path.join(d, "expect.npy")
    np.save(expect, v)
    return b64, body, expect, v


def make_float_file(d, reqs, per, dims, seed=7):
    rng = np.random.default_rng(seed)
    v = rng.standard_normal((reqs * per, dims)).astype(np.float32)
    path = os.path.join(d, "batch_float.jsonl")
    with open(path, "w") as f:
        for r in range(reqs):
            data = [{"object": "embedding", "index": i, "embedding": [float(x) for x in v[r * per + i]]}
                    for i in range(per)]
            f.write(json.dumps({"id": "b%d" % r, "custom_id": "doc-%d" % r,
                                "response": {"status_code": 200, "body": {"object": "list", "data": data,
                                                                          "model": "m"}},
                                "error": None}) + "\n")
    return path, v


def timed(cmd, before=None):
    if before:
        before()
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("embd")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--dir")
    ap.add_argument("--python", help="a Python with the embd package (for decode_openai_batch)")
    a = ap.parse_args()
    embd = os.path.abspath(a.embd)
    d = a.dir or tempfile.mkdtemp(prefix="embd-batch-bench-")
    os.makedirs(d, exist_ok=True)
    print("CPU: %s; %d reps, medians; files in %s" % (cpu_model(), a.reps, d))
    b64, body, expect, v = make_files(d, 200, 100, 1536)
    flt, fv = make_float_file(d, 40, 100, 1536)
    out = os.path.join(d, "out.npy")
    dd_out = os.path.join(d, "dd.out")
    loop = os.path.join(d, "loop.py")
    with open(loop, "w") as f:
        f.write(LOOP)
    sizes = {p: os.path.getsize(p) for p in (b64, body, flt)}
    print("inputs: base64 batch %.0f MB, one body %.0f MB, float batch %.0f MB; output %.0f MB" % (
        sizes[b64] / 1e6, sizes[body] / 1e6, sizes[flt] / 1e6, os.path.getsize(expect) / 1e6))

    def rm_out():
        for p in (out, dd_out):
            if os.path.exists(p):
                os.unlink(p)

    res = {k: [] for k in ("cat", "dd", "embd", "loop", "cat1", "body", "fcat", "fembd", "floop")}
    for rep in range(a.reps):
        res["cat"].append(timed(["cat", b64], rm_out) if True else 0)
        res["dd"].append(timed(["dd", "if=" + expect, "of=" + dd_out, "bs=1M", "status=none"], rm_out))
        res["embd"].append(timed([embd, "openai", b64, "--to", "npy", "-o", out], rm_out))
        if rep == 0:
            got = np.load(out)
            assert got.tobytes() == v.tobytes(), "embd's .npy differs from the vectors"
        res["cat1"].append(timed(["cat", body], rm_out))
        res["body"].append(timed([embd, "openai", body, "--to", "npy", "-o", out], rm_out))
        if rep == 0:
            assert np.load(out).tobytes() == v.tobytes(), "embd's one-body .npy differs"
        res["loop"].append(timed(["/usr/bin/python3", loop, out, b64], rm_out))
        if rep == 0:
            assert np.load(out).tobytes() == v.tobytes(), "the loop's .npy differs"
        res["fcat"].append(timed(["cat", flt], rm_out))
        res["fembd"].append(timed([embd, "openai", flt, "--to", "npy", "-o", out], rm_out))
        if rep == 0:
            assert np.load(out).tobytes() == fv.tobytes(), "embd's float .npy differs"
        res["floop"].append(timed(["/usr/bin/python3", loop, out, flt], rm_out))
    rm_out()
    m = {k: statistics.median(x) * 1e3 for k, x in res.items()}
    floor = m["cat"] + m["dd"]
    floor1 = m["cat1"] + m["dd"]
    print("%-58s %9s" % ("", "ms"))
    print("%-58s %9.1f" % ("floor: cat of the base64 batch + dd of the .npy", floor))
    print("%-58s %9.1f   %.2fx the floor (target <= 1.5x), %.1fx faster than the loop (target >= 5x)" % (
        "embd openai batch (200 x 100 x 1536 base64) -> .npy", m["embd"], m["embd"] / floor, m["loop"] / m["embd"]))
    print("%-58s %9.1f" % ("python loop (json, base64, frombuffer, vstack, save)", m["loop"]))
    print("%-58s %9.1f" % ("floor: cat of the one body + dd of the .npy", floor1))
    print("%-58s %9.1f   %.2fx the floor (target <= 2x)" % (
        "embd openai one body (20,000 x 1536 base64) -> .npy", m["body"], m["body"] / floor1))
    print("%-58s %9.1f   %.1fx faster than the loop (target >= 12x)" % (
        "embd openai float lines (40 x 100 x 1536) -> .npy", m["fembd"], m["floop"] / m["fembd"]))
    print("%-58s %9.1f" % ("python loop over the float lines", m["floop"]))
    if a.python:
        code = r'''
import sys, time, statistics, json, base64, numpy as np, embd
path, reps = sys.argv[1], int(sys.argv[2])
def loop():
    rows = []
    with open(path, "rb") as f:
        for line in f:
            r = json.loads(line)
            for d in sorted(r["response"]["body"]["data"], key=lambda d: d["index"]):
                rows.append(np.frombuffer(base64.b64decode(d["embedding"]), dtype="<f4"))
    return np.vstack(rows)
t1, t2 = [], []
for _ in range(reps):
    t = time.perf_counter(); a = embd.decode_openai_batch(path).vectors; t1.append(time.perf_counter() - t)
    t = time.perf_counter(); b = loop(); t2.append(time.perf_counter() - t)
    assert a.tobytes() == b.tobytes()
e, l = statistics.median(t1) * 1e3, statistics.median(t2) * 1e3
print("%-58s %9.1f   %.1fx faster than the loop (target >= 10x)" % ("embd.decode_openai_batch (the base64 batch)", e, l / e))
print("%-58s %9.1f" % ("the same loop in-process (json, base64, frombuffer, vstack)", l))
'''
        subprocess.run([a.python, "-c", code, b64, str(a.reps)], check=True)
    if not a.dir:
        shutil.rmtree(d)
    return 0


if __name__ == "__main__":
    sys.exit(main())
