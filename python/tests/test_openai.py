"""OpenAI-compatible responses through the binding, against oracles that do not use
embd: openai-python's and vLLM's decode rules transcribed (oracles.py), numpy and the
dtype definitions, exact rationals for float text."""
import base64
import json
import random

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import embd
import oracles

WIRE = {"f32": ("<f4", 4), "f16": ("<f2", 2), "bf16": ("<u2", 2), "fp8-e4m3": ("u1", 1),
        "fp8-e5m2": ("u1", 1)}


def body_of(items, **extra):
    d = {"object": "list", "data": items, "model": "text-embedding-3-small",
         "usage": {"prompt_tokens": 5, "total_tokens": 5}}
    d.update(extra)
    return json.dumps(d).encode()


def b64_items(rows, order=None):
    idx = list(range(len(rows)))
    if order is not None:
        idx = order
    return [{"object": "embedding", "index": i, "embedding": base64.b64encode(rows[i]).decode()}
            for i in idx]


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 12), st.integers(1, 300), st.randoms(use_true_random=False))
def test_base64_body_is_openai_pythons_decode(count, dims, rnd):
    rng = np.random.default_rng(rnd.randint(0, 2**32))
    vecs = rng.standard_normal((count, dims)).astype(np.float32)
    order = list(range(count))
    rnd.shuffle(order)
    body = body_of(b64_items([v.tobytes() for v in vecs], order))
    got = embd.decode_openai(body)
    assert got.shape == (count, dims if count else 0) or (count == 0 and got.shape[0] == 0)
    if count:
        want = oracles.openai_python_decode(body)
        assert got.dtype == np.float32
        assert np.array_equal(got.view(np.uint32), want.view(np.uint32))


def test_input_types_and_response():
    vecs = np.arange(12, dtype=np.float32).reshape(3, 4)
    body = body_of(b64_items([v.tobytes() for v in vecs]))
    for b in (body, bytearray(body), memoryview(body), body.decode(), np.frombuffer(body, np.uint8)):
        assert np.array_equal(embd.decode_openai(b), vecs)
    r = embd.decode_openai_response(body)
    assert (r.model, r.prompt_tokens, r.total_tokens, r.model_truncated) == \
        ("text-embedding-3-small", 5, 5, False)
    r = embd.decode_openai_response(json.dumps({"data": []}))
    assert r.vectors.shape == (0, 0) and r.model == "" and r.prompt_tokens is None
    assert "OpenAIResponse" in repr(r)
    with pytest.raises(TypeError):
        embd.decode_openai(12345)
    with pytest.raises(TypeError):
        embd.decode_openai(body, dims="3")


def _decimal_texts():
    digits = st.text("0123456789", min_size=1, max_size=30)
    return st.builds(lambda s, i, f, e: "%s%s%s%s" % ("-" if s else "", str(int(i)), ("." + f) if f else "",
                                                     ("e%d" % e) if e is not None else ""),
                     st.booleans(), digits, st.one_of(st.just(""), digits),
                     st.one_of(st.none(), st.integers(-45, 38)))


@settings(max_examples=60, deadline=None)
@given(st.lists(_decimal_texts(), min_size=1, max_size=20))
def test_float_text_rounds_once_to_nearest(texts):
    wants = []
    for t in texts:
        try:
            w = oracles.nearest_f32(t)
        except OverflowError:
            return
        if not np.isfinite(w):
            return
        wants.append(w)
    body = '{"data":[{"index":0,"embedding":[%s]}]}' % ",".join(texts)
    got = embd.decode_openai(body)[0]
    assert np.array_equal(got.view(np.uint32), np.array(wants, dtype=np.float32).view(np.uint32)), texts


def test_float_text_known_double_rounding_case():
    # np.float32(json's double) rounds twice here; the nearest float32 is one ulp lower.
    got = embd.decode_openai('{"data":[{"index":0,"embedding":[7.038531e-26]}]}')[0, 0]
    assert got == oracles.nearest_f32("7.038531e-26")
    assert np.array(got).view(np.uint32) == 0x15AE43FD


@pytest.mark.parametrize("dtype", list(WIRE))
@pytest.mark.parametrize("order", ["little", "big"])
def test_base64_dtypes_and_byte_orders(dtype, order):
    rng = np.random.default_rng(3)
    np_t, size = WIRE[dtype]
    e = ">" if order == "big" and size > 1 else "<"
    if dtype == "f32":
        rows = [rng.standard_normal(64).astype(e + "f4").tobytes() for _ in range(5)]
    elif size == 2:
        rows = [rng.integers(0, 2**16, 64, dtype=np.uint16).astype(e + "u2").tobytes() for _ in range(5)]
    else:
        rows = [rng.integers(0, 256, 64, dtype=np.uint8).tobytes() for _ in range(5)]
    body = body_of(b64_items(rows))
    got = embd.decode_openai(body, dtype=dtype, byte_order=order)
    want = np.array([oracles.to_f32(r, dtype, e) for r in rows])
    assert np.array_equal(got, want, equal_nan=True)
    kept = embd.decode_openai(body, dtype=dtype, byte_order=order, keep_dtype=True)
    assert kept.shape[0] == 5 and kept.tobytes() == b"".join(rows)
    if dtype == "f16":
        assert kept.dtype == np.dtype(e + "f2")
        assert np.array_equal(kept.astype(np.float32), want, equal_nan=True)


def test_vllm_and_torch_dtype_names():
    row = np.array([1.5, -2, 0.25], dtype="<f2").tobytes()
    body = body_of(b64_items([row]))
    for name in ("float16", "torch.float16", "half", "f16"):
        assert embd.decode_openai(body, dtype=name).tolist() == [[1.5, -2, 0.25]]
    with pytest.raises(ValueError):
        embd.decode_openai(body, dtype="float64")


def test_integer_and_packed_arrays():
    # Cohere embeddings_by_type: int8, uint8, binary (offset), ubinary lists.
    i8 = [[-128, 0, 5, 127], [1, 2, 3, 4]]
    u8 = [[0, 255, 7, 8], [9, 10, 11, 12]]
    ub = [[0b10110000], [255]]
    bi = [[(0b10110000) - 128], [127]]
    body = json.dumps({"id": "x", "embeddings": {"int8": i8, "uint8": u8, "ubinary": ub, "binary": bi},
                       "texts": ["a", "b"], "response_type": "embeddings_by_type"})
    assert embd.decode_openai(body, dtype="int8").tolist() == i8
    assert embd.decode_openai(body, dtype="int8", keep_dtype=True).dtype == np.int8
    assert embd.decode_openai(body, dtype="uint8").tolist() == u8
    got = embd.decode_openai(body, dtype="ubinary")
    assert got.tolist() == [list(np.unpackbits(np.array(r, np.uint8)).astype(float)) for r in ub]
    kept = embd.decode_openai(body, dtype="ubinary", keep_dtype=True)
    assert kept.dtype == np.uint8 and kept.tolist() == ub
    gotb = embd.decode_openai(body, dtype="binary")
    assert np.array_equal(gotb, np.array([oracles.bits_to_f32(bytes([b & 0xFF]), True)
                                          for b in (0b10110000 - 128, 127)]))
    with pytest.raises(embd.Error) as e:
        embd.decode_openai(body, dtype="f16")
    assert e.value.code == "EMBD_ERR_OPENAI_DTYPE"


def _vllm(rows, dtype, order, shuffle=None):
    body, items, pos = b"", [], 0
    for i, r in enumerate(rows):
        items.append({"index": i, "embed_dtype": dtype, "endianness": order, "start": pos,
                      "end": pos + len(r), "shape": [len(r) // WIRE_BYTES[dtype]]})
        body += r
        pos += len(r)
    if shuffle:
        random.Random(shuffle).shuffle(items)
    meta = json.dumps({"id": "embd-1", "created": 1, "model": "m", "data": items,
                       "usage": {"prompt_tokens": 2, "total_tokens": 2}})
    return body, meta


WIRE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "fp8_e4m3": 1, "fp8_e5m2": 1}


@pytest.mark.parametrize("dtype", list(WIRE_BYTES))
@pytest.mark.parametrize("order", ["little", "big"])
def test_vllm_bytes_against_its_rule(dtype, order):
    rng = np.random.default_rng(4)
    n = WIRE_BYTES[dtype]
    rows = [rng.integers(0, 256, 32 * n, dtype=np.uint8).tobytes() for _ in range(4)]
    if dtype == "float32":  # finite values, so the comparison is bitwise
        rows = [rng.standard_normal(32).astype(">f4" if order == "big" else "<f4").tobytes() for _ in range(4)]
    body, meta = _vllm(rows, dtype, order, shuffle=7)
    got = embd.decode_vllm_bytes(body, meta, dtype=dtype, byte_order=order)
    want = oracles.vllm_bytes_decode(body, meta)
    assert np.array_equal(got, want, equal_nan=True)
    r = embd.decode_vllm_bytes(body, meta.encode(), dtype=dtype, byte_order=order, response=True)
    assert r.model == "m" and r.total_tokens == 2
    only = embd.decode_vllm_bytes_only(body, 32, dtype=dtype, byte_order=order)
    assert np.array_equal(only, np.array([oracles.vllm_bytes_decode(body, meta)[i] for i in range(4)]),
                          equal_nan=True)


def test_vllm_errors():
    rows = [np.ones(8, "<f4").tobytes()] * 2
    body, meta = _vllm(rows, "float32", "little")
    with pytest.raises(embd.Error) as e:
        embd.decode_vllm_bytes(body + b"\0\0\0\0", meta)  # bytes nobody described
    assert e.value.code == "EMBD_ERR_OPENAI_METADATA"
    with pytest.raises(embd.Error) as e:
        embd.decode_vllm_bytes(body, meta, dtype="f16")
    assert e.value.code == "EMBD_ERR_OPENAI_DTYPE"
    with pytest.raises(embd.Error) as e:
        embd.decode_vllm_bytes_only(body[:-1], 8)
    assert e.value.code == "EMBD_ERR_DTYPE_LENGTH" and e.value.offset == 32
    with pytest.raises(TypeError):
        embd.decode_vllm_bytes_only(body, None)


@pytest.mark.parametrize("body,code,offset", [
    (b'{"data":[{"index":0,"embedding":[1,2,]}]}', "EMBD_ERR_OPENAI_JSON", 37),
    (b'{"data":[{"index":0,"embedding":"AAAAAAAAAAA*AAAA"}]}', "EMBD_ERR_BASE64_CHAR", None),
    (b'{"data":[{"index":1,"embedding":[1]}]}', "EMBD_ERR_OPENAI_INDEX", None),
    (b'{"data":[{"index":0,"embedding":[1]},{"index":1,"embedding":[1,2]}]}', "EMBD_ERR_OPENAI_DIMS", None),
    (b'{"data":[{"index":0,"embedding":null}]}', "EMBD_ERR_OPENAI_SHAPE", None),
    (b'{"data":[{"index":0,"embedding":[1e39]}]}', "EMBD_ERR_OPENAI_SHAPE", None),
    (b'{"data":[{"index":0,"embedding":[1]}]', "EMBD_ERR_OPENAI_JSON", 37),
    (b'{"data":[{"index":0,"embedding":"AAAAAAAA"}]}', "EMBD_ERR_BASE64_F32_LENGTH", None),
])
def test_errors_have_code_and_offset(body, code, offset):
    with pytest.raises(embd.Error) as e:
        embd.decode_openai(body)
    assert e.value.code == code, str(e.value)
    assert isinstance(e.value.offset, int) and 0 <= e.value.offset <= len(body)
    if offset is not None:
        assert e.value.offset == offset
    assert str(e.value)  # the C message


def test_dims_and_count_expected():
    body = body_of(b64_items([np.ones(4, np.float32).tobytes()] * 2))
    assert embd.decode_openai(body, dims=4, count=2).shape == (2, 4)
    with pytest.raises(embd.Error) as e:
        embd.decode_openai(body, dims=5)
    assert e.value.code == "EMBD_ERR_OPENAI_DIMS"
    with pytest.raises(embd.Error) as e:
        embd.decode_openai(body, count=3)
    assert e.value.code == "EMBD_ERR_OPENAI_COUNT"
    with pytest.raises(ValueError):
        embd.decode_openai(body, dims=-1)


def test_decode_response_negotiates():
    vecs = np.arange(8, dtype=np.float32).reshape(2, 4)
    body = body_of(b64_items([v.tobytes() for v in vecs]))
    assert np.array_equal(embd.decode_response(body, "application/json; charset=utf-8"), vecs)
    batch = embd.encode_batch(vecs)
    assert np.array_equal(embd.decode_response(batch, "application/octet-stream"), vecs)
    frame = embd.encode_frame(vecs[0])
    assert np.array_equal(embd.decode_response(frame, "Application/Octet-Stream"), vecs[:1])
    with pytest.raises(embd.Error) as e:
        embd.decode_response(body, "text/plain")
    assert e.value.code == "EMBD_ERR_INVALID_ARGUMENT" and "text/plain" in str(e.value)
    with pytest.raises(embd.Error) as e:
        embd.decode_response(body, "application/octet-stream")
    assert e.value.code.startswith("EMBD_ERR_BATCH")
