"""Batch output files (OpenAI Batch API, Azure, Together, vLLM run_batch) decoded by embd
inside Spark, written as Parquet:

    python examples/spark/batch_files.py INPUT... OUTPUT_DIR [--master local[2]] [--dtype f32]

- the files are read with spark.read.text (split and spread over the executors as Spark
  does for any text);
- each partition's lines reach embd in Arrow batches (mapInArrow), are read in place from the
  Arrow column (embd.decode_openai_batch_lines_arrow: libembd's strict batch-line reader, the
  GIL released while a line decodes) and leave as Arrow without a copy of the vectors;
- OUTPUT_DIR holds Parquet with custom_id (string), index (int), embedding (array<float>),
  and OUTPUT_DIR/_failed one JSON line per request that failed in every file given, as
  `embd openai --failed` writes them: custom_id, line (1-based), file, status_code (or null),
  code, message. A request that fails in one file and succeeds in another (a retry batch)
  is not failed; a custom_id whose vectors come twice is an error (exit 1), as in the CLI.

Every row lands once even when Spark retries a task: the Parquet files of a failed attempt
are discarded by Spark's commit protocol, and the failures travel in an accumulator, whose
updates Spark applies once per successful task. A task's line numbers come from its split
(input_file_block_start) and the per-split line counts that the same accumulator carries,
so no file is read twice. Exit status: 0, 5 when requests stay failed (after writing every
other row), 1 on an error.

EMBD_EXAMPLE_FAIL_FIRST_ATTEMPT=1 makes the first attempt of partition 0 fail after it has
produced its rows (the suite's retry test; give the master retries: local[2,2]).
"""
import argparse
import json
import os
import sys


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("paths", nargs="+", help="INPUT... OUTPUT_DIR")
    p.add_argument("--master", default=os.environ.get("EMBD_SPARK_MASTER", "local[2]"))
    p.add_argument("--dtype", default="f32")
    p.add_argument("--byte-order", default="little")
    a = p.parse_args(argv)
    if len(a.paths) < 2:
        p.error("give at least one INPUT and the OUTPUT_DIR")
    a.inputs, a.output = a.paths[:-1], a.paths[-1]
    return a


def session(master, app="embd-batch-files"):
    from pyspark.sql import SparkSession
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # nothing leaves the machine
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    return (SparkSession.builder.master(master).appName(app)
            .config("spark.ui.enabled", "false")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.sql.shuffle.partitions", "4")
            .config("spark.sql.execution.arrow.pyspark.enabled", "true")
            .getOrCreate())


def _list_acc():
    from pyspark.accumulators import AccumulatorParam

    class ListParam(AccumulatorParam):
        def zero(self, value):
            return []

        def addInPlace(self, a, b):
            a.extend(b)
            return a
    return ListParam()


def run(spark, inputs, output, dtype="f32", byte_order="little", sink="parquet"):
    """The job; returns (rows written, failed list). Raises on a duplicate custom_id.
    sink="noop" (benchmarks): the rows go to Spark's noop sink, nothing is read back or
    checked, (None, None) is returned."""
    import pyarrow as pa
    from pyspark.sql import functions as F
    from pyspark.sql.types import ArrayType, FloatType, IntegerType, StringType, StructField, StructType

    out_schema = StructType([StructField("custom_id", StringType()), StructField("index", IntegerType()),
                             StructField("embedding", ArrayType(FloatType(), containsNull=True))])
    side = spark.sparkContext.accumulator([], _list_acc())
    fail_first = os.environ.get("EMBD_EXAMPLE_FAIL_FIRST_ATTEMPT") == "1"

    def decode(batches):
        import numpy as np
        import embd
        from pyspark import TaskContext
        ctx = TaskContext.get()
        notes, counts = [], {}
        for b in batches:
            files, blocks = b.column("file"), b.column("block")
            # rows arrive in split order; group the batch into runs of one (file, split)
            fs, bs = files.to_pylist(), blocks.to_pylist()
            start = 0
            while start < len(fs):
                end = start
                while end < len(fs) and fs[end] == fs[start] and bs[end] == bs[start]:
                    end += 1
                key = (fs[start], bs[start])
                base = counts.get(key, 0)
                rb, failed = embd.decode_openai_batch_lines_arrow(b.column("value").slice(start, end - start),
                                                                  dtype=dtype, byte_order=byte_order)
                counts[key] = base + (end - start)
                for f in failed:
                    notes.append(("fail", key[0], key[1], base + f.pop("pos"), f))
                if rb.num_rows:
                    d = rb.schema.field("embedding").type.list_size
                    # array<float> is Arrow's list<float>: the same values buffer under
                    # offsets 0, d, 2d, ... (only the offsets are new)
                    offs = pa.array(np.arange(0, (rb.num_rows + 1) * d, d, dtype=np.int32))
                    emb = pa.ListArray.from_arrays(offs, rb.column("embedding").values)
                    yield pa.RecordBatch.from_arrays([rb.column("custom_id"), rb.column("index"), emb],
                                                     schema=pa.schema([("custom_id", pa.string()),
                                                                       ("index", pa.int32()),
                                                                       ("embedding", pa.list_(pa.float32()))]))
                start = end
        if fail_first and ctx is not None and ctx.partitionId() == 0 and ctx.attemptNumber() == 0:
            raise RuntimeError("EMBD_EXAMPLE_FAIL_FIRST_ATTEMPT: the first attempt of partition 0 fails")
        for (f, blk), n in counts.items():
            notes.append(("count", f, blk, n, None))
        side.add(notes)

    df = (spark.read.text(list(inputs))
          .select("value", F.input_file_name().alias("file"), F.input_file_block_start().alias("block")))
    rows = df.mapInArrow(decode, out_schema)
    if sink == "noop":
        rows.write.format("noop").mode("overwrite").save()
        return None, None
    rows.write.mode("overwrite").parquet(output)

    # line numbers: a failure's position in its split plus the lines of the file's earlier
    # splits; retried attempts sent nothing (accumulators count successful tasks only), and
    # the set below would absorb a repeat anyway
    notes = side.value
    counts, fails = {}, {}
    for kind, f, blk, n, info in notes:
        if kind == "count":
            counts[(f, blk)] = n
        else:
            fails[(f, blk, n)] = info
    given = {}
    for p in inputs:
        given[os.path.abspath(p)] = p
    from urllib.parse import unquote, urlparse

    def name(uri):
        path = unquote(urlparse(uri).path) if uri.startswith("file:") else uri
        return given.get(os.path.abspath(path), path)

    order = {os.path.abspath(p): i for i, p in enumerate(inputs)}
    failed = []
    for (f, blk, pos), info in fails.items():
        line = 1 + pos + sum(n for (f2, b2), n in counts.items() if f2 == f and b2 < blk)
        failed.append(dict(custom_id=info["custom_id"], line=line, file=name(f),
                           status_code=info["status_code"], code=info["code"], message=info["message"]))
    failed.sort(key=lambda d: (order.get(os.path.abspath(d["file"]), 0), d["line"]))

    written = spark.read.parquet(output)
    dup = (written.groupBy("custom_id", "index").count().where("count > 1").limit(5).collect())
    if dup:
        raise SystemExit("embd: custom_id %r yields vectors twice (%d rows of index %d)"
                         % (dup[0]["custom_id"], dup[0]["count"], dup[0]["index"]))
    if failed:
        ids = sorted({d["custom_id"] for d in failed})
        ok = {r["custom_id"] for r in written.where(F.col("custom_id").isin(ids)).select("custom_id")
              .distinct().collect()}
        keep, seen = [], set()
        for d in failed:  # a retry that succeeded elsewhere is not failed; one line per request
            if d["custom_id"] in ok or d["custom_id"] in seen:
                continue
            seen.add(d["custom_id"])
            keep.append(d)
        failed = keep
    os.makedirs(output, exist_ok=True)
    with open(os.path.join(output, "_failed"), "w", encoding="utf-8") as fo:
        for d in failed:
            fo.write(json.dumps(d, ensure_ascii=False) + "\n")
    return written.count(), failed


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    spark = session(a.master)
    try:
        n, failed = run(spark, a.inputs, a.output, a.dtype, a.byte_order)
    finally:
        spark.stop()
    print("embd: %d rows -> %s (Parquet), %d failed -> %s" % (n, a.output, len(failed),
                                                             os.path.join(a.output, "_failed")))
    if failed:
        print("embd: %d requests failed, the first: %s" % (len(failed), ", ".join(
            "%s (%s)" % (d["custom_id"], d["code"] or d["status_code"]) for d in failed[:3])), file=sys.stderr)
        return 5
    return 0


if __name__ == "__main__":
    sys.exit(main())
