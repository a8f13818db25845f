"""Spark and Ray Data speed with embd (issue 39), not a test: run by hand, on a quiet
machine if you have one, with the venv of scripts/test-python.sh (engines from
python/requirements-engines.lock):

    python bench/engines_bench.py [--vectors 50000] [--dims 1536] [--per-request 100]
                                  [--engines spark,ray] [--repeat 3]

N x dims float32 vectors as base64 batch output files (4 files, per-request vectors a line),
then for each engine, the job of examples/<engine>/batch_files.py (embd in mapInArrow /
map_batches(pyarrow) -> Parquet) against the same job with the loop users write
(json.loads + base64.b64decode + np.frombuffer per line in a pandas UDF: mapInPandas /
map_batches(pandas)), both with 2 cores, and the embd job with 1 core against 2. Each job's
wall time is measured from submission to the Parquet written (session start excluded),
medians of --repeat runs interleaved; ratios printed with the CPU and the load.
Targets: embd >= 10x the loop; 2 cores >= 1.7x 1 core.
"""
import argparse
import base64
import importlib.util
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from benchutil import cpu_model

ROOT = Path(__file__).resolve().parents[1]


def load(name):
    spec = importlib.util.spec_from_file_location("embd_%s_example" % name,
                                                  ROOT / "examples" / name / "batch_files.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod




def make_files(d, n, dims, per):
    rng = np.random.default_rng(0)
    paths = [os.path.join(d, "out-%d.jsonl" % i) for i in range(4)]
    fs = [open(p, "w") for p in paths]
    k = 0
    while k * per < n:
        m = min(per, n - k * per)
        v = rng.standard_normal((m, dims)).astype(np.float32)
        body = {"object": "list", "data": [{"object": "embedding", "index": i,
                                            "embedding": base64.b64encode(v[i].tobytes()).decode()} for i in range(m)]}
        fs[k % 4].write(json.dumps({"id": "b", "custom_id": "req-%d" % k,
                                    "response": {"status_code": 200, "body": body}, "error": None}) + "\n")
        k += 1
    for f in fs:
        f.close()
    return paths


def loop_rows(lines):
    """The loop users write: per line json.loads, per vector b64decode + frombuffer."""
    ids, idx, emb = [], [], []
    for line in lines:
        if not line.strip():
            continue
        o = json.loads(line)
        if o.get("error") or not o.get("response") or o["response"]["status_code"] >= 300:
            continue
        for item in o["response"]["body"]["data"]:
            ids.append(o["custom_id"])
            idx.append(item["index"])
            emb.append(np.frombuffer(base64.b64decode(item["embedding"]), np.float32))
    return ids, idx, emb


def spark_jobs(mod, master, paths, out, sink="parquet"):
    from pyspark.sql.types import ArrayType, FloatType, IntegerType, StringType, StructField, StructType
    spark = mod.session(master, app="embd-bench")
    spark.sparkContext.setLogLevel("ERROR")
    schema = StructType([StructField("custom_id", StringType()), StructField("index", IntegerType()),
                         StructField("embedding", ArrayType(FloatType()))])

    def loop(it):
        import pandas as pd
        for pdf in it:
            ids, idx, emb = loop_rows(pdf["value"])
            yield pd.DataFrame({"custom_id": ids, "index": np.array(idx, np.int32), "embedding": emb})

    def embd_job(o):
        mod.run(spark, paths, o, sink=sink)

    def loop_job(o):
        w = spark.read.text(paths).mapInPandas(loop, schema).write.mode("overwrite")
        w.format("noop").save() if sink == "noop" else w.parquet(o)
    return spark, embd_job, loop_job


def ray_jobs(mod, num_cpus, paths, sink="parquet"):
    ray = mod.init(num_cpus)
    import ray.data

    def loop(pdf):
        import pandas as pd
        ids, idx, emb = loop_rows(pdf["text"])
        return pd.DataFrame({"custom_id": ids, "index": np.array(idx, np.int32), "embedding": emb})

    def embd_job(o):
        mod.run(paths, o, num_cpus=num_cpus, sink=sink)

    def loop_job(o):
        ds = ray.data.read_text(paths).map_batches(loop, batch_format="pandas", batch_size=None)
        if sink == "noop":
            for _ in ds.iter_batches(batch_size=None, batch_format="pyarrow"):
                pass
        else:
            ds.write_parquet(o)
    return ray, embd_job, loop_job


def timed(job, out):
    shutil.rmtree(out, ignore_errors=True)
    t = time.perf_counter()
    job(out)
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vectors", type=int, default=50000)
    ap.add_argument("--dims", type=int, default=1536)
    ap.add_argument("--per-request", type=int, default=100)
    ap.add_argument("--engines", default="spark,ray")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sink", default="parquet", choices=["parquet", "noop"],
                    help="noop: the rows are dropped instead of written (the decode and the "
                         "engine's transfer alone; the examples then skip their checks)")
    a = ap.parse_args()
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    d = tempfile.mkdtemp(prefix="embd-engines-bench-")
    try:
        paths = make_files(d, a.vectors, a.dims, a.per_request)
        size = sum(os.path.getsize(p) for p in paths)
        print("CPU: %s, %d cores; load average at start %s" % (cpu_model(), os.cpu_count(), os.getloadavg()))
        print("%d x %d float32 in %d requests of %d, base64 batch files %.0f MB; medians of %d; sink %s" % (
            a.vectors, a.dims, -(-a.vectors // a.per_request), a.per_request, size / 1e6, a.repeat, a.sink))
        out = os.path.join(d, "out")
        for eng in a.engines.split(","):
            mod = load(eng)
            t2, tl, t1 = [], [], []
            if eng == "spark":
                spark, ej, lj = spark_jobs(mod, "local[2]", paths, out, a.sink)
                ej(out)  # warm-up (workers started, classes loaded)
                for _ in range(a.repeat):
                    t2.append(timed(ej, out))
                    tl.append(timed(lj, out))
                spark.stop()
                spark, ej, _ = spark_jobs(mod, "local[1]", paths, out, a.sink)
                ej(out)
                for _ in range(a.repeat):
                    t1.append(timed(ej, out))
                spark.stop()
            else:
                ray, ej, lj = ray_jobs(mod, 2, paths, a.sink)
                ej(out + "-w")
                for _ in range(a.repeat):
                    t2.append(timed(ej, out))
                    tl.append(timed(lj, out))
                ray.shutdown()
                ray, ej, _ = ray_jobs(mod, 1, paths, a.sink)
                ej(out + "-w1")
                for _ in range(a.repeat):
                    t1.append(timed(ej, out))
                ray.shutdown()
            m2, ml, m1 = statistics.median(t2), statistics.median(tl), statistics.median(t1)
            print("%s: embd 2 cores %.2f s, the json+b64decode+frombuffer loop 2 cores %.2f s, embd 1 core %.2f s"
                  % (eng, m2, ml, m1))
            print("%s: loop / embd = %.1fx (target >= 10x: %s); 1 core / 2 cores = %.2fx (target >= 1.7x: %s)"
                  % (eng, ml / m2, "holds" if ml / m2 >= 10 else "MISSED", m1 / m2,
                     "holds" if m1 / m2 >= 1.7 else "MISSED"))
            print("load average now %s" % (os.getloadavg(),))
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
