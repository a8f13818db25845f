#!/usr/bin/python3
"""The same three lines as bench/pg_ingest.py, for pgvector inside PGlite (PostgreSQL 18 +
pgvector compiled to WebAssembly, tests/pglite; slower in absolute terms: the ratios are the
point). Not a test: it prints times and ratios.

    bench/pglite_ingest.py [--embd build/release/embd] [--vectors 10000] [--dims 1536]

Into `CREATE TABLE items (embedding vector(DIMS))`, in one PGlite instance:
  (1) embd:    embd openai BODIES... --to pgcopy --pg-type vector (wall clock), then PGlite's
               COPY ... FROM '/dev/blob' (FORMAT binary) of that stream
  (2) floor:   the COPY alone, of the same stream already on disk
  (3) typical: per body json.loads, base64.b64decode and numpy.frombuffer (openai-python's
               decoding), pgvector's text form "[x,y,...]" a line (what pgvector-node's bulk
               example and most loaders write), then COPY ... (FORMAT text)
Each COPY's time is PGlite's own (the driver times db.query); the table is truncated between
runs. Needs node and `npm ci` in tests/pglite (scripts/test-python.sh does it).
"""
import argparse
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from pg_ingest import cpu_model, make_bodies  # noqa: E402

DRIVER = os.path.join(HERE, "..", "tests", "pglite", "pglite_copy.mjs")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--embd", default=os.path.join(HERE, "..", "build", "release", "embd"))
    ap.add_argument("--vectors", type=int, default=10000)
    ap.add_argument("--dims", type=int, default=1536)
    ap.add_argument("--per-body", type=int, default=100)
    args = ap.parse_args()
    node = shutil.which("node")
    if not node or not os.path.isdir(os.path.join(HERE, "..", "tests", "pglite", "node_modules", "@electric-sql")):
        sys.exit("pglite_ingest: needs node and `npm ci` in tests/pglite")
    print("CPU: %s; %d x %d float32 as OpenAI base64 bodies of %d; pgvector in PGlite 0.5.14" % (
        cpu_model(), args.vectors, args.dims, args.per_body))
    work = tempfile.mkdtemp(prefix="embd-pglite-bench-")
    try:
        bodies = make_bodies(work, args.vectors, args.dims, args.per_body)
        stream = os.path.join(work, "stream.bin")
        t0 = time.perf_counter()
        with open(stream, "wb") as f:
            subprocess.run([args.embd, "openai"] + bodies + ["--to", "pgcopy", "--pg-type", "vector"],
                           stdout=f, check=True)
        t_embd = time.perf_counter() - t0
        t0 = time.perf_counter()
        lines = []
        for p in bodies:
            with open(p, "rb") as f:
                for d in json.load(f)["data"]:
                    v = np.frombuffer(base64.b64decode(d["embedding"]), dtype="float32")
                    lines.append("[" + ",".join(map(repr, v.tolist())) + "]")
        text = os.path.join(work, "text.tsv")
        with open(text, "w") as f:
            f.write("\n".join(lines) + "\n")
        t_py = time.perf_counter() - t0
        steps = [{"sql": "CREATE TABLE items (embedding vector(%d))" % args.dims}]
        for _ in range(2):
            steps += [{"copy": "items (embedding)", "file": stream}, {"sql": "TRUNCATE items"},
                      {"copy": "items (embedding)", "file": text, "format": "text"},
                      {"query": "SELECT count(*) FROM items"}, {"sql": "TRUNCATE items"}]
        with open(os.path.join(work, "steps.json"), "w") as f:
            json.dump(steps, f)
        subprocess.run([node, DRIVER, os.path.join(work, "steps.json"), os.path.join(work, "out.json")],
                       check=True)
        with open(os.path.join(work, "out.json")) as f:
            res = json.load(f)
        bad = [r for r in res if not r["ok"]]
        if bad:
            sys.exit("pglite_ingest: %s" % bad[0])
        copies = [r["ms"] / 1e3 for r in res if "ms" in r]
        t_bin = min(copies[0::2])
        t_text = min(copies[1::2])
        counts = [int(r["rows"][0][0]) for r in res if r.get("rows")]
        assert all(c == args.vectors for c in counts), counts
        one = t_embd + t_bin
        typical = t_py + t_text
        n = args.vectors
        print("(1) embd openai --to pgcopy --pg-type vector + PGlite COPY binary: %7.2f s %8.1f us/vector "
              "(embd %.2f s, COPY %.2f s)" % (one, one / n * 1e6, t_embd, t_bin))
        print("(2) PGlite COPY binary of the stream on disk                   : %7.2f s %8.1f us/vector"
              % (t_bin, t_bin / n * 1e6))
        print("(3) json+base64+numpy, text '[...]' lines, PGlite COPY text     : %7.2f s %8.1f us/vector "
              "(Python %.2f s, COPY %.2f s)" % (typical, typical / n * 1e6, t_py, t_text))
        print("(1)/(2) = %.3fx (target <= 1.15x: %s)" % (one / t_bin, "met" if one / t_bin <= 1.15 else "NOT met"))
        print("(3)/(1) = %.1fx (target >= 3x: %s)" % (typical / one, "met" if typical / one >= 3 else "NOT met"))
        print("stream %d bytes (%d a row), text %d bytes" % (os.path.getsize(stream),
              (os.path.getsize(stream) - 21) // n, os.path.getsize(text)))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
