#!/usr/bin/python3
"""How fast OpenAI embeddings get into PostgreSQL: embd's pipe against the server's floor and
against what most users write (issue 33). Not a test: it prints times and ratios.

    bench/pg_ingest.py [--embd build/release/embd] [--vectors 100000] [--dims 1536]
                       [--per-body 100] [--text-vectors 5000] [--repeat 2]

Starts a private PostgreSQL 15 cluster (tests/pg/pgharness.py: a temporary directory, unix
socket, fsync off), writes --vectors float32 vectors of --dims as OpenAI /v1/embeddings
response bodies with base64 embeddings (--per-body vectors a body, as a batching client
gets them) and loads them into `CREATE TABLE items (embedding real[])`, timing:
  (1) embd:   embd openai BODIES... --to pgcopy --pg-type float4[] | psql -c "COPY items
              (embedding) FROM STDIN (FORMAT binary)"   (the whole pipe, wall clock)
  (2) floor:  psql -c "COPY ... (FORMAT binary)" < the same stream already on disk (what the
              server itself costs: the most any client can hope for)
  (3) typical: psycopg 3, one process: per body json.loads, base64.b64decode and
              numpy.frombuffer per embedding (openai-python's decoding), then text COPY
              (cursor.copy + write_row(vector.tolist())); on the first --text-vectors
              vectors only (it is slow), compared per vector
The table is truncated before each run; (2) and (1) alternate, each the best of --repeat runs.
Also: the stream's bytes per row for each --pg-type. Targets: (1) within 1.15x of (2), and at
least 3x faster than (3). Prints the CPU model first. Needs postgresql-15 and
python3-psycopg (scripts/install-deps.sh) and numpy.
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

from benchutil import cpu_model

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "pg"))
from pgharness import Cluster, require_pg  # noqa: E402

COPY_BIN = "COPY items (embedding) FROM STDIN (FORMAT binary)"




def make_bodies(d, n, dims, per_body, seed=33):
    rng = np.random.default_rng(seed)
    paths = []
    for b in range(0, n, per_body):
        k = min(per_body, n - b)
        v = rng.normal(0, 0.03, (k, dims)).astype("<f4")
        items = [{"object": "embedding", "index": i, "embedding": base64.b64encode(v[i].tobytes()).decode()}
                 for i in range(k)]
        body = {"object": "list", "data": items, "model": "text-embedding-3-small",
                "usage": {"prompt_tokens": 8 * k, "total_tokens": 8 * k}}
        p = os.path.join(d, "body%05d.json" % (b // per_body))
        with open(p, "w") as f:
            json.dump(body, f)
        paths.append(p)
    return paths


def count(c):
    return int(c.psql("SELECT count(*) FROM items").stdout)


def run_pipe(c, embd, bodies):
    c.psql("TRUNCATE items")
    t = time.perf_counter()
    p1 = subprocess.Popen([embd, "openai", "--to", "pgcopy", "--pg-type", "float4[]"] + bodies,
                          stdout=subprocess.PIPE, env=dict(os.environ, EMBD_NO_PROGRESS="1"))
    p2 = subprocess.Popen(c.psql_args(COPY_BIN), stdin=p1.stdout, stdout=subprocess.DEVNULL)
    p1.stdout.close()
    r2, r1 = p2.wait(), p1.wait()
    dt = time.perf_counter() - t
    if r1 or r2:
        raise SystemExit("the pipe failed: embd %d, psql %d" % (r1, r2))
    return dt


def run_file(c, path):
    c.psql("TRUNCATE items")
    t = time.perf_counter()
    with open(path, "rb") as f:
        subprocess.run(c.psql_args(COPY_BIN), stdin=f, stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t


TYPICAL = r'''
import base64, json, sys, time
import numpy as np
import psycopg
host, limit, paths = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
t = time.perf_counter()
done = 0
with psycopg.connect(host=host, user="postgres", dbname="postgres") as conn:
    with conn.cursor() as cur:
        with cur.copy("COPY items (embedding) FROM STDIN") as copy:
            for p in paths:
                with open(p) as f:
                    r = json.load(f)
                for item in sorted(r["data"], key=lambda x: x["index"]):
                    v = np.frombuffer(base64.b64decode(item["embedding"]), dtype="float32")
                    copy.write_row((v.tolist(),))
                    done += 1
                    if done == limit:
                        break
                if done == limit:
                    break
print(done, time.perf_counter() - t)
'''


def run_typical(c, bodies, limit):
    c.psql("TRUNCATE items")
    r = subprocess.run([sys.executable, "-c", TYPICAL, c.dir, str(limit)] + bodies,
                       stdout=subprocess.PIPE, check=True)
    done, secs = r.stdout.split()
    return int(done), float(secs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--embd", default=os.path.join(HERE, "..", "build", "release", "embd"))
    ap.add_argument("--vectors", type=int, default=100000)
    ap.add_argument("--dims", type=int, default=1536)
    ap.add_argument("--per-body", type=int, default=100)
    ap.add_argument("--text-vectors", type=int, default=5000)
    ap.add_argument("--repeat", type=int, default=2)
    a = ap.parse_args()
    embd = os.path.abspath(a.embd)
    if not os.access(embd, os.X_OK):
        raise SystemExit("no embd at %s (build it, or --embd PATH)" % embd)
    require_pg("the benchmark")
    try:
        import psycopg  # noqa: F401
    except ImportError:
        raise SystemExit("python3-psycopg is needed for (3) (scripts/install-deps.sh)")
    print("cpu: %s (%d cores online)" % (cpu_model(), os.cpu_count() or 0))
    print("embd: %s" % subprocess.run([embd, "--version"], capture_output=True, text=True).stdout.strip())
    work = tempfile.mkdtemp(prefix="embd-pg-bench-")
    c = Cluster()
    try:
        t = time.perf_counter()
        bodies = make_bodies(work, a.vectors, a.dims, a.per_body)
        size = sum(os.path.getsize(p) for p in bodies)
        print("data: %d vectors x %d dims float32 as %d OpenAI base64 bodies of %d vectors, %.1f MB of JSON "
              "(made in %.1f s)" % (a.vectors, a.dims, len(bodies), a.per_body, size / 1e6, time.perf_counter() - t))
        c.start()
        c.psql("CREATE TABLE items (embedding real[])")
        stream = os.path.join(work, "items.pgcopy")
        subprocess.run([embd, "openai", "--to", "pgcopy", "--pg-type", "float4[]", "-o", stream] + bodies,
                       check=True)
        ssize = os.path.getsize(stream)
        floors, pipes = [], []
        for _ in range(a.repeat):  # alternated: (2) first, the table's files warm
            floors.append(run_file(c, stream))
            assert count(c) == a.vectors
            pipes.append(run_pipe(c, embd, bodies))
            assert count(c) == a.vectors
        floor, pipe = min(floors), min(pipes)
        n3, typical = run_typical(c, bodies, min(a.text_vectors, a.vectors))
        assert count(c) == n3
        per = lambda secs, n: secs / n * 1e6  # noqa: E731
        print("float4[] (real[]) column, %d vectors:" % a.vectors)
        print("  (1) embd openai --to pgcopy | psql COPY binary : %7.2f s  %7.1f us/vector  %6.0f MB/s of JSON"
              % (pipe, per(pipe, a.vectors), size / pipe / 1e6))
        print("  (2) psql COPY binary < the stream on disk     : %7.2f s  %7.1f us/vector  (%.1f MB stream)"
              % (floor, per(floor, a.vectors), ssize / 1e6))
        print("  (3) psycopg 3 text COPY, json+base64+numpy     : %7.2f s  %7.1f us/vector  (on %d vectors)"
              % (typical, per(typical, n3), n3))
        r12 = pipe / floor
        r31 = per(typical, n3) / per(pipe, a.vectors)
        print("  (1)/(2) = %.3fx (target <= 1.15x: %s)" % (r12, "met" if r12 <= 1.15 else "NOT met"))
        print("  (3)/(1) = %.1fx per vector (target >= 3x: %s)" % (r31, "met" if r31 >= 3 else "NOT met"))
        print("bytes per row of the COPY stream (%d dims, no id; header 19 and trailer 2 aside):" % a.dims)
        for typ in ("vector", "halfvec", "sparsevec", "bit", "float4[]", "bytea"):
            r = subprocess.run([embd, "openai", "--to", "pgcopy", "--pg-type", typ, bodies[0]],
                               stdout=subprocess.PIPE, check=True)
            k = min(a.per_body, a.vectors)
            print("  %-9s %7d" % (typ, (len(r.stdout) - 21) // k))
    finally:
        c.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
