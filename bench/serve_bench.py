#!/usr/bin/env python3
"""embd serve's benchmark (issue 40, "Speed"; a benchmark, not a test: nothing here asserts
a time).

A Python client with http.client (keep-alive) gets 100 x 1536 vectors into a float32
array, three ways, interleaved in every round, medians over the rounds:
  (a) through embd serve: POST /v1/embeddings with Accept: application/octet-stream, an EMBD
      batch, read with numpy (a view per frame after checking its header, then one copy);
      and, when the embd package imports, with embd.decode_batch (CRC checks and all);
  (b) the upstream directly, base64 JSON (encoding_format "base64": json.loads, then
      base64.b64decode + numpy.frombuffer per item, openai-python's way);
  (c) the upstream directly, float JSON (json.loads, then numpy.array(..., float32)).
The upstream is tests/serve/fake_upstream.py answering from its cache (the model's time is
not what is measured). The front's CPU per request comes from /proc/<pid>/stat (user +
system) over the (a) requests. Then a load run: wrk (2 threads, 32 connections, 10 s, a
POST script) against the front: requests/s, p50/p99 latency, errors, the front's CPU per
request. Prints the CPU and the ratios against the issue's targets:
  (a) at least 1.5x faster than (b) and at least 20x faster than (c); the front's CPU at
  most 0.5 ms a request.

  python3 bench/serve_bench.py [--exe build/release/embd-serve] [--rounds 9] [--iters 30]
          [--count 100] [--dims 1536] [--wrk-seconds 10] [--no-wrk] [--pin 1]
Run it with the python3 that has numpy (Debian's /usr/bin/python3). The client pins itself
to CPU --pin (default 1; -1: no pinning); the upstream and the front run where the kernel
puts them. Other work on the machine moves the absolute numbers: quote the ratios."""
import argparse
import base64
import http.client
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

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "serve"))
from serve_harness import Front, Upstream  # noqa: E402

try:
    import embd  # the Python package, when installed (scripts/test-python.sh's venv)
except ImportError:
    embd = None




def request(conn, body, accept):
    conn.request("POST", "/v1/embeddings", body=body,
                 headers={"Content-Type": "application/json", "Accept": accept})
    r = conn.getresponse()
    data = r.read()
    if r.status != 200:
        raise RuntimeError("HTTP %d: %r" % (r.status, data[:200]))
    return data


def embd_batch_numpy(data, count, dims):
    """An EMBD batch of `count` float32 frames of `dims` into a (count, dims) array: a
    strided view after checking each header's magic, version and dims, then one copy."""
    n = int.from_bytes(data[:4], "little")
    step = 16 + 4 * dims
    if n != count or len(data) != 4 + n * step:
        raise ValueError("batch: %d frames, %d bytes" % (n, len(data)))
    rows = np.frombuffer(data, dtype=np.uint8, offset=4).reshape(n, step)
    head = rows[:, :12]
    if not (head[:, :4] == np.frombuffer(b"EMBD", np.uint8)).all() or not (head[:, 4] == 1).all() \
            or not (head[:, 8:12].copy().view("<u4") == dims).all():
        raise ValueError("batch: a frame header is not a version-1 float32 frame of %d dims" % dims)
    return rows[:, 16:].copy().view("<f4").reshape(n, dims)


def base64_json(data):
    d = json.loads(data)["data"]
    out = np.empty((len(d), len(base64.b64decode(d[0]["embedding"])) // 4), dtype=np.float32)
    for item in d:
        out[item["index"]] = np.frombuffer(base64.b64decode(item["embedding"]), dtype="<f4")
    return out


def float_json(data):
    d = json.loads(data)["data"]
    return np.array([item["embedding"] for item in sorted(d, key=lambda x: x["index"])], dtype=np.float32)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--exe", default=os.path.join(ROOT, "build", "release", "embd-serve"))
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--dims", type=int, default=1536)
    ap.add_argument("--wrk-seconds", type=int, default=10)
    ap.add_argument("--no-wrk", action="store_true")
    ap.add_argument("--pin", type=int, default=1)
    a = ap.parse_args()
    if not os.path.exists(a.exe):
        sys.exit("serve_bench: %s not found (build embd-serve, or give --exe)" % a.exe)
    if a.pin >= 0 and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {a.pin})
    print("CPU: %s, %d cores; client pinned to %s; load average %s" % (
        cpu_model(), os.cpu_count(), a.pin if a.pin >= 0 else "none", os.getloadavg()))
    up = Upstream(lifetime=3600)
    fr = Front(a.exe, up.url, "--concurrency", "64")
    texts = ["dims:%d text %d" % (a.dims, i) for i in range(a.count)]
    req = {"input": texts, "model": "bench"}
    body_bin = json.dumps(req)
    body_b64 = json.dumps(dict(req, encoding_format="base64"))
    body_flt = json.dumps(dict(req, encoding_format="float"))
    cf = http.client.HTTPConnection("127.0.0.1", fr.port, timeout=60)
    cu = http.client.HTTPConnection("127.0.0.1", up.port, timeout=60)

    def via_front():
        return embd_batch_numpy(request(cf, body_bin, "application/octet-stream"), a.count, a.dims)

    def via_front_embd():
        return embd.decode_batch(request(cf, body_bin, "application/octet-stream"))

    def upstream_b64():
        return base64_json(request(cu, body_b64, "application/json"))

    def upstream_float():
        return float_json(request(cu, body_flt, "application/json"))

    ways = [("(a) embd serve, EMBD batch -> numpy", via_front), ("(b) upstream base64 JSON", upstream_b64),
            ("(c) upstream float JSON", upstream_float)]
    if embd is not None:
        ways.insert(1, ("(a') embd serve, EMBD batch -> embd.decode_batch", via_front_embd))
    # the same vectors every way, bit for bit (and warm caches, pools, connections)
    ref = upstream_b64()
    for name, fn in ways:
        got = fn()
        assert got.shape == (a.count, a.dims) and np.array_equal(got.view(np.uint32), ref.view(np.uint32)), name
    times = {name: [] for name, _ in ways}
    front_cpu = []
    for r in range(a.rounds):
        for name, fn in ways:
            iters = max(1, a.iters // 10) if fn is upstream_float else a.iters
            c0 = fr.cpu_seconds()
            t0 = time.perf_counter()
            for _ in range(iters):
                fn()
            t = (time.perf_counter() - t0) / iters
            c1 = fr.cpu_seconds()
            times[name].append(t)
            if fn is via_front:
                front_cpu.append((c1 - c0, iters))
    med = {name: statistics.median(v) for name, v in times.items()}
    print("\n%d x %d float32 vectors into a numpy array, Python http.client keep-alive, medians of %d rounds:"
          % (a.count, a.dims, a.rounds))
    for name, _ in ways:
        print("  %-52s %8.3f ms" % (name, med[name] * 1e3))
    a_ = med[ways[0][0]]
    rb = med["(b) upstream base64 JSON"] / a_
    rc = med["(c) upstream float JSON"] / a_
    # /proc counts clock ticks (10 ms): the sum over every round, not a median of rounds
    cpu = sum(c for c, _ in front_cpu) / sum(n for _, n in front_cpu)
    print("  the front's CPU (user+system, /proc) per (a) request: %.3f ms (over all %d (a) requests)"
          % (cpu * 1e3, sum(n for _, n in front_cpu)))
    print("\nratios: (b)/(a) = %.2fx (target >= 1.5x: %s); (c)/(a) = %.1fx (target >= 20x: %s); front CPU %.3f ms "
          "a request (target <= 0.5 ms: %s)" % (rb, "holds" if rb >= 1.5 else "MISSED", rc,
                                                "holds" if rc >= 20 else "MISSED", cpu * 1e3,
                                                "holds" if cpu <= 0.5e-3 else "MISSED"))
    cf.close()
    cu.close()
    if not a.no_wrk:
        wrk = shutil.which("wrk")
        if not wrk:
            print("\nwrk: SKIPPED: wrk not found (Debian: wrk; scripts/install-deps.sh)")
        else:
            with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
                f.write('wrk.method = "POST"\nwrk.body = %s\nwrk.headers["Content-Type"] = "application/json"\n'
                        'wrk.headers["Accept"] = "application/octet-stream"\n' % json.dumps(body_bin))
                f.write('done = function(summary, latency, requests)\n'
                        '  io.write(string.format("WRKSTAT requests=%d non2xx=%d connect=%d read=%d write=%d '
                        'timeout=%d p50=%.3f p99=%.3f\\n", summary.requests, summary.errors.status, '
                        'summary.errors.connect, summary.errors.read, summary.errors.write, summary.errors.timeout, '
                        'latency:percentile(50) / 1000, latency:percentile(99) / 1000))\nend\n')
                script = f.name
            c0 = fr.cpu_seconds()
            out = subprocess.run([wrk, "-t2", "-c32", "-d%ds" % a.wrk_seconds, "--latency", "-s", script,
                                  "http://127.0.0.1:%d/v1/embeddings" % fr.port], capture_output=True, text=True,
                                 timeout=a.wrk_seconds + 60)
            c1 = fr.cpu_seconds()
            os.unlink(script)
            print("\nwrk -t2 -c32 -d%ds, POST /v1/embeddings (%d x %d, Accept: application/octet-stream):"
                  % (a.wrk_seconds, a.count, a.dims))
            print("\n".join("  " + l for l in out.stdout.strip().splitlines()))
            stat = dict(kv.split("=") for l in out.stdout.splitlines() if l.startswith("WRKSTAT")
                        for kv in l.split()[1:])
            n = int(stat.get("requests", 0))
            errs = sum(int(stat.get(k, 0)) for k in ("non2xx", "connect", "read", "write", "timeout"))
            print("  => %.1f requests/s, p50 %.2f ms, p99 %.2f ms, %d errors, the front's CPU %.3f ms a request"
                  % (n / a.wrk_seconds, float(stat.get("p50", 0)), float(stat.get("p99", 0)), errs,
                     (c1 - c0) / max(n, 1) * 1e3))
    rc_ = fr.stop()
    up.kill()
    if rc_ != 0:
        sys.exit("serve_bench: embd-serve exited %s" % rc_)


if __name__ == "__main__":
    main()
