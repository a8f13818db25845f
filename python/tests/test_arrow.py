"""Arrow output (embd.decode_openai_arrow, decode_openai_batch(arrow=True)) through libembd's
Arrow C Data Interface export: types and values against numpy (the bodies are written here
from numpy arrays), the value buffer that pyarrow holds is the one libembd exported (no
copy), pyarrow imported only when asked. pyarrow comes from python/requirements-engines.lock
(scripts/test-python.sh installs it); without it these tests skip loudly."""
import base64
import gc
import json
import subprocess
import sys

import numpy as np
import pytest

import embd
from embd import _embd

pa = pytest.importorskip("pyarrow", reason="pyarrow not installed (python/requirements-engines.lock; "
                                           "scripts/test-python.sh installs it)")


def body_of(vecs, order=None):
    idx = list(range(len(vecs))) if order is None else order
    return json.dumps({"object": "list", "model": "m",
                       "data": [{"object": "embedding", "index": i,
                                 "embedding": base64.b64encode(np.asarray(vecs[i], "<f4").tobytes()).decode()}
                                for i in idx]})


def bits(a):
    return np.ascontiguousarray(a, np.float32).view(np.uint32)


def test_decode_openai_arrow_values_and_type():
    rng = np.random.default_rng(7)
    v = rng.standard_normal((9, 24)).astype(np.float32)
    v[0, 0], v[1, 1], v[2, 2] = -0.0, np.float32(1e-45), np.inf  # -0, a subnormal, inf: bits kept
    arr = embd.decode_openai_arrow(body_of(v, order=[3, 1, 8, 0, 2, 7, 5, 4, 6]))
    assert isinstance(arr, pa.FixedSizeListArray)
    assert arr.type == pa.list_(pa.float32(), 24)
    assert len(arr) == 9 and arr.null_count == 0 and arr.offset == 0
    flat = arr.values.to_numpy(zero_copy_only=True)
    assert np.array_equal(bits(flat.reshape(9, 24)), bits(v))
    arr.validate(full=True)


def test_decode_openai_arrow_float_arrays_and_options():
    # JSON number arrays: each number's nearest float32 (numpy's float32 of the same text
    # agrees on these short texts)
    body = '{"data":[{"index":1,"embedding":[0.5,-2.25,3]},{"index":0,"embedding":[1e-3,7,8.5]}]}'
    arr = embd.decode_openai_arrow(body, dims=3, count=2)
    assert arr.to_pylist() == [list(np.float32([1e-3, 7, 8.5])), list(np.float32([0.5, -2.25, 3]))]
    with pytest.raises(embd.Error) as e:
        embd.decode_openai_arrow(body, dims=4)
    assert e.value.code == "EMBD_ERR_OPENAI_DIMS"
    with pytest.raises(embd.Error) as e:
        embd.decode_openai_arrow('{"data":[{"index":0,"embedding":"AB*="}]}')
    assert e.value.code.startswith("EMBD_ERR_BASE64")
    # dtype as decode_openai: f16 base64 in big-endian
    h = np.float16([1.5, -2, 0.25])
    b = json.dumps({"data": [{"index": 0, "embedding": base64.b64encode(h.astype(">f2").tobytes()).decode()}]})
    arr = embd.decode_openai_arrow(b, dtype="float16", byte_order="big")
    assert np.array_equal(arr.values.to_numpy(), h.astype(np.float32))
    # empty data[]
    arr = embd.decode_openai_arrow('{"data":[]}')
    assert len(arr) == 0


def test_no_copy_decode_openai_arrow():
    v = np.arange(4 * 1536, dtype=np.float32).reshape(4, 1536)
    caps = _embd.openai_decode_arrow(body_of(v), 0, 0, 0, 0)
    exported = _embd.arrow_values_address(caps[1])
    arr = pa.Array._import_from_c_capsule(*caps)
    # the values pyarrow holds are the very bytes libembd decoded into
    assert arr.values.buffers()[1].address == exported
    assert arr.values.to_numpy(zero_copy_only=True).__array_interface__["data"][0] == exported
    assert np.array_equal(arr.values.to_numpy().reshape(4, 1536), v)
    # the public function takes the same road
    arr2 = embd.decode_openai_arrow(body_of(v))
    assert arr2.values.buffers()[1].address % 16 == 0


def test_capsules_never_imported_are_released():
    v = np.ones((2, 8), np.float32)
    for _ in range(200):  # each pair releases its structs and storage when collected
        caps = _embd.openai_decode_arrow(body_of(v), 0, 0, 0, 0)
        del caps
    b = _embd.ArrowBatch()
    b.add(b"x", v, 2, 8)
    caps = b.export()
    assert b.rows == 0
    with pytest.raises(ValueError):
        _embd.arrow_values_address(caps[0].__class__)  # not a capsule
    del caps
    gc.collect()


def ok_line(cid, vecs):
    body = json.loads(body_of(vecs))
    return json.dumps({"id": "b", "custom_id": cid, "response": {"status_code": 200, "body": body},
                       "error": None}, ensure_ascii=False).encode() + b"\n"


def fail_line(cid):
    return json.dumps({"id": "b", "custom_id": cid, "response": None,
                       "error": {"code": "batch_expired", "message": "expired"}}).encode() + b"\n"


def test_decode_openai_batch_arrow(tmp_path):
    rng = np.random.default_rng(3)
    reqs = {"doc-\t1": rng.standard_normal((3, 16)).astype(np.float32),
            "doc\\2": rng.standard_normal((1, 16)).astype(np.float32),
            "dóc-3 ✓": rng.standard_normal((4, 16)).astype(np.float32)}
    out = tmp_path / "out.jsonl"
    out.write_bytes(b"".join(ok_line(c, v) for c, v in reqs.items()) + fail_line("late") + fail_line("gone"))
    retry = tmp_path / "retry.jsonl"
    late = rng.standard_normal((2, 16)).astype(np.float32)
    retry.write_bytes(ok_line("late", late))
    rb = embd.decode_openai_batch([out, retry], arrow=True)
    assert isinstance(rb, pa.RecordBatch)
    assert rb.schema.names == ["custom_id", "index", "embedding"]
    assert rb.schema.field("custom_id").type == pa.string()
    assert rb.schema.field("index").type == pa.int32()
    assert rb.schema.field("embedding").type == pa.list_(pa.float32(), 16)
    want_ids, want_idx, want_v = [], [], []
    for c, v in list(reqs.items()) + [("late", late)]:
        want_ids += [c] * len(v)
        want_idx += list(range(len(v)))
        want_v.append(v)
    assert rb.column("custom_id").to_pylist() == want_ids
    assert rb.column("index").to_pylist() == want_idx
    got = rb.column("embedding").values.to_numpy(zero_copy_only=True).reshape(-1, 16)
    assert np.array_equal(bits(got), bits(np.vstack(want_v)))
    failed = json.loads(rb.schema.metadata[b"embd:failed"])
    assert [f["custom_id"] for f in failed] == ["gone"]
    assert failed[0]["code"] == "batch_expired" and failed[0]["line"] == 5
    rb.validate(full=True)
    # the same rows as the numpy form
    r = embd.decode_openai_batch([out, retry])
    assert r.custom_ids == want_ids and np.array_equal(bits(r.vectors), bits(got))
    # a duplicate is still an error; keep_dtype is refused
    with pytest.raises(embd.Error):
        embd.decode_openai_batch([out, out], arrow=True)
    with pytest.raises(ValueError):
        embd.decode_openai_batch(out, arrow=True, keep_dtype=True)
    # an empty file: an empty batch
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    assert embd.decode_openai_batch(empty, arrow=True).num_rows == 0


def test_arrow_batch_builder_no_copy_and_errors():
    b = _embd.ArrowBatch()
    v = np.arange(12, dtype=np.float32).reshape(3, 4)
    b.reserve(3, 3, 4)
    b.add("é".encode(), v, 3, 4, 5)
    with pytest.raises(embd.Error) as e:
        b.add(b"y", v, 1, 3)
    assert e.value.code == "EMBD_ERR_OPENAI_DIMS"
    with pytest.raises(ValueError):
        b.add(b"y", v[:1], 2, 4)  # the buffer is too short for 2 rows
    caps = b.export()
    addr = _embd.arrow_values_address(caps[1])
    rb = pa.RecordBatch._import_from_c_capsule(*caps)
    assert rb.column("embedding").values.buffers()[1].address == addr
    assert rb.column("index").to_pylist() == [5, 6, 7]
    assert rb.column("custom_id").to_pylist() == ["é"] * 3


def test_pyarrow_only_when_asked():
    code = ("import sys, embd; embd.decode_openai('{\"data\":[]}');"
            "embd.decode_openai_batch([]); assert 'pyarrow' not in sys.modules, 'imported'")
    subprocess.run([sys.executable, "-c", code], check=True)
    # without pyarrow: a clear message saying how to install it
    code = ("import sys; sys.modules['pyarrow'] = None\n"
            "import embd\n"
            "try:\n    embd.decode_openai_arrow('{\"data\":[]}')\n"
            "except ImportError as e:\n    assert 'pip install pyarrow' in str(e), e; print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.strip() == "ok"


def test_decode_openai_batch_lines_arrow():
    rng = np.random.default_rng(11)
    va, vb = rng.standard_normal((2, 8)).astype(np.float32), rng.standard_normal((3, 8)).astype(np.float32)
    lines = [ok_line("a", va).decode().rstrip("\n"), "", fail_line("x").decode().rstrip("\n"),
             ok_line("b", vb).decode().rstrip("\n")]
    for col in (pa.array(lines), pa.array(lines, pa.large_string()),
                pa.chunked_array([pa.array(lines[:2]), pa.array(lines[2:])]), pa.array(lines).slice(0)):
        rb, failed = embd.decode_openai_batch_lines_arrow(col)
        assert rb.column("custom_id").to_pylist() == ["a"] * 2 + ["b"] * 3
        assert rb.column("index").to_pylist() == [0, 1, 0, 1, 2]
        got = rb.column("embedding").values.to_numpy().reshape(-1, 8)
        assert np.array_equal(bits(got), bits(np.vstack([va, vb])))
        assert [(f["custom_id"], f["pos"], f["code"]) for f in failed] == [("x", 2, "batch_expired")]
    # a slice keeps its positions relative to the slice
    rb, failed = embd.decode_openai_batch_lines_arrow(pa.array(lines).slice(2))
    assert failed[0]["pos"] == 0 and rb.num_rows == 3
    with pytest.raises(embd.Error) as e:
        embd.decode_openai_batch_lines_arrow(pa.array([lines[0], '{"custom_id": "c", "response": {']))
    assert e.value.pos == 1
    with pytest.raises(TypeError):
        embd.decode_openai_batch_lines_arrow(pa.array([1, 2]))
