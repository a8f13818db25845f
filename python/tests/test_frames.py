"""EMBD frames, batches and the stream decoder through the binding, checked against the
documented byte layout (oracles.seed_frame), numpy, and the seed's own TypeScript codec
(tests/interop/seed_codec.mjs, run by node) both ways."""
import json
import os
import shutil
import struct
import subprocess
import zlib

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import embd
import oracles

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SEED = os.path.join(ROOT, "tests", "interop", "seed_codec.mjs")


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 700), st.integers(0, 2**32 - 1))
def test_float32_frame_is_the_documented_layout(dims, seed):
    v = np.random.default_rng(seed).standard_normal(dims).astype(np.float32)
    f = embd.encode_frame(v)
    assert f == oracles.seed_frame(v)
    got = embd.decode_frame(f)
    assert got.dtype == np.float32 and np.array_equal(got.view(np.uint32), v.view(np.uint32))
    view = embd.frame_view(f)
    assert not view.flags.writeable and np.array_equal(view, v)


def test_float64_input_rounds_like_setfloat32():
    v = np.array([0.1, 1 / 3, 1e-40, -2.5, 3.4e38], dtype=np.float64)
    got = embd.decode_frame(embd.encode_frame(v))
    assert np.array_equal(got, v.astype(np.float32))


@pytest.mark.parametrize("dtype", ["f16", "bf16", "fp8-e4m3", "fp8-e5m2", "int8", "uint8", "ubinary", "binary"])
def test_v2_dtype_frames(dtype):
    v = np.array([0, 1, -2, 3, 4, -5, 6, 7] * 4, dtype=np.float32)
    if dtype == "uint8":
        v = np.abs(v)
    f = embd.encode_frame(v, dtype=dtype, payload_crc=True)
    assert f[4] == 2 and f[6] == embd._dtype(dtype)  # version 2, the dtype code
    raw = f[16:-4]
    assert struct.unpack("<I", f[-4:])[0] == zlib.crc32(f[16:-4])
    want = oracles.to_f32(raw, dtype)
    assert np.array_equal(embd.decode_frame(f), want)
    kept = embd.decode_frame(f, keep_dtype=True)
    assert kept.tobytes() == raw
    # the kept array goes back in as it is (no conversion): the same frame
    assert embd.encode_frame(kept, dtype=dtype, payload_crc=True) == f
    assert embd.frame_view(f).tobytes() == raw


def test_compressed_frames():
    v = np.zeros(1536, np.float32)
    v[::100] = 1
    f = embd.encode_frame(v, compress=True, level=9, payload_crc=True)
    assert len(f) < 1536 * 4 // 4
    (clen,) = struct.unpack("<I", f[16:20])
    assert zlib.decompress(f[20:20 + clen]) == v.tobytes()  # the stdlib inflates it
    assert np.array_equal(embd.decode_frame(f), v)
    view = embd.frame_view(f)  # no view of a compressed payload: a decoded copy
    assert np.array_equal(view, v)


def test_frame_errors():
    f = bytearray(embd.encode_frame(np.ones(4, np.float32)))
    cases = {
        "EMBD_ERR_FRAME_TOO_SMALL": bytes(f[:10]),
        "EMBD_ERR_FRAME_BAD_MAGIC": b"EMBX" + bytes(f[4:]),
        "EMBD_ERR_FRAME_TRUNCATED": bytes(f[:-1]),
        "EMBD_ERR_FRAME_TRAILING": bytes(f) + b"\0",
    }
    bad_crc = bytearray(f)
    bad_crc[12] ^= 1
    cases["EMBD_ERR_FRAME_HEADER_CRC"] = bytes(bad_crc)
    for code, data in cases.items():
        with pytest.raises(embd.Error) as e:
            embd.decode_frame(data)
        assert e.value.code == code, (code, str(e.value))
        assert isinstance(e.value.offset, int)
        with pytest.raises(embd.Error):
            embd.frame_view(data)
    with pytest.raises(embd.Error) as e:
        embd.decode_frame(bytes(f), dims=5)
    assert e.value.code == "EMBD_ERR_FRAME_DIMS_MISMATCH"
    with pytest.raises(embd.Error) as e:
        embd.decode_frame(bytes(f), max_dims=3)
    assert e.value.code == "EMBD_ERR_FRAME_DIMS_TOO_LARGE"
    with pytest.raises(embd.Error) as e:
        embd.encode_frame([1.5], dtype="int8")
    assert e.value.code == "EMBD_ERR_DTYPE_RANGE"


def test_batches():
    rng = np.random.default_rng(5)
    m = rng.standard_normal((7, 33)).astype(np.float32)
    b = embd.encode_batch(m, payload_crc=True)
    assert struct.unpack("<I", b[:4])[0] == 7
    assert np.array_equal(embd.decode_batch(b), m)
    assert np.array_equal(embd.decode_batch(b, dims=33), m)
    assert [x.tolist() for x in embd.iter_batch(b)] == m.tolist()
    # frames of their own dims
    parts = [rng.standard_normal(d).astype(np.float32) for d in (3, 0, 10)]
    mixed = embd.encode_batch(parts, compress=True)
    assert [x.tolist() for x in embd.iter_batch(mixed)] == [p.tolist() for p in parts]
    with pytest.raises(embd.Error) as e:
        embd.decode_batch(mixed)
    assert e.value.code == "EMBD_ERR_FRAME_DIMS_MISMATCH" and "frame 1" in str(e.value)
    assert e.value.offset == 4 + 16 + 4 + (len(embd.encode_frame(parts[0], compress=True)) - 20)
    empty = embd.encode_batch(np.zeros((0, 4), np.float32))
    assert empty == b"\0\0\0\0" and embd.decode_batch(empty).shape[0] == 0
    with pytest.raises(embd.Error) as e:
        embd.decode_batch(b[:-1])
    assert e.value.code == "EMBD_ERR_FRAME_TRUNCATED"
    with pytest.raises(embd.Error) as e:
        list(embd.iter_batch(b + b"x"))
    assert e.value.code == "EMBD_ERR_BATCH_TRAILING"
    with pytest.raises(TypeError):
        embd.encode_batch([np.ones(3, np.float16), np.ones(3, np.float32)], dtype="f16")


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 300), min_size=1, max_size=6), st.integers(1, 5000),
       st.booleans(), st.booleans())
def test_stream_any_chunking(dims_list, chunk, compress, crc):
    rng = np.random.default_rng(sum(dims_list))
    parts = [rng.standard_normal(d).astype(np.float32) for d in dims_list]
    b = embd.encode_batch(parts, compress=compress, payload_crc=crc)
    dec = embd.StreamDecoder(max_dims=300, batch=True)
    got = []
    for i in range(0, len(b), chunk):
        got += dec.feed(b[i:i + chunk])
    dec.finish()
    assert [g.tolist() for g in got] == [p.tolist() for p in parts]
    assert dec.frames == len(parts) and dec.offset == len(b)


def test_stream_into_out():
    m = np.arange(5 * 16, dtype=np.float32).reshape(5, 16)
    b = embd.encode_batch(m)
    out = np.zeros((5, 16), np.float32)
    dec = embd.StreamDecoder(max_dims=16, batch=True, out=out)
    rows = []
    for i in range(0, len(b), 7):
        rows += dec.feed(b[i:i + 7])
    dec.finish()
    assert rows == [0, 1, 2, 3, 4] and np.array_equal(out, m)
    small = np.zeros((2, 16), np.float32)
    dec = embd.StreamDecoder(max_dims=16, batch=True, out=small)
    with pytest.raises(embd.Error) as e:
        dec.feed(b)
    assert e.value.code == "EMBD_ERR_OUTPUT_TOO_SMALL" and "frame 2" in str(e.value)
    with pytest.raises(embd.Error):  # sticky
        dec.feed(b"")
    with pytest.raises(ValueError):
        embd.StreamDecoder(max_dims=16, out=np.zeros(16, np.float32))
    with pytest.raises(TypeError):
        embd.StreamDecoder(max_dims=16, out=np.zeros((2, 16), np.float64))
    ro = np.zeros((2, 16), np.float32)
    ro.flags.writeable = False
    with pytest.raises(ValueError):
        embd.StreamDecoder(max_dims=16, out=ro)


def test_stream_errors():
    b = embd.encode_batch(np.ones((3, 8), np.float32))
    dec = embd.StreamDecoder(max_dims=8, batch=True)
    dec.feed(b[:-3])
    with pytest.raises(embd.Error) as e:
        dec.finish()
    assert e.value.code == "EMBD_ERR_FRAME_TRUNCATED" and e.value.offset == len(b) - 3
    dec = embd.StreamDecoder(max_dims=4, batch=True)
    with pytest.raises(embd.Error) as e:
        dec.feed(b)
    assert e.value.code == "EMBD_ERR_FRAME_DIMS_TOO_LARGE" and e.value.offset == 4 + 8  # its dims field
    with pytest.raises(ValueError):
        embd.StreamDecoder(max_dims=0)


NODE = shutil.which("node")


@pytest.mark.skipif(NODE is None, reason="SKIPPED LOUDLY: node not found: the seed codec cannot run")
def test_seed_codec_both_ways(tmp_path):
    rng = np.random.default_rng(6)
    vecs = [rng.standard_normal(d).astype(np.float32) for d in (1, 5, 1536)]
    # embd -> seed: the seed decoder reads embd's frames and batch
    (tmp_path / "single.bin").write_bytes(embd.encode_frame(vecs[2]))
    (tmp_path / "batch.bin").write_bytes(embd.encode_batch(vecs))
    # seed -> embd: the seed encoder writes frames of the same vectors
    (tmp_path / "vecs.json").write_text(json.dumps([[float(x) for x in v] for v in vecs]))
    script = """
import { encodeEmbedding, decodeEmbedding, decodeBatch } from %s;
import { readFileSync, writeFileSync } from 'node:fs';
const dir = process.argv[2];
const ab = (p) => { const b = readFileSync(dir + '/' + p); return b.buffer.slice(b.byteOffset, b.byteOffset + b.length); };
const out = {single: Array.from(new Uint32Array(new Float32Array(decodeEmbedding(ab('single.bin')).vector).buffer)),
             batch: [...decodeBatch(ab('batch.bin'))].map(r => Array.from(new Uint32Array(new Float32Array(r.vector).buffer)))};
writeFileSync(dir + '/decoded.json', JSON.stringify(out));
const vecs = JSON.parse(readFileSync(dir + '/vecs.json'));
vecs.forEach((v, i) => writeFileSync(dir + '/seed' + i + '.bin', Buffer.from(encodeEmbedding(new Float32Array(v)))));
""" % json.dumps(SEED)
    (tmp_path / "drive.mjs").write_text(script)
    subprocess.run([NODE, str(tmp_path / "drive.mjs"), str(tmp_path)], check=True)
    dec = json.loads((tmp_path / "decoded.json").read_text())
    assert dec["single"] == vecs[2].view(np.uint32).tolist()
    assert dec["batch"] == [v.view(np.uint32).tolist() for v in vecs]
    for i, v in enumerate(vecs):
        seed = (tmp_path / ("seed%d.bin" % i)).read_bytes()
        assert seed == embd.encode_frame(v)  # byte for byte
        assert np.array_equal(embd.decode_frame(seed).view(np.uint32), v.view(np.uint32))
