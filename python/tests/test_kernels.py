"""The kernels through the binding: CRC-32, base64, dtype conversions, byte swap."""
import base64
import zlib

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import embd
import oracles

DTYPES = ["f32", "f16", "bf16", "fp8-e4m3", "fp8-e5m2", "int8", "uint8", "binary", "ubinary"]


@given(st.binary(max_size=5000), st.integers(0, 2**32 - 1))
def test_crc32_is_zlibs(data, crc):
    assert embd.crc32(data) == zlib.crc32(data)
    assert embd.crc32(data, crc) == zlib.crc32(data, crc)


def test_crc32_inputs():
    data = bytes(range(256)) * 40
    want = zlib.crc32(data)
    for obj in (data, bytearray(data), memoryview(data), np.frombuffer(data, np.uint8)):
        assert embd.crc32(obj) == want
    assert embd.crc32("abc") == zlib.crc32(b"abc")  # str: its UTF-8
    with pytest.raises(TypeError):
        embd.crc32(12)
    with pytest.raises(TypeError):  # not contiguous
        embd.crc32(np.arange(10, dtype=np.uint8)[::2])
    with pytest.raises(ValueError):
        embd.crc32(b"", 2**32)


@given(st.binary(max_size=3000))
def test_base64_round_trip_against_stdlib(data):
    enc = embd.b64encode(data)
    assert enc == base64.b64encode(data)
    assert embd.b64decode(enc) == base64.b64decode(enc, validate=True) == data
    assert embd.b64encode(data, url=True) == base64.urlsafe_b64encode(data)
    assert embd.b64decode(base64.urlsafe_b64encode(data), url=True) == data
    nopad = base64.b64encode(data).rstrip(b"=")
    assert embd.b64encode(data, pad=False) == nopad
    assert embd.b64decode(nopad, pad=False) == data


@pytest.mark.parametrize("text,code,offset", [
    ("AB*=", "EMBD_ERR_BASE64_CHAR", 2),
    ("AAA", "EMBD_ERR_BASE64_LENGTH", None),
    ("AA=A", "EMBD_ERR_BASE64_PADDING", None),
    ("AAB=", "EMBD_ERR_BASE64_TRAILING_BITS", None),
    ("AAAA\nAAA", "EMBD_ERR_BASE64_CHAR", 4),
])
def test_base64_errors(text, code, offset):
    with pytest.raises(embd.Error) as e:
        embd.b64decode(text)
    assert e.value.code == code
    assert isinstance(e.value, ValueError)
    assert isinstance(e.value.offset, int)
    if offset is not None:
        assert e.value.offset == offset


def test_base64_out():
    data = bytes(range(200))
    out = bytearray(400)
    n = embd.b64encode(data, out=out)
    assert bytes(out[:n]) == base64.b64encode(data)
    back = bytearray(300)
    m = embd.b64decode(bytes(out[:n]), out=back)
    assert bytes(back[:m]) == data
    with pytest.raises(embd.Error) as e:
        embd.b64encode(data, out=bytearray(10))
    assert e.value.code == "EMBD_ERR_OUTPUT_TOO_SMALL"
    with pytest.raises(TypeError):  # read-only
        embd.b64encode(data, out=bytes(400))


def _wire_bytes(rng, dtype, n):
    if dtype == "f32":
        return rng.standard_normal(n).astype("<f4").tobytes()
    if dtype in ("f16", "bf16"):
        return rng.integers(0, 2**16, n, dtype=np.uint16).astype("<u2").tobytes()
    if dtype in ("binary", "ubinary"):
        return rng.integers(0, 256, n // 8, dtype=np.uint8).tobytes()
    return rng.integers(0, 256, n, dtype=np.uint8).tobytes()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("order", ["little", "big"])
def test_to_f32_against_definitions(dtype, order):
    rng = np.random.default_rng(1)
    raw = _wire_bytes(rng, dtype, 1024)
    got = embd.to_f32(raw, dtype, byte_order=order)
    want = oracles.to_f32(raw, dtype, "<" if order == "little" else ">")
    assert got.dtype == np.float32 and got.shape == want.shape
    # NaN payloads are kept bit for bit where the oracle keeps them (f32, bf16); elsewhere
    # compare NaN-ness and every other value exactly.
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    assert np.array_equal(got[~nan].view(np.uint32), want[~nan].view(np.uint32))
    if dtype in ("f32", "bf16"):
        assert np.array_equal(got.view(np.uint32), want.view(np.uint32))


def test_fp8_every_code():
    codes = bytes(range(256))
    for dtype, oracle in (("fp8-e4m3", oracles.fp8_e4m3_to_f32), ("fp8-e5m2", oracles.fp8_e5m2_to_f32)):
        got, want = embd.to_f32(codes, dtype), oracle(codes)
        assert np.array_equal(got, want, equal_nan=True)


def test_from_f32_rounding():
    rng = np.random.default_rng(2)
    bits = rng.integers(0, 2**32, 20000, dtype=np.uint64).astype(np.uint32)
    v = bits.view(np.float32)
    v = v[np.isfinite(v)]
    got = np.frombuffer(embd.from_f32(v, "f16"), dtype="<f2")
    with np.errstate(over="ignore"):
        want = v.astype(np.float16)  # numpy rounds to nearest even (overflow to inf)
    assert np.array_equal(got.view(np.uint16), want.view(np.uint16))
    # bfloat16: round to nearest even on the upper half (finite inputs)
    u = v.view(np.uint32).astype(np.uint64)
    want_bf = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    got_bf = np.frombuffer(embd.from_f32(v, "bf16"), dtype="<u2")
    assert np.array_equal(got_bf, want_bf)
    got_be = np.frombuffer(embd.from_f32(v, "bf16", byte_order="big"), dtype=">u2")
    assert np.array_equal(got_be, want_bf)


def test_from_f32_exact_types():
    assert embd.from_f32([1, -128, 127], "int8") == bytes([1, 0x80, 0x7F])
    with pytest.raises(embd.Error) as e:
        embd.from_f32([1, 2.5, 3], "int8")
    assert e.value.code == "EMBD_ERR_DTYPE_RANGE" and e.value.offset == 1
    with pytest.raises(embd.Error) as e:
        embd.from_f32([1.0] * 7, "ubinary")
    assert e.value.code == "EMBD_ERR_DTYPE_LENGTH"
    v = np.array([1, -1, 0, 2, -3, 0.5, np.nan, 4], dtype=np.float32)
    assert embd.from_f32(v, "ubinary") == np.packbits(v > 0).tobytes()


def test_to_f32_errors_and_out():
    with pytest.raises(embd.Error) as e:
        embd.to_f32(b"\x00" * 3, "f16")
    assert e.value.code == "EMBD_ERR_DTYPE_LENGTH" and e.value.offset == 2
    out = np.zeros(4, dtype=np.float32)
    assert embd.to_f32(np.array([1, 2, 3, 4], dtype="<f2").tobytes(), "float16", out=out) == 4
    assert out.tolist() == [1, 2, 3, 4]
    with pytest.raises(embd.Error) as e:
        embd.to_f32(b"\x00" * 10, "f16", out=np.zeros(2, np.float32))
    assert e.value.code == "EMBD_ERR_OUTPUT_TOO_SMALL"
    with pytest.raises(ValueError):
        embd.to_f32(b"", "f64")
    with pytest.raises(ValueError):
        embd.to_f32(b"", "f16", byte_order="middle")
    for name in ("float16", "half", "torch.float16", np.float16):
        assert embd.to_f32(np.array([1.5], "<f2").tobytes(), name).tolist() == [1.5]


@given(st.lists(st.integers(0, 2**32 - 1), max_size=300))
def test_bswap32_against_numpy(words):
    a = np.array(words, dtype="<u4")
    assert embd.bswap32(a) == a.byteswap().tobytes()


def test_bswap32_in_place_and_errors():
    a = np.arange(100, dtype="<u4")
    b = bytearray(a.tobytes())
    assert embd.bswap32(b, out=b) == 400
    assert bytes(b) == a.byteswap().tobytes()
    with pytest.raises(embd.Error) as e:
        embd.bswap32(b"12345")
    assert e.value.code == "EMBD_ERR_DTYPE_LENGTH"
    mv = memoryview(bytearray(404))
    with pytest.raises(ValueError):
        embd.bswap32(mv[4:], out=mv[:400])


def test_cpu_and_version():
    c = embd.cpu()
    assert set(c) >= {"features", "enabled", "kernels", "version"}
    assert set(c["kernels"]) == {"crc32", "bswap32", "base64-decode", "base64-encode", "convert",
                                 "convert-encode"}
    assert c["version"] == embd.__version__
    # The version is the C library's: include/embd/common.h in this checkout.
    import pathlib
    import re
    h = (pathlib.Path(__file__).resolve().parents[2] / "include" / "embd" / "common.h").read_text()
    assert embd.__version__ == re.search(r'#define EMBD_VERSION_STRING "([^"]+)"', h).group(1)
