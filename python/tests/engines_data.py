"""Batch output files for the engines' tests (test_engines_spark.py, test_engines_ray.py):
written here from numpy arrays, and the checks of an engine's Parquet output against the
one-process decode (embd.decode_openai_batch) bit for bit and of its _failed file."""
import base64
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import embd

D = 64


def ok_line(cid, v):
    body = {"object": "list", "data": [{"index": i, "embedding": base64.b64encode(v[i].astype("<f4").tobytes()).decode()}
                                       for i in reversed(range(len(v)))]}
    return json.dumps({"id": "b", "custom_id": cid, "response": {"status_code": 200, "body": body},
                       "error": None}, ensure_ascii=False) + "\n"


def fail_line(cid, status):
    if status is None:
        return json.dumps({"id": "b", "custom_id": cid, "response": None,
                           "error": {"code": "batch_expired", "message": "expired"}}) + "\n"
    return json.dumps({"id": "b", "custom_id": cid, "response": {"status_code": status, "body": {
        "error": {"message": "too long", "type": "invalid_request_error", "code": "context_length_exceeded"}}},
        "error": None}) + "\n"


def write_files(tmp_path, n=300):
    """Two output files and a retry file; a few failures, one retried successfully."""
    rng = np.random.default_rng(9)
    a, b, r = [], [], []
    for k in range(n):
        cid = "req-%d ✓\t%d" % (k, k % 7)
        if k == 10:
            a.append(fail_line(cid, None))
        elif k == 20:
            a.append(fail_line(cid, 400))
            r.append(ok_line(cid, rng.standard_normal((2, D)).astype(np.float32)))
        elif k == 250:
            b.append(fail_line(cid, 429))
        else:
            (a if k < n // 2 else b).append(ok_line(cid, rng.standard_normal((1 + k % 3, D)).astype(np.float32)))
        if k == 100:
            a.append("\n")  # an empty line between requests
    paths = []
    for name, lines in (("out-a.jsonl", a), ("out-b.jsonl", b), ("retry.jsonl", r)):
        p = tmp_path / name
        p.write_text("".join(lines), encoding="utf-8")
        paths.append(str(p))
    return paths


def expected(paths):
    r = embd.decode_openai_batch(paths)
    key = sorted(range(len(r.custom_ids)), key=lambda i: (r.custom_ids[i], int(r.index[i])))
    return ([r.custom_ids[i] for i in key], [int(r.index[i]) for i in key], r.vectors[key], r.failed)


def read_parquet(out):
    t = pq.read_table(out).sort_by([("custom_id", "ascending"), ("index", "ascending")])
    v = np.array(t.column("embedding").combine_chunks().values.to_numpy(zero_copy_only=False), np.float32)
    return t, v.reshape(t.num_rows, -1)


def check(out, paths):
    ids, idx, vecs, failed = expected(paths)
    t, v = read_parquet(out)
    assert t.schema.field("custom_id").type == pa.string()
    assert t.schema.field("index").type == pa.int32()
    assert t.schema.field("embedding").type == pa.list_(pa.float32())
    assert t.column("custom_id").to_pylist() == ids  # every row once
    assert t.column("index").to_pylist() == idx
    assert np.array_equal(v.view(np.uint32), vecs.view(np.uint32))  # bit for bit
    got = [json.loads(x) for x in Path(out, "_failed").read_text(encoding="utf-8").splitlines()]
    assert got == failed  # custom_id, line, file, status_code, code, message as --failed
    return got


