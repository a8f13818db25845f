"""Batch output files (OpenAI Batch API / vLLM run_batch) through embd.decode_openai_batch,
built from the documented line shapes; values against numpy, ids and failures against what
the test wrote."""
import base64
import json

import numpy as np
import pytest

import embd


def ok_line(cid, vecs, order=None, key_order=0, dtype="<f4"):
    idx = list(range(len(vecs))) if order is None else order
    body = {"object": "list", "model": "m", "usage": {"prompt_tokens": 1, "total_tokens": 1},
            "data": [{"object": "embedding", "index": i,
                      "embedding": base64.b64encode(np.asarray(vecs[i], dtype).tobytes()).decode()} for i in idx]}
    resp = {"status_code": 200, "request_id": "req_1", "body": body}
    parts = [("id", "batch_req_" + str(abs(hash(cid)))), ("custom_id", cid), ("response", resp), ("error", None)]
    if key_order:
        parts.reverse()
    return json.dumps(dict(parts), ensure_ascii=False).encode() + b"\n"


def fail_line(cid, status=400, expired=False):
    if expired:
        d = {"id": "x", "custom_id": cid, "response": None,
             "error": {"code": "batch_expired", "message": "This request could not be executed"}}
    else:
        d = {"id": "x", "custom_id": cid, "response": {"status_code": status, "request_id": "r",
             "body": {"error": {"message": "bad input", "type": "invalid_request_error", "param": None,
                                "code": "context_length_exceeded"}}}, "error": None}
    return json.dumps(d).encode() + b"\n"


def test_batch_file_end_to_end(tmp_path):
    rng = np.random.default_rng(1)
    reqs = {"doc-\t1": rng.standard_normal((3, 8)).astype(np.float32),
            "doc\\2": rng.standard_normal((2, 8)).astype(np.float32),
            "dóc-3 ✓": rng.standard_normal((4, 8)).astype(np.float32)}
    out = tmp_path / "out.jsonl"
    lines = [ok_line("doc-\t1", reqs["doc-\t1"], order=[2, 0, 1]),
             fail_line("doc-4"),
             ok_line("doc\\2", reqs["doc\\2"], key_order=1),
             fail_line("doc-5", expired=True),
             ok_line("dóc-3 ✓", reqs["dóc-3 ✓"])]
    out.write_bytes(b"".join(lines))
    retry = tmp_path / "retry.jsonl"
    v4 = rng.standard_normal((1, 8)).astype(np.float32)
    retry.write_bytes(ok_line("doc-4", v4))
    r = embd.decode_openai_batch([str(out), str(retry)])
    want = np.concatenate([reqs["doc-\t1"], reqs["doc\\2"], reqs["dóc-3 ✓"], v4])
    assert np.array_equal(r.vectors, want)
    assert r.custom_ids == ["doc-\t1"] * 3 + ["doc\\2"] * 2 + ["dóc-3 ✓"] * 4 + ["doc-4"]
    assert r.index.tolist() == [0, 1, 2, 0, 1, 0, 1, 2, 3, 0]
    assert r.failed == [{"custom_id": "doc-5", "line": 4, "file": str(out), "status_code": None,
                         "code": "batch_expired", "message": "This request could not be executed"}]
    r1 = embd.decode_openai_batch(str(out))
    assert [f["custom_id"] for f in r1.failed] == ["doc-4", "doc-5"]
    assert r1.failed[0]["status_code"] == 400 and r1.failed[0]["code"] == "context_length_exceeded"
    # small read pieces: lines longer than a piece
    got = list(embd.iter_openai_batch(str(out), chunk=50))
    assert [g[0] for g in got] == ["doc-\t1", "doc-4", "doc\\2", "doc-5", "dóc-3 ✓"]
    with open(out, "rb") as f:
        assert np.array_equal(embd.decode_openai_batch(f).vectors, want[:9])


def test_dtypes_and_errors(tmp_path):
    v = np.array([[1.5, -2, 0.25, 8]], np.float32)
    p = tmp_path / "h.jsonl"
    p.write_bytes(ok_line("a", v, dtype=">f2"))
    assert np.array_equal(embd.decode_openai_batch(str(p), dtype="float16", byte_order="big").vectors, v)
    kept = embd.decode_openai_batch(str(p), dtype="float16", byte_order="big", keep_dtype=True).vectors
    assert kept.dtype == np.dtype(">f2") and np.array_equal(kept.astype(np.float32), v)
    dup = tmp_path / "dup.jsonl"
    dup.write_bytes(ok_line("a", v) + ok_line("a", v))
    with pytest.raises(embd.Error) as e:
        embd.decode_openai_batch(str(dup))
    assert "twice" in str(e.value)
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(ok_line("a", v) + ok_line("b", v)[:-20] + b"\n")
    with pytest.raises(embd.Error) as e:
        embd.decode_openai_batch(str(cut))
    assert e.value.code == "EMBD_ERR_OPENAI_JSON" and "line 2" in str(e.value)
    assert e.value.line == 2 and isinstance(e.value.offset, int)
    notbatch = tmp_path / "body.json"
    notbatch.write_bytes(b'{"data":[{"index":0,"embedding":[1]}]}\n')
    with pytest.raises(embd.Error) as e:
        embd.decode_openai_batch(str(notbatch))
    assert e.value.code == "EMBD_ERR_OPENAI_SHAPE" and "custom_id" in str(e.value)
    assert embd._embd.is_batch_line(ok_line("a", v)) and not embd._embd.is_batch_line(b'{"data":[]}')
