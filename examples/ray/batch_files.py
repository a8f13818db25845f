"""Batch output files (OpenAI Batch API, Azure, Together, vLLM run_batch) decoded by embd
inside Ray Data, written as Parquet:

    python examples/ray/batch_files.py INPUT... OUTPUT_DIR [--num-cpus 2] [--dtype f32]

- ray.data.read_text reads the lines; map_batches(batch_format="pyarrow") hands them to embd
  as Arrow string columns, read in place (embd.decode_openai_batch_lines_arrow: libembd's
  strict batch-line reader, the GIL released while a line decodes), the vectors leaving as
  Arrow without a copy; write_parquet writes custom_id (string), index (int32), embedding
  (list<float>);
- OUTPUT_DIR/_failed: one JSON line per request that failed in every file given, as
  `embd openai --failed` writes them (custom_id, line, file, status_code, code, message);
  a request that succeeded in another file (a retry batch) is not failed; a custom_id whose
  vectors come twice is an error (exit 1). Exit 5 when requests stay failed.

Failures travel to a small named actor (made by the first task that has any); a task that
Ray retries reports its failures again, and
the driver keeps one per (file, custom_id), so every failure is counted once; the rows of a
failed attempt never reach the output (its write is part of the same task and is redone).
read_text drops empty lines and does not number lines, so the line of a failed request is
found afterwards by a scan of the files that had failures (for the custom_id's JSON text,
confirmed by json.loads of that line).

Offline: ray.init(num_cpus=N, include_dashboard=False), RAY_USAGE_STATS_ENABLED=0, the
node on 127.0.0.1. EMBD_EXAMPLE_FAIL_FIRST_ATTEMPT=<marker path> makes the first task that
finds no marker file create it and fail after producing its rows (the suite's retry test).
"""
import argparse
import json
import os
import sys


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("paths", nargs="+", help="INPUT... OUTPUT_DIR")
    p.add_argument("--num-cpus", type=int, default=2)
    p.add_argument("--dtype", default="f32")
    p.add_argument("--byte-order", default="little")
    a = p.parse_args(argv)
    if len(a.paths) < 2:
        p.error("give at least one INPUT and the OUTPUT_DIR")
    a.inputs, a.output = a.paths[:-1], a.paths[-1]
    return a


def init(num_cpus=2):
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no usage report attempts
    import ray
    if not ray.is_initialized():
        ray.init(num_cpus=num_cpus, include_dashboard=False, _node_ip_address="127.0.0.1",
                 log_to_driver=False, configure_logging=False)
    import ray.data
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    return ray


def _line_numbers(path, ids):
    """{custom_id: 1-based line} for the ids in path (a scan for each id's JSON text)."""
    want = {json.dumps(c, ensure_ascii=False).encode(): c for c in ids}
    want.update({json.dumps(c).encode(): c for c in ids})
    found = {}
    with open(path, "rb") as f:
        for no, line in enumerate(f, 1):
            for key, cid in want.items():
                if cid not in found and key in line:
                    try:
                        if json.loads(line).get("custom_id") == cid:
                            found[cid] = no
                    except ValueError:
                        pass
            if len(found) == len(ids):
                break
    return found


def run(inputs, output, dtype="f32", byte_order="little", num_cpus=2, sink="parquet"):
    """The job; returns (rows written, failed list). Raises SystemExit on a duplicate.
    sink="noop" (benchmarks): the rows are consumed and dropped, nothing is written or
    checked, (None, None) is returned."""
    if sink != "noop" and os.path.isdir(output) and os.listdir(output):
        raise SystemExit("embd: %s exists and is not empty (write_parquet would add to it)" % output)
    ray = init(num_cpus)
    import pyarrow as pa
    import pyarrow.parquet as pq

    @ray.remote(num_cpus=0)
    class Failures:
        def __init__(self):
            self.seen = {}

        def add(self, items):
            for f in items:
                self.seen[(f["file"], f["custom_id"])] = f

        def all(self):
            return list(self.seen.values())

    # made by the first task that has failures (a named actor; a job without failures
    # starts no extra worker process)
    import uuid
    sink_name = "embd-failures-" + uuid.uuid4().hex
    marker = os.environ.get("EMBD_EXAMPLE_FAIL_FIRST_ATTEMPT")
    schema = pa.schema([("custom_id", pa.string()), ("index", pa.int32()), ("embedding", pa.list_(pa.float32()))])

    def decode(table):
        import numpy as np
        import embd
        paths = table.column("path").to_pylist()
        lines = table.column("text")
        out, fails = [], []
        start = 0
        while start < len(paths):  # runs of one file
            end = start
            while end < len(paths) and paths[end] == paths[start]:
                end += 1
            rb, failed = embd.decode_openai_batch_lines_arrow(lines.slice(start, end - start), dtype=dtype,
                                                              byte_order=byte_order)
            for f in failed:
                f.pop("pos")
                f["file"] = paths[start]
                fails.append(f)
            if rb.num_rows:
                d = rb.schema.field("embedding").type.list_size
                offs = pa.array(np.arange(0, (rb.num_rows + 1) * d, d, dtype=np.int32))
                emb = pa.ListArray.from_arrays(offs, rb.column("embedding").values)  # values not copied
                out.append(pa.RecordBatch.from_arrays([rb.column("custom_id"), rb.column("index"), emb],
                                                      schema=schema))
            start = end
        if fails:
            # detached: it outlives the task that made it (killed by the driver at the end)
            actor = Failures.options(name=sink_name, get_if_exists=True, lifetime="detached").remote()
            ray.get(actor.add.remote(fails))
        yield pa.Table.from_batches(out, schema=schema)
        if marker and not os.path.exists(marker):
            open(marker, "w").close()
            raise RuntimeError("EMBD_EXAMPLE_FAIL_FIRST_ATTEMPT: this attempt fails after its rows")

    ds = ray.data.read_text(list(inputs), include_paths=True)
    ds = ds.map_batches(decode, batch_format="pyarrow", batch_size=None, zero_copy_batch=True,
                        ray_remote_args_fn=lambda: {"max_retries": 3, "retry_exceptions": True})
    if sink == "noop":
        for _ in ds.iter_batches(batch_size=None, batch_format="pyarrow"):
            pass
        try:
            ray.kill(ray.get_actor(sink_name))
        except ValueError:
            pass
        return None, None
    ds.write_parquet(output)

    t = pq.read_table(output, columns=["custom_id", "index"], schema=None)
    counts = t.group_by(["custom_id", "index"]).aggregate([([], "count_all")])
    dup = counts.filter(pa.compute.greater(counts.column("count_all"), 1))
    if dup.num_rows:
        raise SystemExit("embd: custom_id %r yields vectors twice" % dup.column("custom_id")[0].as_py())
    ok = set(pa.compute.unique(t.column("custom_id")).to_pylist())
    given = {os.path.abspath(p): p for p in inputs}
    order = {os.path.abspath(p): i for i, p in enumerate(inputs)}
    byfile = {}
    try:
        actor = ray.get_actor(sink_name)
    except ValueError:
        actor = None
    reported = ray.get(actor.all.remote()) if actor is not None else []
    if actor is not None:
        ray.kill(actor)
    for f in reported:
        if f["custom_id"] not in ok:
            byfile.setdefault(os.path.abspath(f["file"]), []).append(f)
    failed, seen = [], set()
    for path in sorted(byfile, key=lambda p: order.get(p, 0)):
        lines = _line_numbers(path, [f["custom_id"] for f in byfile[path]])
        for f in sorted(byfile[path], key=lambda f: lines.get(f["custom_id"], 0)):
            if f["custom_id"] in seen:
                continue  # failed in two files: one line, the first
            seen.add(f["custom_id"])
            failed.append(dict(custom_id=f["custom_id"], line=lines.get(f["custom_id"]),
                               file=given.get(path, path), status_code=f["status_code"], code=f["code"],
                               message=f["message"]))
    os.makedirs(output, exist_ok=True)
    with open(os.path.join(output, "_failed"), "w", encoding="utf-8") as fo:
        for d in failed:
            fo.write(json.dumps(d, ensure_ascii=False) + "\n")
    return t.num_rows, failed


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    n, failed = run(a.inputs, a.output, a.dtype, a.byte_order, a.num_cpus)
    print("embd: %d rows -> %s (Parquet), %d failed -> %s" % (n, a.output, len(failed),
                                                             os.path.join(a.output, "_failed")))
    if failed:
        print("embd: %d requests failed, the first: %s" % (len(failed), ", ".join(
            "%s (%s)" % (d["custom_id"], d["code"] or d["status_code"]) for d in failed[:3])), file=sys.stderr)
        return 5
    return 0


if __name__ == "__main__":
    sys.exit(main())
